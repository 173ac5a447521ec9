// A Collage backend plugin over Eigen (docs/plugins.md): a graph-style
// backend that compiles a region of MatMul, Gemm, Add, Mul, Relu, Sigmoid,
// Tanh and last-axis Softmax nodes (float32) into one kernel, which runs the
// nodes in order on Eigen's matrix products and vectorized array
// expressions, with OpenMP threads in the products.
//
// It sees Collage only through include/collage/backend_plugin.h: plain C
// structs in, a kernel handle out. Built with -DEIGEN_PLUGIN_CRASH=ON, its
// kernels crash on purpose (a null write), to show that a plugin that
// crashes costs its candidates, not the tune.
#include <collage/backend_plugin.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<Matrix>;
using ConstMatrixMap = Eigen::Map<const Matrix>;
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

std::int64_t elements(const collage_value& v) {
  std::int64_t n = 1;
  for (int i = 0; i < v.rank; ++i) n *= v.shape[i];
  return n;
}

const collage_attribute* attribute(const collage_node& node, const char* name) {
  for (size_t i = 0; i < node.num_attributes; ++i) {
    if (std::strcmp(node.attributes[i].name, name) == 0) return &node.attributes[i];
  }
  return nullptr;
}

std::int64_t int_attribute(const collage_node& node, const char* name, std::int64_t fallback) {
  const collage_attribute* a = attribute(node, name);
  return a != nullptr && a->kind == COLLAGE_ATTRIBUTE_INT ? a->i : fallback;
}

float float_attribute(const collage_node& node, const char* name, float fallback) {
  const collage_attribute* a = attribute(node, name);
  return a != nullptr && a->kind == COLLAGE_ATTRIBUTE_FLOAT ? a->f : fallback;
}

bool same_shape(const collage_value& a, const collage_value& b) {
  if (a.rank != b.rank) return false;
  for (int i = 0; i < a.rank; ++i) {
    if (a.shape[i] != b.shape[i]) return false;
  }
  return true;
}

// b broadcasts over a as a row: b's elements are a's last dimension.
bool row_broadcast(const collage_value& a, const collage_value& b) {
  return a.rank >= 1 && elements(b) == a.shape[a.rank - 1] &&
         (b.rank == 1 || (b.rank >= 1 && b.shape[b.rank - 1] == a.shape[a.rank - 1]));
}

bool is_f32(const collage_graph& g, int32_t value) {
  return value >= 0 && g.values[value].dtype == COLLAGE_DTYPE_FLOAT32;
}

// Whether the backend runs `node` on its own.
bool node_supported(const collage_graph& g, const collage_node& node) {
  for (size_t i = 0; i < node.num_inputs; ++i) {
    if (!is_f32(g, node.inputs[i])) return false;
  }
  if (node.num_outputs != 1 || !is_f32(g, node.outputs[0]) || node.domain[0] != '\0') return false;
  const std::string op = node.op_type;
  const collage_value& out = g.values[node.outputs[0]];
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh") return node.num_inputs == 1;
  if (op == "Softmax") {
    const std::int64_t axis = int_attribute(node, "axis", -1);
    return node.num_inputs == 1 && (axis == -1 || axis == out.rank - 1);
  }
  if (op == "Add" || op == "Mul") {
    if (node.num_inputs != 2) return false;
    const collage_value& a = g.values[node.inputs[0]];
    const collage_value& b = g.values[node.inputs[1]];
    return same_shape(a, out) && (same_shape(a, b) || row_broadcast(a, b));
  }
  if (op == "MatMul") {
    // A [.., M, K] times a 2-D B [K, N].
    if (node.num_inputs != 2) return false;
    const collage_value& a = g.values[node.inputs[0]];
    const collage_value& b = g.values[node.inputs[1]];
    return a.rank >= 2 && b.rank == 2 && a.shape[a.rank - 1] == b.shape[0];
  }
  if (op == "Gemm") {
    if (node.num_inputs < 2 || node.num_inputs > 3) return false;
    if (int_attribute(node, "transA", 0) != 0) return false;
    if (float_attribute(node, "alpha", 1.0f) != 1.0f || float_attribute(node, "beta", 1.0f) != 1.0f)
      return false;
    const collage_value& a = g.values[node.inputs[0]];
    const collage_value& b = g.values[node.inputs[1]];
    if (a.rank != 2 || b.rank != 2) return false;
    if (node.num_inputs == 3 && node.inputs[2] >= 0) {
      const collage_value& c = g.values[node.inputs[2]];
      return same_shape(c, out) || row_broadcast(out, c);
    }
    return true;
  }
  return false;
}

