# XNNPACK (Debian libxnnpack-dev, with libpthreadpool-dev for its header).
# No libpthreadpool on the link line: the backend implements the pthreadpool
# API over OpenMP (openmp_pthreadpool.h), and libXNNPACK's calls bind to that
# implementation. XNNPACK does not report its version; the installed package's
# is compiled in.
find_library(XNNPACK_LIBRARY XNNPACK)
find_library(PTHREADPOOL_LIBRARY pthreadpool)
find_path(PTHREADPOOL_INCLUDE_DIR pthreadpool.h)
find_path(XNNPACK_INCLUDE_DIR xnnpack.h)
if(XNNPACK_LIBRARY AND PTHREADPOOL_INCLUDE_DIR AND XNNPACK_INCLUDE_DIR)
  execute_process(COMMAND dpkg-query -W -f=\${Version} libxnnpack-dev
                  OUTPUT_VARIABLE xnnpack_version ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT xnnpack_version)
    set(xnnpack_version unknown)
  endif()
  collage_backend(xnnpack LIBS ${XNNPACK_LIBRARY} OpenMP::OpenMP_CXX
                  INCLUDES ${XNNPACK_INCLUDE_DIR}
                  DEFINITIONS COLLAGE_XNNPACK_VERSION="${xnnpack_version}")
endif()
