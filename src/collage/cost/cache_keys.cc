#include "collage/cost/cache_keys.h"

#include <fmt/format.h>

#include "collage/ir/structural_hash.h"

namespace collage {
namespace {

// The version of the rule that learns the overheads (overhead_learning.h):
// overheads learned by another rule are not reused.
constexpr const char* kOverheadLearningRule =
    "median excess of trimmed means over parts timed again with the profile, median over "
    "the model's profiles, tracing left out; the kept plan's charges fitted to five profiles, "
    "parts timed before and after each and settled; parts timed after a twin; the model's own "
    "inputs and outputs timed plain";

// The version of local moves (session/move_refinement.h) whose covers are
// kept: "5", moves that may start from a single-backend cover or the
// greedy one, a tie going to the single-backend cover, and may carve
// operators out of a partition.
constexpr int kLocalMovesVersion = 5;

// The version of how layout conversions are timed (cost/boundary_costs.h).
constexpr int kConversionTimingVersion = 2;

}  // namespace

std::string machine_key(const std::string& machine, const MeasureOptions& options,
                        const std::string& graph_opt) {
  return measurement_context(machine, options) + " graph-opt=" + graph_opt;
}

std::string backend_version_key(const Backend& backend) {
  std::string code = backend.code_version();
  return code.empty() ? backend.version() : backend.version() + " code " + code;
}

std::string measurement_key(const std::string& partition_hash, const std::string& backend_name,
                            const std::string& backend_version, const std::string& machine) {
  return partition_hash + "|" + backend_name + "|" + backend_version + "|" + machine;
}

std::string conversion_key(const std::string& what, int threads, const std::string& machine) {
  return fmt::format("layout conversion {}|{}|t{}|trimmed-mean|{}", kConversionTimingVersion, what,
                     threads, machine);
}

std::string model_key(const Graph& graph, const std::vector<const Backend*>& backends) {
  std::string versions;
  for (const Backend* backend : backends) versions += backend_version_key(*backend) + ";";
  return fmt::format("{}|code {:016x}", structural_hash_hex(graph), fnv1a_64(versions));
}

std::string overhead_key(const std::string& backend, const std::string& machine,
                         const std::string& model) {
  return std::string("in-context partition overhead|") + kOverheadLearningRule + "|" + model + "|" +
         backend + "|" + machine;
}

std::string model_overheads_learned(const std::string& model) { return model + "|learned"; }

std::string local_moves_key(const std::string& model, const std::string& machine,
                            const std::vector<std::string>& backends, int max_depth, int max_exits,
                            bool boundary_costs) {
  return fmt::format("local moves {}|{}|{}|{}|depth={} exits={} boundaries={}", kLocalMovesVersion,
                     model, machine, fmt::join(backends, ","), max_depth, max_exits,
                     boundary_costs);
}

std::string search_layout_key(const std::string& model, const std::string& machine) {
  return fmt::format("search layout 1|{}|{}", model, machine);
}

}  // namespace collage
