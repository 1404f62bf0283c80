#!/usr/bin/env bash
# One-command set-up for a fresh Debian 12 machine: installs every package MedSeg needs, then
# configures and builds. Idempotent and non-interactive. Usage:
#   bash packaging/setup.sh [--preset release|headless|debug|asan] [--no-build] [--jobs N]
set -euo pipefail

preset=release
build=1
jobs=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --preset) preset="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,4p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

# Build tools, then the libraries, one line each so the list reads as the project's dependencies.
packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  clang libclang-rt-14-dev                # libFuzzer harnesses: compiler, fuzzer + sanitizer runtimes (run-fuzzers.sh)
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev   # desktop studio
  libvtk9-dev                             # slice and 3-D rendering
  libinsighttoolkit5-dev                  # imaging I/O (NIfTI, NRRD, MetaImage, DICOM via GDCM)
  libtorch-dev                            # 3-D U-Net
  libdnnl-dev                             # oneDNN's Winograd convolution (LibTorch's own oneDNN, called directly)
  libdcmtk-dev                            # DICOM networking (dcmnet) and DICOM SEG (dcmseg)
  libcurl4-openssl-dev                    # DICOMweb (QIDO-RS, WADO-RS, STOW-RS) over HTTP(S)
  orthanc orthanc-dicomweb dcmtk libgdcm-tools   # a real PACS (and its DICOMweb plugin) for the PACS tests; DCMTK/GDCM tools build their DICOM series
  libopenblas0-openmp                     # LibTorch's BLAS (Debian's default libblas3 is the slow reference one)
  python3-torch python3-numpy             # side-by-side benchmark against PyTorch
  python3-nibabel                         # benchmark inputs in nnU-Net's raw layout (compare_nnunet.py)
  libjemalloc2                            # the allocator PyTorch's CPU tuning guides recommend, for that peer
  libopenmpi-dev openmpi-bin              # data and experiment parallelism
  slurm-wlm munge                         # a real single-node Slurm for the submission tests
  openssh-server                          # a real sshd as the login host of the ssh submission tests
  nlohmann-json3-dev libcli11-dev libyaml-cpp-dev libgtest-dev zlib1g-dev
  xvfb xauth libgl1-mesa-dri              # GUI tests under a virtual display
  file dpkg-dev desktop-file-utils        # cpack .deb (dependency scan) and its test (packaging/test-deb.sh)
  mricron-data                            # Colin27 brain template for the synthetic data set
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  echo "setup.sh: installing ${#missing[@]} Debian packages: ${missing[*]}"
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

[ "$build" -eq 1 ] || exit 0
cd "$(dirname "$0")/.."
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$jobs"
echo "setup.sh: built preset '$preset' in build/$preset"
