#pragma once
// Force-included into every source of the fuzz build (the `fuzz` preset's CMAKE_CXX_FLAGS). Debian's
// ITK 5.2 ships a compiler-detection header generated for GCC only, which stops any other compiler
// with "#error Unsupported compiler". Clang 14 is GCC-compatible for every feature that header tests
// in C++17, so it is shown the GCC branch once, as GCC 12, and clang's own identity is restored right
// after; the header's include guard then keeps ITK from reading it again.
#pragma push_macro("__clang__")
#pragma push_macro("__GNUC__")
#pragma push_macro("__GNUC_MINOR__")
#undef __clang__
#undef __GNUC__
#undef __GNUC_MINOR__
#define __GNUC__ 12
#define __GNUC_MINOR__ 2
#if __has_include(<ITK-5.2/itk_compiler_detection.h>)
#include <ITK-5.2/itk_compiler_detection.h>
#endif
#pragma pop_macro("__GNUC_MINOR__")
#pragma pop_macro("__GNUC__")
#pragma pop_macro("__clang__")
