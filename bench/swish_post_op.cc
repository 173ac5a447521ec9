// What a Swish costs fused into a oneDNN convolution, against the
// convolution alone and the native Swish loop over its output.
//
// EfficientNet-B0's convolutions (1x1 expansions and depthwise 3x3), in
// oneDNN's blocked layout as its plans run them (nChw16c where the processor
// has AVX-512, nChw8c where it has AVX2 only: oneDNN's AVX2 kernels take
// blocks of 8 and run nChw16c on its reference kernel): each convolution with no
// post-op and with eltwise_swish, then native's Swish (the 8- and 16-lane
// loops, as the native backend runs it over the same number of floats).
// Medians of alternated runs, 2 threads by default.
//
//   bench_swish_post_op [--threads=N] [--rounds=N]
#include <fmt/format.h>
#include <omp.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "collage/backends/native/elementwise_math.h"
#include "collage/backends/native/vector_math.h"
#include "collage/runtime/timing.h"

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

struct Shape {
  const char* name;
  int in_channels, out_channels, size, kernel, stride, groups;
};

// EfficientNet-B0's widest expansion, a middle one, and two depthwise.
constexpr Shape kShapes[] = {
    {"1x1 16->96 at 112x112", 16, 96, 112, 1, 1, 1},
    {"1x1 32->144 at 56x56", 32, 144, 56, 1, 1, 1},
    {"dw 3x3 144 at 56x56", 144, 144, 56, 3, 1, 144},
    {"dw 3x3 s2 96 at 112x112", 96, 96, 112, 3, 2, 96},
};

class Convolution {
 public:
  Convolution(dnnl::engine& engine, const Shape& s, Tag layout, bool swish) {
    const int out = (s.size + 2 * (s.kernel / 2) - s.kernel) / s.stride + 1;
    const memory::dims src{1, s.in_channels, s.size, s.size};
    const memory::dims dst{1, s.out_channels, out, out};
    const memory::dims weights =
        s.groups > 1 ? memory::dims{s.groups, s.out_channels / s.groups, s.in_channels / s.groups,
                                    s.kernel, s.kernel}
                     : memory::dims{s.out_channels, s.in_channels, s.kernel, s.kernel};
    const memory::desc src_desc(src, memory::data_type::f32, layout);
    const memory::desc dst_desc(dst, memory::data_type::f32, layout);
    const memory::desc weights_desc(weights, memory::data_type::f32, Tag::any);
    const memory::desc bias_desc({s.out_channels}, memory::data_type::f32, Tag::a);
    const memory::dims strides{s.stride, s.stride};
    const memory::dims padding{s.kernel / 2, s.kernel / 2};
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_desc,
        weights_desc, bias_desc, dst_desc, strides, padding, padding);
    dnnl::post_ops post_ops;
    if (swish) post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_swish, 1.0f, 0.0f);
    dnnl::primitive_attr attributes;
    attributes.set_post_ops(post_ops);
    dnnl::convolution_forward::primitive_desc primitive(desc, attributes, engine);
    implementation_ = primitive.impl_info_str();
    src_ = memory(src_desc, engine);
    dst_ = memory(dst_desc, engine);
    weights_ = memory(primitive.weights_desc(), engine);
    bias_ = memory(bias_desc, engine);
    fill(src_, 0.1f);
    fill(weights_, 0.01f);
    fill(bias_, 0.0f);
    convolution_ = dnnl::convolution_forward(primitive);
  }

  void run(dnnl::stream& stream) {
    convolution_.execute(stream, {{DNNL_ARG_SRC, src_},
                                  {DNNL_ARG_WEIGHTS, weights_},
                                  {DNNL_ARG_BIAS, bias_},
                                  {DNNL_ARG_DST, dst_}});
    stream.wait();
  }
  float* output() { return static_cast<float*>(dst_.get_data_handle()); }
  std::size_t output_floats() const { return dst_.get_desc().get_size() / sizeof(float); }
  const memory& dst() const { return dst_; }
  const std::string& implementation() const { return implementation_; }

 private:
  // Every float written: a buffer never touched reads as the zero page.
  static void fill(memory& m, float step) {
    auto* data = static_cast<float*>(m.get_data_handle());
    const std::size_t n = m.get_desc().get_size() / sizeof(float);
    for (std::size_t i = 0; i < n; ++i) data[i] = step * static_cast<float>(i % 7) - 0.3f;
  }

  std::string implementation_;
  memory src_, dst_, weights_, bias_;
  dnnl::convolution_forward convolution_;
};

