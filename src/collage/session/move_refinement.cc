#include "collage/session/move_refinement.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "collage/backends/registry.h"
#include "collage/cost/measurer.h"
#include "collage/ir/error.h"
#include "collage/plan/plan_compiler.h"
#include "collage/runtime/interleaved_timing.h"
#include "collage/search/local_moves.h"

namespace collage {
namespace {

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

// A plan compiled and ready to run, with each partition's kernel times of
// the runs made since it was compiled.
struct RunnablePlan {
  Executor executor;
  std::vector<std::vector<double>> partition_seconds;

  void run(const std::map<std::string, Tensor>& inputs) {
    executor.run(inputs);
    const std::vector<double>& last = executor.last_partition_seconds();
    partition_seconds.resize(last.size());
    for (std::size_t i = 0; i < last.size(); ++i) partition_seconds[i].push_back(last[i]);
  }

  std::vector<double> partition_medians() const {
    std::vector<double> medians;
    for (const std::vector<double>& seconds : partition_seconds)
      medians.push_back(median_of(seconds));
    return medians;
  }
};

// A key naming a cover: each partition's backend and operators.
std::string cover_key(const std::vector<ChosenPartition>& partitions) {
  std::set<std::string> parts;
  for (const ChosenPartition& p : partitions) {
    parts.insert(p.candidate.spec_name() + ":" + p.candidate.sub_graph.inside().to_string());
  }
  return fmt::format("{}", fmt::join(parts, ";"));
}

// Why the outputs of `actual` differ from `expected`, if they do.
std::optional<std::string> outputs_differ(const std::map<std::string, Tensor>& actual,
                                          const std::map<std::string, Tensor>& expected) {
  for (const auto& [name, tensor] : expected) {
    auto it = actual.find(name);
    if (it == actual.end()) return fmt::format("output '{}' is missing", name);
    if (auto why = compare_outputs(it->second, tensor, 1e-3, 1e-4)) {
      return fmt::format("output '{}': {}", name, *why);
    }
  }
  return std::nullopt;
}

}  // namespace

MoveRefinement refine_by_moves(
    const Graph& graph, const DataflowGraph& dfg, std::vector<ChosenPartition> partitions,
    std::vector<double> in_context_seconds, const std::vector<EstimatedCandidate>& candidates,
    CostEstimator& estimator, BoundaryCosts* boundaries,
    const std::function<Plan(const std::vector<ChosenPartition>&)>& make_plan,
    const std::map<std::string, Tensor>& inputs, const MoveRefinementOptions& options) {
  auto report = [&](const std::string& line) {
    if (options.report) options.report(line);
  };
  auto out_of_time = [&] { return options.out_of_time && options.out_of_time(); };
  auto compile = [&](const std::vector<ChosenPartition>& cover) {
    Plan plan = make_plan(with_boundary_charges(dfg, cover, boundaries));
    return RunnablePlan{compile_plan(graph, plan, BackendRegistry::global(), options.threads), {}};
  };

  MoveRefinement result;
  RunnablePlan current = compile(partitions);
  std::map<std::string, Tensor> expected;
  for (auto& [name, tensor] : current.executor.run(inputs)) expected.emplace(name, tensor.clone());
  // Rounds enough for `timing_seconds` of timed runs per plan.
  int rounds = 10;
  {
    std::vector<TimingResult> first = time_interleaved({[&] { current.run(inputs); }}, 5, 1);
    double per_run = std::max(first[0].median_seconds, 1e-6);
    rounds = std::clamp(static_cast<int>(std::lround(options.timing_seconds / per_run)), 7, 60);
    result.measured_ms = first[0].median_seconds * 1e3;
  }

  std::set<std::string> tried = {cover_key(partitions)};
  for (bool improved = true; improved && !out_of_time();) {
    improved = false;
    std::vector<LocalMove> moves =
        propose_local_moves(dfg, partitions, candidates, in_context_seconds);
    for (const LocalMove& move : moves) {
      if (out_of_time()) break;
      std::string why;
      std::optional<MovedCover> moved = apply_local_move(dfg, partitions, move, estimator, why);
      if (!moved || !tried.insert(cover_key(moved->partitions)).second) continue;
      ++result.tried;
      std::optional<RunnablePlan> next;
      try {
        next = compile(moved->partitions);
      } catch (const Error& e) {
        // A move whose plan does not compile is not a move.
        report(fmt::format("move skipped, {}: {}", describe_move(partitions, move), e.what()));
        continue;
      }
      if (auto differ = outputs_differ(next->executor.run(inputs), expected)) {
        report(fmt::format("move skipped, {}: {}", describe_move(partitions, move), *differ));
        continue;
      }
      current.partition_seconds.clear();
      std::vector<TimingResult> timings =
          time_interleaved({[&] { current.run(inputs); }, [&] { next->run(inputs); }}, rounds, 1);
      double before = timings[0].median_seconds;
      double after = timings[1].median_seconds;
      result.measured_ms = before * 1e3;
      if (!(after < before * (1 - options.margin))) continue;

      ++result.kept;
      std::string line = fmt::format("{} ({:.3f} -> {:.3f} ms)", describe_move(partitions, move),
                                     before * 1e3, after * 1e3);
      result.kept_moves.push_back(line);
      report(fmt::format("move {}: {}", result.kept, line));
      // The moved plan becomes the plan; its partitions' times come from
      // the runs just made.
      partitions = std::move(moved->partitions);
      in_context_seconds = next->partition_medians();
      if (in_context_seconds.size() != partitions.size()) in_context_seconds.clear();
      current = std::move(*next);
      result.measured_ms = after * 1e3;
      improved = true;
      break;
    }
  }
  report(fmt::format("local moves: {} tried, {} kept, plan measured {:.3f} ms{}", result.tried,
                     result.kept, result.measured_ms, out_of_time() ? " (budget spent)" : ""));
  result.partitions = std::move(partitions);
  return result;
}

}  // namespace collage
