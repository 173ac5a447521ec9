#include "collage/backends/openblas/openblas_backend.h"

#include <fmt/format.h>

#include "code_version.h"
#include "collage/backends/openblas/activation.h"
#include "collage/backends/openblas/blas.h"
#include "collage/backends/openblas/fused_kernel.h"
#include "collage/backends/openblas/head_op.h"
#include "collage/backends/openblas/openblas_patterns.h"

namespace collage {
namespace {

class OpenBlasBackend : public Backend {
 public:
  std::string name() const override { return "openblas"; }
  std::string version() const override { return openblas::library_version(); }
  std::string code_version() const override { return COLLAGE_CODE_VERSION; }
  BackendStyle style() const override { return BackendStyle::kLibrary; }

  bool supports(const Graph& graph, const Node& node) const override {
    return openblas::is_head_op(node.op_type) && openblas::analyze_head_op(graph, node).ok();
  }

  std::vector<NamedPattern> patterns() const override { return openblas::openblas_patterns(); }

  std::string report_color() const override { return "#ffb703"; }
  std::string describe_support() const override {
    std::vector<std::string_view> ops;
    for (const openblas::HeadOpRow& row : openblas::head_op_table()) ops.push_back(row.covers);
    return fmt::format(
        "ops: {}, float32 only; single-row or single-column products use sgemv\n"
        "patterns: conv|gemm followed by Add (bias or residual), Add+Add, and/or one of {} "
        "(fused epilogue after sgemm)",
        fmt::join(ops, ", "), fmt::join(openblas::activation_ops(), ", "));
  }

  Result<std::unique_ptr<Kernel>> compile(const Graph& partition,
                                          const CompileOptions& options) const override {
    return openblas::compile_partition(partition, options.threads);
  }
};

}  // namespace

std::unique_ptr<Backend> make_openblas_backend() { return std::make_unique<OpenBlasBackend>(); }

}  // namespace collage
