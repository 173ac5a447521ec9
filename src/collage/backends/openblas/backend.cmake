# OpenBLAS (Debian libopenblas-openmp-dev): the OpenMP build, which shares
# libgomp's threads with oneDNN and native.
find_library(OPENBLAS_LIBRARY NAMES openblas
             PATHS /usr/lib/x86_64-linux-gnu/openblas-openmp NO_DEFAULT_PATH)
find_path(CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas-openmp openblas)
if(OPENBLAS_LIBRARY AND CBLAS_INCLUDE_DIR)
  collage_backend(openblas LIBS ${OPENBLAS_LIBRARY} INCLUDES ${CBLAS_INCLUDE_DIR})
endif()
