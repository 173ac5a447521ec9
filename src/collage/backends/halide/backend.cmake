# Halide 14 (Debian libhalide14-0-dev): regions compiled ahead of time into
# shared libraries, scheduled by the backend's template or by one of the
# autoschedulers that ship beside the library.
find_package(Halide 14 QUIET CONFIG)
if(Halide_FOUND)
  collage_backend(halide LIBS Halide::Halide OpenMP::OpenMP_CXX ${CMAKE_DL_LIBS}
                  DEFINITIONS COLLAGE_HALIDE_PLUGIN_DIR="$<TARGET_FILE_DIR:Halide::Mullapudi2016>"
                              COLLAGE_HALIDE_VERSION="${Halide_VERSION}")
else()
  message(STATUS "Halide 14 not found: no halide backend")
endif()
