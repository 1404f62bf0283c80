#!/usr/bin/env bash
# The GPU check: builds packaging/gpu-check (MedSeg's U-Net, device choice and rank placement)
# against the machine's LibTorch and runs it, printing one JSON summary on stdout (build notes on
# stderr). For a lent GPU machine, which has a pip torch with CUDA but none of our Debian packages:
#   here:   bash packaging/gpu-check.sh prepare        # copies nlohmann-json's headers into .gpu-deps/
#   there:  bash packaging/gpu-check.sh                # (device tool: carry [".gpu-deps"])
# Here, without a GPU, `bash packaging/gpu-check.sh --device cpu --small` runs the same program on the
# CPU LibTorch (ctest packaging.gpu-check). Exit status: the program's (0 all checks passed, 1 a check
# failed, 3 no such device), or 4 when the build fails.
set -euo pipefail
cd "$(dirname "$0")/.."
deps=.gpu-deps

if [ "${1:-}" = prepare ]; then
  mkdir -p "$deps/include"
  cp -r /usr/include/nlohmann "$deps/include/"
  echo "gpu-check.sh: $deps/include/nlohmann ready; carry $deps to the GPU machine" >&2
  exit 0
fi

build=${MEDSEG_GPU_CHECK_BUILD:-build/gpu-check}
# LibTorch: Torch_DIR as given, else the python3 torch's own CMake files (pip), else the system's (Debian).
prefix=()
if [ -z "${Torch_DIR:-}" ]; then
  torch_cmake=$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
  [ -n "$torch_cmake" ] && [ -f "$torch_cmake/Torch/TorchConfig.cmake" ] && prefix=(-DCMAKE_PREFIX_PATH="$torch_cmake")
else
  prefix=(-DTorch_DIR="$Torch_DIR")
fi
# A CUDA LibTorch's CMake files look for the toolkit (nvcc) at configure time.
[ -d /usr/local/cuda ] && export CUDAToolkit_ROOT=${CUDAToolkit_ROOT:-/usr/local/cuda} CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
hint=()
[ -d "$deps/include/nlohmann" ] && hint=(-DNLOHMANN_INCLUDE_HINT="$PWD/$deps/include")

mkdir -p "$(dirname "$build")"  # build/ is ignored, so a fresh copy of the tree has none
start=$(date +%s)
if ! { cmake -S packaging/gpu-check -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${prefix[@]}" "${hint[@]}" &&
       cmake --build "$build"; } >"$build.log" 2>&1; then
  tail -n 40 "$build.log" >&2
  echo "gpu-check.sh: the build failed (whole log: $build.log)" >&2
  exit 4
fi
echo "gpu-check.sh: built in $(( $(date +%s) - start )) s ($build)" >&2

gpu_name=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1 || true)
status=0
result=$("$build/medseg-gpu-check" "$@") || status=$?
GPU_NAME="$gpu_name" python3 -c '
import json, os, sys
text = sys.stdin.read()
report = json.loads(text) if text.strip() else {"error": "medseg-gpu-check printed nothing", "ok": False}
report["gpu"] = os.environ["GPU_NAME"] or None
print(json.dumps(report))' <<<"$result"
exit "$status"
