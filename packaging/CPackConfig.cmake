# `cpack -G DEB` in the build folder makes an installable .deb (packaging/test-deb.sh checks it):
#   /usr/bin                     medseg, medseg-worker, medseg-studio (GUI builds)
#   /usr/lib                     libmedseg_*.so (found by the programs through RPATH $ORIGIN/../lib)
#   /usr/share/medseg            configs/, benchmarks/, slurm/ and apptainer/ templates
#   /usr/share/applications      medseg-studio.desktop, with its icon in share/icons/hicolor
# Depends is computed by dpkg-shlibdeps from the linked Debian libraries (libtorch1.13, ITK, Qt 6,
# VTK, Open MPI, yaml-cpp, ...).
install(DIRECTORY ${CMAKE_SOURCE_DIR}/resources/configs DESTINATION share/medseg)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/resources/benchmarks DESTINATION share/medseg USE_SOURCE_PERMISSIONS)
# The sbatch template is compiled into `medseg submit`; the copy is a starting point for --sbatch-template.
install(FILES ${CMAKE_SOURCE_DIR}/packaging/slurm/medseg.sbatch.in DESTINATION share/medseg/slurm)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/apptainer/medseg.def DESTINATION share/medseg/apptainer)
install(PROGRAMS ${CMAKE_SOURCE_DIR}/packaging/apptainer/medseg-worker-container DESTINATION share/medseg/apptainer)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION share/doc/medseg)
if(MEDSEG_BUILD_GUI)
  install(FILES ${CMAKE_SOURCE_DIR}/resources/medseg-studio.desktop DESTINATION share/applications)
  install(FILES ${CMAKE_SOURCE_DIR}/resources/icons/medseg-studio.svg DESTINATION share/icons/hicolor/scalable/apps)
endif()

set(CPACK_PACKAGE_NAME "medseg")
set(CPACK_PACKAGE_VENDOR "MedSeg")
set(CPACK_PACKAGE_CONTACT "MedSeg developers <medseg@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "3-D brain-tumour segmentation: viewer, 3-D U-Net, cluster runs")
set(CPACK_PACKAGE_DESCRIPTION "MedSeg trains and runs 3-D U-Nets (LibTorch) on brain MRI (Medical Segmentation \
Decathlon and nnU-Net layouts), evaluates them (Dice, HD95, BraTS regions), runs data- and experiment-parallel \
training under MPI or Slurm, and shows images, masks and 3-D surfaces in a Qt 6 / VTK desktop studio.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_HOMEPAGE_URL "https://localhost/medseg")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# Not linked, but used: mpirun for `medseg submit --backend local`, the Colin27 brain for `dataset synth`.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openmpi-bin, mricron-data")
# LibTorch calls BLAS through libblas.so.3: with only Debian's reference libblas3 installed, sgemm
# took half of inference time (6x slower sliding-window inference, 1.4x slower training steps
# measured here); OpenBLAS (OpenMP build, the same runtime as LibTorch's threads) takes over the
# libblas.so.3 alternative when installed.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenblas0-openmp")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurm-client, desktop-file-utils")
if(MEDSEG_HAVE_CUDA)
  # NVIDIA's CUDA runtime and NCCL (e.g. /usr/local/cuda) are no Debian packages: dpkg-shlibdeps
  # cannot list them, so the package then runs only where that toolkit is installed as well.
  message(STATUS "MedSeg: the .deb of this build links CUDA/NCCL from ${CUDAToolkit_LIBRARY_DIR}; "
                 "configure with -DMEDSEG_WITH_CUDA=OFF for a package that needs Debian packages only")
endif()
include(CPack)
