#include "collage/backends/onednn/layout.h"

namespace collage::onednn {

memory::dims to_dims(const Shape& shape) {
  if (shape.empty()) return {1};
  return memory::dims(shape.begin(), shape.end());
}

std::int64_t dims_numel(const memory::dims& dims) {
  std::int64_t numel = 1;
  for (memory::dim d : dims) numel *= d;
  return numel;
}

memory::dims align_rank(const memory::dims& dims, int rank) {
  if (static_cast<int>(dims.size()) >= rank) return dims;
  memory::dims aligned(static_cast<std::size_t>(rank) - dims.size(), 1);
  aligned.insert(aligned.end(), dims.begin(), dims.end());
  return aligned;
}

memory::dims row_major_strides(const memory::dims& dims) {
  memory::dims strides(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

memory::desc plain_desc(const memory::dims& dims) {
  return memory::desc(dims, memory::data_type::f32, row_major_strides(dims));
}

memory::desc any_desc(const memory::dims& dims) {
  return memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
}

memory::desc strided_desc(const memory::dims& dims, const memory::dims& strides) {
  return memory::desc(dims, memory::data_type::f32, strides);
}

memory::desc edge_desc(const Shape& shape, EdgeLayout layout) {
  const memory::dims dims = to_dims(shape);
  switch (layout) {
    case EdgeLayout::kPlain:
      return plain_desc(dims);
    case EdgeLayout::kChannelsLast:
      return memory::desc(dims, memory::data_type::f32, memory::format_tag::nhwc);
    case EdgeLayout::kBlocked8:
      return memory::desc(dims, memory::data_type::f32, memory::format_tag::nChw8c);
    case EdgeLayout::kBlocked16:
      return memory::desc(dims, memory::data_type::f32, memory::format_tag::nChw16c);
  }
  return plain_desc(dims);
}

EdgeLayout preferred_edge_layout(const dnnl::engine& engine) {
  const memory::dims src = {1, 64, 28, 28};
  const memory::dims weights = {64, 64, 3, 3};
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                       dnnl::algorithm::convolution_direct, any_desc(src),
                                       any_desc(weights), any_desc(src), {1, 1}, {1, 1}, {1, 1});
  const memory::desc chosen = dnnl::convolution_forward::primitive_desc(desc, engine).src_desc();
  return laid_out_edge_layout(chosen).value_or(EdgeLayout::kPlain);
}

std::vector<EdgeLayout> other_compute_layouts(const dnnl::engine& engine, EdgeLayout preferred) {
  const Shape src = {1, 64, 28, 28};
  const memory::dims weights = {64, 64, 3, 3};
  std::vector<EdgeLayout> others;
  for (EdgeLayout layout :
       {EdgeLayout::kBlocked16, EdgeLayout::kBlocked8, EdgeLayout::kChannelsLast}) {
    if (layout == preferred) continue;
    try {
      const memory::desc md = edge_desc(src, layout);
      dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                           dnnl::algorithm::convolution_direct, md,
                                           any_desc(weights), md, {1, 1}, {1, 1}, {1, 1});
      const std::string impl =
          dnnl::convolution_forward::primitive_desc(desc, engine).impl_info_str();
      if (impl.rfind("jit", 0) == 0 || impl.rfind("brg", 0) == 0) others.push_back(layout);
    } catch (const dnnl::error&) {
      // No kernel for this layout here.
    }
  }
  return others;
}

std::optional<EdgeLayout> laid_out_edge_layout(const memory::desc& desc) {
  const memory::dims dims = desc.dims();
  if (dims.size() != 4) return std::nullopt;
  const Shape shape(dims.begin(), dims.end());
  for (EdgeLayout layout :
       {EdgeLayout::kChannelsLast, EdgeLayout::kBlocked16, EdgeLayout::kBlocked8}) {
    if (desc == edge_desc(shape, layout)) return layout;
  }
  return std::nullopt;
}

bool is_plain(const memory::desc& desc) {
  const dnnl_memory_desc_t& md = desc.data;
  if (md.data_type != dnnl_f32 || md.format_kind != dnnl_blocked) return false;
  if (md.offset0 != 0 || md.format_desc.blocking.inner_nblks != 0) return false;
  // A stride of a size-1 dimension never matters; every other stride must be
  // that of the dense row-major layout.
  std::int64_t expected = 1;
  for (int i = md.ndims - 1; i >= 0; --i) {
    if (md.padded_dims[i] != md.dims[i]) return false;
    if (md.dims[i] != 1 && md.format_desc.blocking.strides[i] != expected) return false;
    expected *= md.dims[i];
  }
  return true;
}

}  // namespace collage::onednn
