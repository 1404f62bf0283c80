# `cpack -G DEB` in the build folder makes an installable .deb: programs in /usr/bin, shared
# libraries in /usr/lib, plugins in /usr/lib/medseg/plugins, configs in /usr/share/medseg, desktop entry.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/resources/configs DESTINATION share/medseg OPTIONAL)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/resources/benchmarks DESTINATION share/medseg OPTIONAL USE_SOURCE_PERMISSIONS)
if(MEDSEG_BUILD_GUI)
  install(FILES ${CMAKE_SOURCE_DIR}/resources/medseg-studio.desktop DESTINATION share/applications)
endif()

set(CPACK_PACKAGE_NAME "medseg")
set(CPACK_PACKAGE_VENDOR "MedSeg")
set(CPACK_PACKAGE_CONTACT "MedSeg developers <medseg@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "3-D brain-tumour segmentation: viewer, 3-D U-Net, cluster runs")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
include(CPack)
