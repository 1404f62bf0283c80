#!/usr/bin/env bash
# Builds the .deb of a built tree with cpack, unpacks it into a scratch root (dpkg -x: no root, no
# container) and checks the installed layout works from a clean environment:
#   bash packaging/test-deb.sh [BUILD_DIR]       (default build/release; registered as ctest packaging.deb)
# Checks: the expected files are in the package; Depends names the Debian runtime packages; every
# installed ELF file resolves its libraries; `medseg --version`, `medseg-worker --help` and
# `medseg-studio --version` run under `env -i`; the desktop entry validates. Set MEDSEG_KEEP_TEST_FILES=1 to keep the scratch folder.
set -euo pipefail

build_dir=$(cd "${1:-$(dirname "$0")/../build/release}" && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/medseg-deb.XXXXXX")
[ -n "${MEDSEG_KEEP_TEST_FILES:-}" ] || trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "test-deb: FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "test-deb: ok: $*"; }

gui=$(sed -n 's/^MEDSEG_BUILD_GUI:BOOL=//p' "$build_dir/CMakeCache.txt")
worker=$([ -x "$build_dir/bin/medseg-worker" ] && echo 1 || echo 0)

# 1. The package. Output (and cpack's staging folder) go to the scratch folder, not the build tree.
(cd "$build_dir" && cpack -G DEB -B "$scratch/out" >"$scratch/cpack.log" 2>&1) || {
  cat "$scratch/cpack.log" >&2; echo "test-deb: FAIL: cpack failed" >&2; exit 1; }
deb=$(ls "$scratch"/out/medseg_*.deb)
pass "built $(basename "$deb") ($(du -h "$deb" | cut -f1))"

# 2. Metadata: dependencies computed from the linked libraries, not an empty or hand-made list.
depends=$(dpkg-deb -f "$deb" Depends)
echo "test-deb: Depends: $depends"
runtime=(libc6 libstdc++6 libtorch1.13 libinsighttoolkit5.2 libyaml-cpp0.7)
[ "$gui" = ON ] && runtime+=(libqt6core6)
for package in "${runtime[@]}"; do
  [[ ", $depends," == *", $package"[\ ,]* ]] || fail "Depends lacks $package"
done
[ "$(dpkg-deb -f "$deb" Package)" = medseg ] || fail "package name is not medseg"

# 3. Layout under /usr.
root="$scratch/root"
dpkg -x "$deb" "$root"
expected=(usr/bin/medseg usr/lib/libmedseg_core.so usr/lib/libmedseg_nn.so
          usr/share/medseg/configs/tiny-test.yaml usr/share/medseg/configs/brats-synth-small.yaml
          usr/share/medseg/benchmarks/compare_pytorch.py usr/share/medseg/slurm/medseg.sbatch.in
          usr/lib/medseg/plugins/unet3d/libunet3d.so usr/lib/medseg/plugins/unet3d/manifest.json
          usr/lib/medseg/plugins/torchscript/libtorchscript.so usr/lib/medseg/plugins/region-growing/libregion-growing.so
          usr/include/medseg/core/plugin/Plugin.h usr/lib/cmake/MedSeg/MedSegConfig.cmake usr/lib/cmake/MedSeg/MedSegPlugin.cmake)
[ "$worker" = 1 ] && expected+=(usr/bin/medseg-worker)
[ "$gui" = ON ] && expected+=(usr/bin/medseg-studio usr/share/applications/medseg-studio.desktop
                              usr/share/icons/hicolor/scalable/apps/medseg-studio.svg)
for file in "${expected[@]}"; do [ -e "$root/$file" ] || fail "missing /$file"; done
pass "layout (${#expected[@]} files)"

# 4. Every ELF file finds its libraries from the unpacked root, with a clean environment.
while IFS= read -r -d '' file; do
  head -c 4 "$file" | grep -q 'ELF' || continue
  missing=$(env -i PATH=/usr/bin:/bin ldd "$file" 2>&1 | grep 'not found' || true)
  [ -z "$missing" ] || fail "${file#"$root"} cannot find: $missing"
  # Our libraries must come from the package, not from the build tree.
  if env -i PATH=/usr/bin:/bin ldd "$file" | grep -q "$build_dir"; then fail "${file#"$root"} loads libraries from $build_dir"; fi
done < <(find "$root/usr/bin" "$root/usr/lib" -type f -print0)
pass "all programs and libraries resolve their dependencies"

# 5. The installed programs run from a clean shell.
clean=(env -i PATH=/usr/bin:/bin HOME="$scratch")
# A sanitizer build's programs keep the options packaging/sanitize.sh chose (leak checking off, ...).
for variable in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
  [ -z "${!variable:-}" ] || clean+=("$variable=${!variable}")
done
version=$("${clean[@]}" "$root/usr/bin/medseg" --version 2>&1) || fail "medseg --version failed: $version"
[[ "$version" == "medseg "[0-9]* ]] || fail "unexpected version output: $version"
pass "medseg --version: $version"

# The installed plugins are found beside the installed programs (lib/medseg/plugins), each loadable.
plugins=$("${clean[@]}" "$root/usr/bin/medseg" plugins list --load 2>&1) || fail "medseg plugins list failed: $plugins"
for id in unet3d torchscript region-growing; do
  grep -Eq "^$id +[0-9.]+ +[a-z,]+ +loaded" <<<"$plugins" || fail "plugin $id is not loaded from the package: $plugins"
done
pass "plugins unet3d, torchscript and region-growing load from /usr/lib/medseg/plugins"

if [ "$worker" = 1 ]; then
  help=$("${clean[@]}" "$root/usr/bin/medseg-worker" --help 2>&1) || fail "medseg-worker --help failed: $help"
  grep -q -- '--run-dir' <<<"$help" || fail "medseg-worker --help lacks --run-dir: $help"
  pass "medseg-worker --help"
fi

if [ "$gui" = ON ]; then
  studio=$("${clean[@]}" QT_QPA_PLATFORM=offscreen "$root/usr/bin/medseg-studio" --version 2>&1) ||
    fail "medseg-studio --version failed: $studio"
  grep -q "medseg-studio" <<<"$studio" || fail "unexpected medseg-studio --version output: $studio"
  pass "medseg-studio --version (offscreen)"
  desktop="$root/usr/share/applications/medseg-studio.desktop"
  if command -v desktop-file-validate >/dev/null; then
    out=$(desktop-file-validate "$desktop" 2>&1) || fail "desktop entry does not validate: $out"
    [ -z "$out" ] || echo "test-deb: desktop-file-validate: $out"
    pass "desktop entry validates"
  else
    echo "test-deb: desktop-file-validate not installed (desktop-file-utils); desktop entry not validated"
  fi
  grep -q '^Exec=medseg-studio' "$desktop" || fail "desktop entry does not start medseg-studio"
  icon=$(sed -n 's/^Icon=//p' "$desktop")
  [ -e "$root/usr/share/icons/hicolor/scalable/apps/$icon.svg" ] || fail "desktop entry icon '$icon' is not installed"
fi

if [ "$failures" -gt 0 ]; then
  echo "test-deb: $failures check(s) failed (scratch folder: $scratch)" >&2
  exit 1
fi
echo "test-deb: all checks passed for $(basename "$deb")"
