# The native backend: the project's own kernels, the reference of every other backend.
collage_backend(native LIBS OpenMP::OpenMP_CXX)