double median_ms(std::vector<double> samples) {
  return collage::percentile(std::move(samples), 0.5);
}

double time_once(const std::function<void()>& body) {
  const auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  int rounds = 200;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) threads = std::atoi(argv[i] + 10);
    if (std::strncmp(argv[i], "--rounds=", 9) == 0) rounds = std::atoi(argv[i] + 9);
  }
  if (threads < 1 || rounds < 1) {
    fmt::print(stderr, "usage: bench_swish_post_op [--threads=N] [--rounds=N]\n");
    return 2;
  }
  omp_set_num_threads(threads);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const collage::native::UnaryBlock swish = collage::native::unary_block("Swish");
  fmt::print("threads {}, {} alternated rounds, AVX-512 for native: {}\n", threads, rounds,
             collage::native::has_avx512() ? "yes" : "no");
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const Tag layout = avx512 ? Tag::nChw16c : Tag::nChw8c;
  fmt::print(
      "| convolution ({}) | oneDNN kernel | alone ms | with Swish ms | "
      "Swish's share ns/float | native Swish ms | native ns/float | oneDNN eltwise ns/float |\n",
      avx512 ? "nChw16c" : "nChw8c");
  fmt::print("|---|---|---|---|---|---|---|---|\n");
  for (const Shape& shape : kShapes) {
    Convolution plain(engine, shape, layout, false);
    Convolution fused(engine, shape, layout, true);
    const std::size_t n = plain.output_floats();
    std::vector<float> out(n);
    // Native's Swish as its kernels run it: threads over contiguous shares.
    auto native_swish = [&] {
      const float* in = plain.output();
      const auto total = static_cast<std::int64_t>(n);
#pragma omp parallel num_threads(threads)
      {
        const int t = omp_get_thread_num();
        const int count = omp_get_num_threads();
        const std::int64_t begin = total * t / count;
        const std::int64_t end = total * (t + 1) / count;
        swish(in + begin, 1, out.data() + begin, end - begin, {1.0f, 0.0f});
      }
    };
    // oneDNN's own Swish as a separate primitive over the output.
    const memory::desc& dst_desc = plain.dst().get_desc();
    dnnl::eltwise_forward::primitive_desc eltwise_primitive(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                    dnnl::algorithm::eltwise_swish, dst_desc, 1.0f, 0.0f),
        engine);
    dnnl::eltwise_forward eltwise(eltwise_primitive);
    memory eltwise_dst(dst_desc, engine);
    auto onednn_swish = [&] {
      eltwise.execute(stream, {{DNNL_ARG_SRC, plain.dst()}, {DNNL_ARG_DST, eltwise_dst}});
      stream.wait();
    };
    std::vector<double> alone, with, native, onednn;
    for (int r = 0; r < rounds; ++r) {
      alone.push_back(time_once([&] { plain.run(stream); }));
      with.push_back(time_once([&] { fused.run(stream); }));
      native.push_back(time_once(native_swish));
      onednn.push_back(time_once(onednn_swish));
    }
    const double alone_ms = median_ms(alone);
    const double with_ms = median_ms(with);
    const double native_ms = median_ms(native);
    const double onednn_ms = median_ms(onednn);
    fmt::print("| {} | {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} |\n", shape.name,
               fused.implementation(), alone_ms, with_ms, (with_ms - alone_ms) * 1e6 / n, native_ms,
               native_ms * 1e6 / n, onednn_ms * 1e6 / n);
  }
  return 0;
}
