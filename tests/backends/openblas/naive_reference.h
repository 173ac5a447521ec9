// Naive loop implementations of MatMul, Gemm and Conv: a second reference,
// independent of both OpenBLAS and the native kernels, written for clarity
// and not speed.
#pragma once

#include <algorithm>
#include <vector>

#include "collage/ir/tensor.h"

namespace collage::openblas_test {

// numpy.matmul semantics: 1-D operands promoted and squeezed, batch broadcast.
inline Tensor naive_matmul(const Tensor& a, const Tensor& b) {
  Shape sa = a.shape();
  Shape sb = b.shape();
  const bool a_vector = sa.size() == 1;
  const bool b_vector = sb.size() == 1;
  if (a_vector) sa.insert(sa.begin(), 1);
  if (b_vector) sb.push_back(1);
  const std::int64_t m = sa[sa.size() - 2];
  const std::int64_t k = sa.back();
  const std::int64_t n = sb.back();
  const std::size_t rank = std::max(sa.size(), sb.size()) - 2;
  Shape batch(rank, 1);
  Shape ba(rank, 1);
  Shape bb(rank, 1);
  for (std::size_t i = 0; i < sa.size() - 2; ++i) ba[rank - (sa.size() - 2) + i] = sa[i];
  for (std::size_t i = 0; i < sb.size() - 2; ++i) bb[rank - (sb.size() - 2) + i] = sb[i];
  for (std::size_t i = 0; i < rank; ++i) batch[i] = std::max(ba[i], bb[i]);
  Shape out = batch;
  if (!a_vector) out.push_back(m);
  if (!b_vector) out.push_back(n);
  Tensor result = Tensor::zeros(TensorType{DType::kFloat32, out});
  float* y = result.data<float>();
  const std::int64_t count = shape_numel(batch);
  for (std::int64_t index = 0; index < count; ++index) {
    std::int64_t oa = 0;
    std::int64_t ob = 0;
    std::int64_t rest = index;
    std::int64_t stride_a = 1;
    std::int64_t stride_b = 1;
    for (std::size_t d = rank; d-- > 0;) {
      std::int64_t i = rest % batch[d];
      rest /= batch[d];
      oa += (ba[d] == 1 ? 0 : i) * stride_a;
      ob += (bb[d] == 1 ? 0 : i) * stride_b;
      stride_a *= ba[d];
      stride_b *= bb[d];
    }
    const float* pa = a.data<float>() + oa * m * k;
    const float* pb = b.data<float>() + ob * k * n;
    float* py = y + index * m * n;
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (std::int64_t p = 0; p < k; ++p)
          sum += static_cast<double>(pa[i * k + p]) * pb[p * n + j];
        py[i * n + j] = static_cast<float>(sum);
      }
    }
  }
  return result;
}

// alpha * op(A) * op(B) + beta * C, C (possibly empty) broadcast to [M, N].
inline Tensor naive_gemm(const Tensor& a, const Tensor& b, const Tensor& c, bool trans_a,
                         bool trans_b, float alpha, float beta) {
  const std::int64_t m = trans_a ? a.shape()[1] : a.shape()[0];
  const std::int64_t k = trans_a ? a.shape()[0] : a.shape()[1];
  const std::int64_t n = trans_b ? b.shape()[0] : b.shape()[1];
  Tensor result = Tensor::allocate(TensorType{DType::kFloat32, {m, n}});
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        float av = trans_a ? a.data<float>()[p * m + i] : a.data<float>()[i * k + p];
        float bv = trans_b ? b.data<float>()[j * k + p] : b.data<float>()[p * n + j];
        sum += static_cast<double>(av) * bv;
      }
      double value = alpha * sum;
      if (!c.empty()) {
        // Right-aligned broadcast of a rank <= 2 C.
        Shape sc = c.shape();
        while (sc.size() < 2) sc.insert(sc.begin(), 1);
        std::int64_t ci = sc[0] == 1 ? 0 : i;
        std::int64_t cj = sc[1] == 1 ? 0 : j;
        value += beta * c.data<float>()[ci * sc[1] + cj];
      }
      result.data<float>()[i * n + j] = static_cast<float>(value);
    }
  }
  return result;
}

struct NaiveConv {
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t dilation_h = 1, dilation_w = 1;
  std::int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  std::int64_t groups = 1;
};

// 2-D convolution of x [N,C,H,W] with w [M,C/g,kh,kw] and bias [M] (or empty).
inline Tensor naive_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias,
                           const NaiveConv& p) {
  const std::int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], wd = x.shape()[3];
  const std::int64_t m = w.shape()[0], cg = w.shape()[1], kh = w.shape()[2], kw = w.shape()[3];
  const std::int64_t oh =
      (h + p.pad_top + p.pad_bottom - ((kh - 1) * p.dilation_h + 1)) / p.stride_h + 1;
  const std::int64_t ow =
      (wd + p.pad_left + p.pad_right - ((kw - 1) * p.dilation_w + 1)) / p.stride_w + 1;
  const std::int64_t mg = m / p.groups;
  Tensor y = Tensor::allocate(TensorType{DType::kFloat32, {n, m, oh, ow}});
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t o = 0; o < m; ++o) {
      const std::int64_t g = o / mg;
      for (std::int64_t oy = 0; oy < oh; ++oy) {
        for (std::int64_t ox = 0; ox < ow; ++ox) {
          double sum = bias.empty() ? 0.0 : bias.data<float>()[o];
          for (std::int64_t ci = 0; ci < cg; ++ci) {
            for (std::int64_t ky = 0; ky < kh; ++ky) {
              for (std::int64_t kx = 0; kx < kw; ++kx) {
                std::int64_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
                std::int64_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                float xv = x.data<float>()[((b * c + g * cg + ci) * h + iy) * wd + ix];
                float wv = w.data<float>()[((o * cg + ci) * kh + ky) * kw + kx];
                sum += static_cast<double>(xv) * wv;
              }
            }
          }
          y.data<float>()[((b * m + o) * oh + oy) * ow + ox] = static_cast<float>(sum);
        }
      }
    }
  }
  return y;
}

}  // namespace collage::openblas_test
