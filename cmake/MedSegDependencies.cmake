# Finds every third-party package MedSeg builds against. packaging/setup.sh installs them on Debian 12.
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(ZLIB REQUIRED)
# Training configurations may be written in YAML (resources/configs/*.yaml).
find_package(yaml-cpp REQUIRED)

find_package(ITK 5 REQUIRED COMPONENTS
  ITKCommon ITKIOImageBase ITKIONIFTI ITKIONRRD ITKIOMeta ITKIOGDCM
  ITKImageIntensity ITKImageGrid ITKSmoothing ITKRegionGrowing ITKDistanceMap ITKTransform ITKDisplacementField)
include(${ITK_USE_FILE})

# Torch_DIR may point at a CUDA LibTorch (for example a pip torch: python -c 'import torch;print(torch.utils.cmake_prefix_path)').
find_package(Torch REQUIRED)
find_package(MPI COMPONENTS CXX)
# The MPI implementation a binary runs collectives through, for the plugin ABI tag (core/plugin/PluginApi.h):
# implementation and major.minor ("Open MPI 4.1"), the series within which its implementers keep the
# binary interface, read from the version macros of the mpi.h it compiles against; an mpi.h without
# them is named by the MPI standard it implements.
set(MEDSEG_ABI_MPI "")
if(MPI_CXX_FOUND)
  set(MEDSEG_ABI_MPI "MPI standard ${MPI_CXX_VERSION}")
  find_file(MEDSEG_MPI_HEADER mpi.h PATHS ${MPI_CXX_HEADER_DIR} ${MPI_CXX_INCLUDE_DIRS} NO_DEFAULT_PATH)
  if(MEDSEG_MPI_HEADER)
    file(STRINGS ${MEDSEG_MPI_HEADER} mpi_version_lines REGEX "^#define (OMPI_M(AJ|IN)OR_VERSION|MPICH_VERSION) ")
    if(mpi_version_lines MATCHES "OMPI_MAJOR_VERSION ([0-9]+)" )
      set(mpi_major ${CMAKE_MATCH_1})
      string(REGEX MATCH "OMPI_MINOR_VERSION ([0-9]+)" _ "${mpi_version_lines}")
      set(MEDSEG_ABI_MPI "Open MPI ${mpi_major}.${CMAKE_MATCH_1}")
    elseif(mpi_version_lines MATCHES "MPICH_VERSION \"([0-9]+)\\.([0-9]+)")
      set(MEDSEG_ABI_MPI "MPICH ${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
    endif()
  endif()
endif()

# CUDA and NCCL: compiled when found (AUTO) or demanded (ON); Debian's LibTorch is CPU-only, so the
# CUDA code paths only run with a CUDA LibTorch on a GPU machine.
set(MEDSEG_HAVE_CUDA OFF)
set(MEDSEG_HAVE_NCCL OFF)
if(NOT MEDSEG_WITH_CUDA STREQUAL "OFF")
  if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(MEDSEG_HAVE_CUDA ON)
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_ROOT}/include)
    find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_ROOT}/lib64)
    if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      set(MEDSEG_HAVE_NCCL ON)
    endif()
  elseif(MEDSEG_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "MEDSEG_WITH_CUDA=ON but no CUDA toolkit was found; set CUDAToolkit_ROOT")
  endif()
endif()
message(STATUS "MedSeg: CUDA code paths ${MEDSEG_HAVE_CUDA}, NCCL ${MEDSEG_HAVE_NCCL}, MPI ${MPI_CXX_FOUND}, GUI ${MEDSEG_BUILD_GUI}")

# Qt only in the studio.
if(MEDSEG_BUILD_GUI)
  find_package(Qt6 REQUIRED COMPONENTS Core Gui Widgets OpenGL OpenGLWidgets Charts Test Concurrent)
  # Debian's VTK Qt module targets Qt 5, so VTK is embedded through our own QOpenGLWidget bridge.
  find_package(VTK REQUIRED COMPONENTS
    CommonCore CommonDataModel CommonExecutionModel FiltersCore FiltersGeneral FiltersSources
    FiltersModeling ImagingCore ImagingGeneral InteractionStyle RenderingCore RenderingOpenGL2
    RenderingVolume RenderingVolumeOpenGL2 RenderingFreeType RenderingAnnotation IOImage)
endif()

# app/render (3-D scenes and offscreen snapshots, `medseg render`) needs VTK only: always with the
# GUI, and in headless builds too when VTK happens to be installed (MEDSEG_BUILD_RENDER=OFF: never
# in a headless build, which then needs no VTK at all).
option(MEDSEG_BUILD_RENDER "Build `medseg render` where VTK is found (always on with the GUI)" ON)
set(MEDSEG_RENDER_VTK_COMPONENTS CommonCore CommonDataModel CommonExecutionModel FiltersCore
  FiltersGeneral ImagingCore InteractionStyle RenderingCore RenderingOpenGL2 RenderingVolume
  RenderingVolumeOpenGL2 IOImage)
if(NOT MEDSEG_BUILD_GUI AND MEDSEG_BUILD_RENDER)
  find_package(VTK QUIET COMPONENTS ${MEDSEG_RENDER_VTK_COMPONENTS})
endif()
set(MEDSEG_HAVE_RENDER OFF)
if(VTK_FOUND)
  set(MEDSEG_HAVE_RENDER ON)
  list(TRANSFORM MEDSEG_RENDER_VTK_COMPONENTS PREPEND "VTK::" OUTPUT_VARIABLE MEDSEG_RENDER_VTK_LIBRARIES)
  find_package(X11 QUIET)
endif()
message(STATUS "MedSeg: offscreen 3-D rendering (medseg render) ${MEDSEG_HAVE_RENDER}")

# Qt and Torch both define 'slots'; Qt's keywords are off project-wide (use Q_SLOTS, Q_SIGNALS, Q_EMIT).
add_compile_definitions(QT_NO_KEYWORDS)
