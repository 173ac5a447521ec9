# `cmake --install build --prefix P`: the C++ API (headers, libcollage.so with
# its SONAME, a CMake package and a pkg-config file), the `collage` tool
# (tuning from the library starts `collage worker` from P/bin), and the
# Python module under P/lib/python3/dist-packages.
include(CMakePackageConfigHelpers)

install(TARGETS collage_shared EXPORT collageTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/collage DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS collage RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/collage)
install(EXPORT collageTargets NAMESPACE collage:: DESTINATION ${config_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/collageConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/collageConfig.cmake
                              INSTALL_DESTINATION ${config_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/collageConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/collageConfig.cmake
              ${PROJECT_BINARY_DIR}/collageConfigVersion.cmake
        DESTINATION ${config_dir})

# The .pc file finds the prefix from where it lies, so the tree can be
# installed under any --prefix.
file(RELATIVE_PATH pc_to_prefix /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${PROJECT_SOURCE_DIR}/cmake/collage.pc.in ${PROJECT_BINARY_DIR}/collage.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/collage.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
