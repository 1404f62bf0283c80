# medseg_add_plugin(): builds a MedSeg plugin, in this tree and out of it (find_package(MedSeg) brings
# this file along). A plugin is a shared library lib<id>.so beside its manifest.json, in a folder of its
# own (<output>/<id>/); the manifest written there is the plugin's source manifest with what the build
# knows added: "api_version" (the SDK's plugin API), "library" and "abi" (compiler, LibTorch and Qt when
# the plugin uses them, OS, architecture), which the host compares with its own before it opens the
# library (core/plugin/PluginApi.h).
#
#   medseg_add_plugin(<id> SOURCES <file>... [MANIFEST <manifest.json>] [TORCH] [QT] [MPI] [NO_INSTALL]
#                     [LIBRARIES <library>...] [OUTPUT_DIRECTORY <dir>] [INSTALL_DESTINATION <dir>])
#
#   TORCH / QT: the plugin links LibTorch (find_package(Torch) first) / Qt 6; their versions are recorded.
#   MPI: the plugin runs MPI collectives (through medseg_mpi, core/mpi); the MPI it was built against is
#        recorded, and a MedSeg with another MPI refuses it.
#   OUTPUT_DIRECTORY: where <id>/ is made (default: MEDSEG_PLUGIN_OUTPUT_DIRECTORY, else
#                     ${CMAKE_BINARY_DIR}/plugins); point MEDSEG_PLUGIN_PATH or --plugin-path at it.
#   NO_INSTALL: no install rule (plugins that exist for tests).
#   INSTALL_DESTINATION: where `cmake --install` puts <id>/ (default lib/medseg/plugins, the folder an
#                        installed MedSeg searches).
# Sets MEDSEG_PLUGIN_TARGET in the caller's scope to the library target (medseg_plugin_<id>).
include_guard(GLOBAL)

# The ABI fields of a binary built here, as the host records its own (core/CMakeLists.txt).
function(medseg_abi_fields compiler_var os_var arch_var)
  string(REGEX MATCH "^[0-9]+" major "${CMAKE_CXX_COMPILER_VERSION}")
  set(${compiler_var} "${CMAKE_CXX_COMPILER_ID} ${major}" PARENT_SCOPE)
  set(${os_var} "${CMAKE_SYSTEM_NAME}" PARENT_SCOPE)
  set(${arch_var} "${CMAKE_SYSTEM_PROCESSOR}" PARENT_SCOPE)
endfunction()

function(medseg_add_plugin id)
  cmake_parse_arguments(ARG "TORCH;QT;MPI;NO_INSTALL" "MANIFEST;OUTPUT_DIRECTORY;INSTALL_DESTINATION" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT id MATCHES "^[a-z][a-z0-9-]*$")
    message(FATAL_ERROR "medseg_add_plugin: id '${id}' must be lower-case letters, digits and '-', starting with a letter")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "medseg_add_plugin(${id}): SOURCES is empty")
  endif()
  if(NOT ARG_MANIFEST)
    set(ARG_MANIFEST ${CMAKE_CURRENT_SOURCE_DIR}/manifest.json)
  endif()
  if(NOT MedSeg_PLUGIN_API_VERSION)
    message(FATAL_ERROR "medseg_add_plugin: MedSeg_PLUGIN_API_VERSION is not set (find_package(MedSeg) sets it)")
  endif()
  if(NOT ARG_OUTPUT_DIRECTORY)
    if(MEDSEG_PLUGIN_OUTPUT_DIRECTORY)
      set(ARG_OUTPUT_DIRECTORY ${MEDSEG_PLUGIN_OUTPUT_DIRECTORY})
    else()
      set(ARG_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/plugins)
    endif()
  endif()
  if(NOT ARG_INSTALL_DESTINATION)
    set(ARG_INSTALL_DESTINATION lib/medseg/plugins)
  endif()
  set(folder ${ARG_OUTPUT_DIRECTORY}/${id})
  string(MAKE_C_IDENTIFIER "medseg_plugin_${id}" target)

  add_library(${target} SHARED ${ARG_SOURCES})
  # PUBLIC: a test that links the plugin library itself sees the SDK too.
  target_link_libraries(${target} PUBLIC MedSeg::PluginSdk ${ARG_LIBRARIES})
  target_compile_features(${target} PUBLIC cxx_std_17)
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${id} PREFIX "lib" LIBRARY_OUTPUT_DIRECTORY ${folder}
    # Installed in lib/medseg/plugins/<id>/: the SDK's libraries are three folders up.
    INSTALL_RPATH "$ORIGIN/../../..")

  medseg_abi_fields(compiler os arch)
  set(libtorch "")
  if(ARG_TORCH)
    if(NOT Torch_VERSION)
      message(FATAL_ERROR "medseg_add_plugin(${id} TORCH): call find_package(Torch) first")
    endif()
    set(libtorch ${Torch_VERSION})
  endif()
  set(qt "")
  if(ARG_QT)
    if(NOT Qt6_VERSION_MAJOR)
      message(FATAL_ERROR "medseg_add_plugin(${id} QT): call find_package(Qt6) first")
    endif()
    set(qt ${Qt6_VERSION_MAJOR})
  endif()

  set(mpi "")
  if(ARG_MPI)
    # In this tree MEDSEG_ABI_MPI, out of it the MedSeg package's MedSeg_ABI_MPI.
    if(MEDSEG_ABI_MPI)
      set(mpi "${MEDSEG_ABI_MPI}")
    elseif(MedSeg_ABI_MPI)
      set(mpi "${MedSeg_ABI_MPI}")
    else()
      message(FATAL_ERROR "medseg_add_plugin(${id} MPI): this MedSeg was built without MPI")
    endif()
    target_link_libraries(${target} PUBLIC MedSeg::Mpi)
  endif()

  file(READ ${ARG_MANIFEST} manifest)
  string(JSON declared ERROR_VARIABLE problem GET "${manifest}" id)
  if(problem)
    message(FATAL_ERROR "${ARG_MANIFEST}: not a manifest with an \"id\" (${problem})")
  endif()
  if(NOT declared STREQUAL id)
    message(FATAL_ERROR "${ARG_MANIFEST}: \"id\" is \"${declared}\", medseg_add_plugin was called with ${id}")
  endif()
  set(library "${CMAKE_SHARED_LIBRARY_PREFIX}${id}${CMAKE_SHARED_LIBRARY_SUFFIX}")
  string(JSON manifest SET "${manifest}" api_version "\"${MedSeg_PLUGIN_API_VERSION}\"")
  string(JSON manifest SET "${manifest}" library "\"${library}\"")
  string(JSON manifest SET "${manifest}" abi
    "{\"compiler\": \"${compiler}\", \"libtorch\": \"${libtorch}\", \"qt\": \"${qt}\", \"mpi\": \"${mpi}\", \"os\": \"${os}\", \"arch\": \"${arch}\"}")
  # Rewritten only when it changed, so re-configuring rebuilds nothing.
  set(written "")
  if(EXISTS ${folder}/manifest.json)
    file(READ ${folder}/manifest.json written)
  endif()
  if(NOT written STREQUAL "${manifest}\n")
    file(WRITE ${folder}/manifest.json "${manifest}\n")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ARG_MANIFEST})

  if(NOT ARG_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${ARG_INSTALL_DESTINATION}/${id} COMPONENT plugins)
    install(FILES ${folder}/manifest.json DESTINATION ${ARG_INSTALL_DESTINATION}/${id} COMPONENT plugins)
  endif()
  set(MEDSEG_PLUGIN_TARGET ${target} PARENT_SCOPE)
endfunction()