// One node of a compiled kernel: its op and the buffers it reads and writes.
struct Step {
  std::string op;
  std::vector<int32_t> inputs;
  int32_t output = -1;
  bool trans_b = false;
};

struct EigenKernel {
  // Every value's shape and, for weights, a copy of its data.
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<std::vector<float>> weights;
  std::vector<int32_t> inputs, outputs;
  std::vector<Step> steps;
  int threads = 1;
  // Intermediate buffers, by value.
  std::vector<std::vector<float>> scratch;
};

struct State {
  std::string error;
};

// Runs body(begin, end) over [0, n) in `threads` contiguous chunks (OpenMP),
// each at least 16 K elements.
template <typename Body>
void parallel_chunks(std::int64_t n, int threads, Body body) {
  const std::int64_t chunks = std::max<std::int64_t>(1, std::min<std::int64_t>(threads, n / 16384));
#pragma omp parallel for num_threads(static_cast <int>(chunks)) schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) body(n * c / chunks, n * (c + 1) / chunks);
}

std::int64_t count(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

int supports(void*, const collage_graph* graph, size_t node) {
  return node_supported(*graph, graph->nodes[node]) ? 1 : 0;
}

void* compile(void* state_ptr, const collage_graph* g, int32_t threads, const char** error) {
  State& state = *static_cast<State*>(state_ptr);
  auto kernel = std::make_unique<EigenKernel>();
  kernel->threads = threads > 0 ? threads : 1;
  kernel->shapes.resize(g->num_values);
  kernel->weights.resize(g->num_values);
  kernel->scratch.resize(g->num_values);
  for (size_t v = 0; v < g->num_values; ++v) {
    const collage_value& value = g->values[v];
    kernel->shapes[v].assign(value.shape, value.shape + value.rank);
    if (value.data != nullptr && value.dtype == COLLAGE_DTYPE_FLOAT32) {
      const float* data = static_cast<const float*>(value.data);
      kernel->weights[v].assign(data, data + elements(value));
    }
  }
  for (size_t n = 0; n < g->num_nodes; ++n) {
    const collage_node& node = g->nodes[n];
    if (!node_supported(*g, node)) {
      state.error = std::string("eigen does not run this ") + node.op_type;
      *error = state.error.c_str();
      return nullptr;
    }
    Step step;
    step.op = node.op_type;
    step.inputs.assign(node.inputs, node.inputs + node.num_inputs);
    step.output = node.outputs[0];
    step.trans_b = step.op == "Gemm" && int_attribute(node, "transB", 0) != 0;
    kernel->steps.push_back(step);
  }
  kernel->inputs.assign(g->inputs, g->inputs + g->num_inputs);
  kernel->outputs.assign(g->outputs, g->outputs + g->num_outputs);
  return kernel.release();
}

int run(void* kernel_ptr, const collage_tensor* inputs, size_t num_inputs, collage_tensor* outputs,
        size_t num_outputs, const char** error) {
  EigenKernel& k = *static_cast<EigenKernel*>(kernel_ptr);
#ifdef EIGEN_PLUGIN_CRASH
  // The crashing build: every kernel writes through a null pointer.
  *static_cast<volatile int*>(nullptr) = 1;
#endif
  if (num_inputs != k.inputs.size() || num_outputs != k.outputs.size()) {
    *error = "wrong number of tensors";
    return 1;
  }
  Eigen::setNbThreads(k.threads);
  // Where each value lives during this run.
  std::vector<float*> where(k.shapes.size(), nullptr);
  for (size_t v = 0; v < k.weights.size(); ++v) {
    if (!k.weights[v].empty()) where[v] = k.weights[v].data();
  }
  for (size_t i = 0; i < num_inputs; ++i) where[k.inputs[i]] = static_cast<float*>(inputs[i].data);
  for (size_t i = 0; i < num_outputs; ++i) {
    where[k.outputs[i]] = static_cast<float*>(outputs[i].data);
  }
  for (const Step& step : k.steps) {
    if (where[step.output] == nullptr) {
      k.scratch[step.output].resize(static_cast<size_t>(count(k.shapes[step.output])));
      where[step.output] = k.scratch[step.output].data();
    }
    const std::vector<std::int64_t>& out_shape = k.shapes[step.output];
    const std::int64_t n = count(out_shape);
    float* out = where[step.output];
    const float* a = where[step.inputs[0]];
    if (step.op == "Relu") {
      parallel_chunks(n, k.threads, [&](std::int64_t b, std::int64_t e) {
        ArrayMap(out + b, e - b) = ConstArrayMap(a + b, e - b).max(0.0f);
      });
    } else if (step.op == "Sigmoid") {
      parallel_chunks(n, k.threads, [&](std::int64_t b, std::int64_t e) {
        ArrayMap(out + b, e - b) = 1.0f / (1.0f + (-ConstArrayMap(a + b, e - b)).exp());
      });
    } else if (step.op == "Tanh") {
      parallel_chunks(n, k.threads, [&](std::int64_t b, std::int64_t e) {
        ArrayMap(out + b, e - b) = ConstArrayMap(a + b, e - b).tanh();
      });
    } else if (step.op == "Softmax") {
      // Row by row: the maximum, then exp of the shifted row, then its sum.
      const std::int64_t cols = out_shape.back();
      const std::int64_t rows = n / cols;
      parallel_chunks(n, k.threads, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t r = rows * b / n; r < rows * e / n; ++r) {
          ConstArrayMap x(a + r * cols, cols);
          ArrayMap y(out + r * cols, cols);
          y = (x - x.maxCoeff()).exp();
          y /= y.sum();
        }
      });
    } else if (step.op == "Add" || step.op == "Mul") {
      const float* b = where[step.inputs[1]];
      const std::int64_t b_count = count(k.shapes[step.inputs[1]]);
      const bool add = step.op == "Add";
      if (b_count == n) {
        parallel_chunks(n, k.threads, [&](std::int64_t s0, std::int64_t s1) {
          if (add) {
            ArrayMap(out + s0, s1 - s0) =
                ConstArrayMap(a + s0, s1 - s0) + ConstArrayMap(b + s0, s1 - s0);
          } else {
            ArrayMap(out + s0, s1 - s0) =
                ConstArrayMap(a + s0, s1 - s0) * ConstArrayMap(b + s0, s1 - s0);
          }
        });
      } else {
        ConstMatrixMap x(a, n / b_count, b_count);
        Eigen::Map<const Eigen::RowVectorXf> row(b, b_count);
        MatrixMap out_rows(out, n / b_count, b_count);
        if (add) {
          out_rows = x.rowwise() + row;
        } else {
          out_rows = (x.array().rowwise() * row.array()).matrix();
        }
      }
    } else {  // MatMul, Gemm
      const std::vector<std::int64_t>& a_shape = k.shapes[step.inputs[0]];
      const std::vector<std::int64_t>& b_shape = k.shapes[step.inputs[1]];
      const std::int64_t inner = a_shape.back();
      const std::int64_t rows = count(a_shape) / inner;
      const std::int64_t cols = out_shape.back();
      ConstMatrixMap x(a, rows, inner);
      MatrixMap product(out, rows, cols);
      const float* b = where[step.inputs[1]];
      if (step.trans_b) {
        product.noalias() = x * ConstMatrixMap(b, b_shape[0], b_shape[1]).transpose();
      } else {
        product.noalias() = x * ConstMatrixMap(b, b_shape[0], b_shape[1]);
      }
      if (step.inputs.size() == 3 && step.inputs[2] >= 0) {
        const float* c = where[step.inputs[2]];
        const std::int64_t c_count = count(k.shapes[step.inputs[2]]);
        if (c_count == n) {
          ArrayMap(out, n) += ConstArrayMap(c, n);
        } else {
          product.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(c, cols);
        }
      }
    }
  }
  return 0;
}

