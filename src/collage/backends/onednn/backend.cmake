# oneDNN (Debian libdnnl-dev): primitives with post-op fusion, blocked layouts inside.
find_package(dnnl CONFIG)
if(dnnl_FOUND)
  collage_backend(onednn LIBS DNNL::dnnl)
endif()
