#!/usr/bin/env bash
# Builds MedSeg's libFuzzer harnesses (tests/fuzz, clang with ASan + UBSan, the `fuzz` preset in
# build/fuzz: only the fuzzers and what they link) and runs each for a bounded time over its seed
# corpus tests/fuzz/corpus/<name>/. Exits 1 when any fuzzer finds a crash, a leak, a timeout or a
# sanitizer report; the input is kept as build/fuzz/crashes/<name>/crash-<sha1> (or leak-, timeout-,
# oom-). Once the bug is fixed, copy that file into tests/fuzz/regressions/<name>/: the normal test
# suite replays it from then on (ctest -R FuzzCorpus).
#   bash packaging/run-fuzzers.sh [--seconds N] [--jobs J] [Name ...]
#     --seconds N  run time per fuzzer (default 60)
#     --jobs J     parallel compile jobs for the build (default 1: the fuzz build shares the machine)
#     Name         only these fuzzers: DatasetJson TrainConfig CheckpointMetadata ResultsJournal ImageHeader TorchPickle
# Reproduce one input: build/fuzz/bin/<Name>Fuzzer FILE
set -euo pipefail

seconds=60
jobs=1
selected=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "run-fuzzers.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) selected+=("$1"); shift ;;
  esac
done
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -gt 0 ] || { echo "run-fuzzers.sh: --seconds needs a positive number" >&2; exit 2; }

cd "$(dirname "$0")/.."
# Fuzzer name -> corpus folder (the names in tests/fuzz/FuzzTargets.h).
declare -A corpus=([DatasetJson]=dataset-json [TrainConfig]=train-config [CheckpointMetadata]=checkpoint-metadata [TorchPickle]=torch-pickle
                   [ResultsJournal]=results-journal [ImageHeader]=image-header)
all=(DatasetJson TrainConfig CheckpointMetadata ResultsJournal ImageHeader TorchPickle)
[ ${#selected[@]} -gt 0 ] || selected=("${all[@]}")
for name in "${selected[@]}"; do
  [ -n "${corpus[$name]:-}" ] || { echo "run-fuzzers.sh: no fuzzer '$name' (have: ${all[*]})" >&2; exit 2; }
done

for tool in clang clang++ cmake ninja; do
  command -v "$tool" >/dev/null || { echo "run-fuzzers.sh: $tool not found; run packaging/setup.sh --no-build" >&2; exit 2; }
done
if ! clang++ -fsanitize=fuzzer -x c++ - -o /dev/null 2>/dev/null <<<'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }'; then
  echo "run-fuzzers.sh: clang cannot link libFuzzer; install libclang-rt-14-dev (packaging/setup.sh does)" >&2
  exit 2
fi

# One compile at a time on a shared machine: the build takes the same lock as the main build helpers.
targets=()
for name in "${selected[@]}"; do targets+=(--target "${name}Fuzzer"); done
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
(
  flock 9
  if [ ! -f build/fuzz/CMakeCache.txt ]; then cmake --preset fuzz "${launcher[@]}" >/dev/null; fi
  cmake --build build/fuzz -j "$jobs" "${targets[@]}"
) 9>"${MEDSEG_BUILD_LOCK:-/tmp/medseg-build.lock}"

failed=()
for name in "${selected[@]}"; do
  folder=${corpus[$name]}
  work=build/fuzz/corpus/$folder   # new inputs go here; the committed seeds stay as they are
  crashes=build/fuzz/crashes/$folder
  mkdir -p "$work" "$crashes"
  seeds=("$work" "tests/fuzz/corpus/$folder")
  [ -d "tests/fuzz/regressions/$folder" ] && seeds+=("tests/fuzz/regressions/$folder")
  echo "== $name: ${seconds}s over ${seeds[*]}"
  # -timeout: one input must not take 20 s; -rss_limit_mb: torch alone needs a few hundred MB.
  # detect_leaks=0: ITK's and LibTorch's process-lifetime registries are reported as leaks at exit.
  if ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" UBSAN_OPTIONS="print_stacktrace=1:${UBSAN_OPTIONS:-}" \
      "build/fuzz/bin/${name}Fuzzer" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$crashes/" "${seeds[@]}" > "build/fuzz/$name.log" 2>&1; then
    tail -n 3 "build/fuzz/$name.log" | sed 's/^/   /'
  else
    echo "   FAILED: see build/fuzz/$name.log; inputs kept in $crashes:"
    ls -1 "$crashes" | sed 's/^/     /'
    grep -m 5 -E "ERROR|runtime error|deadly signal|uncaught|terminate" "build/fuzz/$name.log" | sed 's/^/   /' || true
    failed+=("$name")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "run-fuzzers.sh: crashes in ${failed[*]}; reproduce with build/fuzz/bin/<Name>Fuzzer FILE, fix, then keep the" \
       "input in tests/fuzz/regressions/<name>/" >&2
  exit 1
fi
echo "run-fuzzers.sh: ${#selected[@]} fuzzer(s), ${seconds}s each, no crashes"