void free_kernel(void* kernel) { delete static_cast<EigenKernel*>(kernel); }

State the_state;

#define EIGEN_PLUGIN_STRING2(x) #x
#define EIGEN_PLUGIN_STRING(x) EIGEN_PLUGIN_STRING2(x)

const collage_backend_plugin the_plugin = {
    COLLAGE_PLUGIN_ABI_VERSION,
    "eigen",
    "Eigen " EIGEN_PLUGIN_STRING(EIGEN_WORLD_VERSION) "." EIGEN_PLUGIN_STRING(
        EIGEN_MAJOR_VERSION) "." EIGEN_PLUGIN_STRING(EIGEN_MINOR_VERSION),
    // A hash of this file (CMakeLists.txt), so that a changed plugin is
    // measured again.
    EIGEN_PLUGIN_CODE_VERSION,
    COLLAGE_STYLE_GRAPH,
    "MatMul (2-D weights), Gemm (transB, bias), Add and Mul (same shape or a row), Relu, Sigmoid, "
    "Tanh, Softmax (last axis); float32; any region of them as one kernel",
    "#e9a23b",
    COLLAGE_EDGE_LAYOUT_PLAIN,
    nullptr,
    &the_state,
    supports,
    compile,
    run,
    free_kernel,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const collage_backend_plugin*
collage_backend_plugin_v1(void) {
  return &the_plugin;
}
