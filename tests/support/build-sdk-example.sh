#!/usr/bin/env bash
# Builds the SDK's example plugin (resources/sdk-example) out of tree, the way a plugin author does:
# the SDK staged from a MedSeg build tree with `cmake --install --component sdk`, then plain CMake
# with find_package(MedSeg). Prints the folder holding the built plugin (OUT/build/plugins).
#   build-sdk-example.sh MEDSEG_BUILD_DIR MEDSEG_SOURCE_DIR OUT
set -euo pipefail
build=$1 source=$2 out=$3
rm -rf "$out"
cmake --install "$build" --component sdk --prefix "$out/sdk" > "$out.install.log" 2>&1 || { cat "$out.install.log"; exit 1; }
cmake -S "$source/resources/sdk-example" -B "$out/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$out/sdk" > "$out.configure.log" 2>&1 || { cat "$out.configure.log"; exit 1; }
cmake --build "$out/build" > "$out.build.log" 2>&1 || { cat "$out.build.log"; exit 1; }
echo "$out/build/plugins"
