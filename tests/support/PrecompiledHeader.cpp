// The translation unit the test programs' shared precompiled header is built with (tests/CMakeLists.txt,
// medseg_test_pch): LibTorch's, GoogleTest's and nlohmann/json's headers, compiled once for every test
// program that links LibTorch instead of once in each of its sources.
