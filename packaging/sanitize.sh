#!/usr/bin/env bash
# Builds the `asan` preset (AddressSanitizer + UndefinedBehaviorSanitizer, RelWithDebInfo, build/asan)
# and runs the whole test suite under it; any sanitizer report fails the test that triggered it.
#   bash packaging/sanitize.sh [--jobs N] [--no-build] [--leaks] [-- CTEST_ARGS...]
# --leaks also turns on LeakSanitizer, with packaging/sanitizers/lsan.supp hiding the one-off
# allocations of Qt, LibTorch, VTK, ITK and Open MPI. Takes a long time on few cores (a full second
# build of the project; the tests run several times slower than in the release build).
set -euo pipefail

jobs=$(nproc)
build=1
leaks=0
ctest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --leaks) leaks=1; shift ;;
    --) shift; ctest_args=("$@"); break ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "sanitize.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
supp="$here/sanitizers"

# Set before building too: gtest_discover_tests runs every test program at build time.
#  halt_on_error=1       the first report ends the process, so the test fails (UBSan defaults to going on)
#  allocator_may_return_null=1  an impossible allocation throws std::bad_alloc as in the release build,
#                        which the code reports as "out of memory", instead of aborting in ASan
#  detect_leaks          off by default: the libraries' intentional process-lifetime allocations
#                        would drown real leaks (see --leaks)
#  protect_shadow_gap=0  only with an NVIDIA GPU: the CUDA driver maps memory in ASan's shadow gap
asan="halt_on_error=1:abort_on_error=0:allocator_may_return_null=1:check_initialization_order=1"
asan+=":print_summary=1"
[ -e /dev/nvidia0 ] && asan+=":protect_shadow_gap=0"
if [ "$leaks" -eq 1 ]; then
  asan+=":detect_leaks=1"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
else
  asan+=":detect_leaks=0"
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-$asan}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:print_summary=1:suppressions=$supp/ubsan.supp}"
echo "sanitize.sh: ASAN_OPTIONS=$ASAN_OPTIONS"
echo "sanitize.sh: UBSAN_OPTIONS=$UBSAN_OPTIONS"

if [ "$build" -eq 1 ]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
fi
cd build/asan
# Sanitized programs run several times slower: a longer per-test limit than the release preset's.
run=(ctest --output-on-failure -j "$jobs" --timeout 3600 "${ctest_args[@]}")
if command -v xvfb-run >/dev/null; then run=(xvfb-run -a "${run[@]}"); fi
"${run[@]}"
echo "sanitize.sh: the test suite passed under AddressSanitizer + UBSan"
