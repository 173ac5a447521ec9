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
#include "collage/runtime/timing.h"
#include "collage/runtime/trace.h"
#include "collage/search/local_moves.h"
#include "collage/session/evaluation.h"

namespace collage {
namespace {

// Traced runs of a plan whose operators' times in context predict carves.
constexpr int kTracedRuns = 5;

// The median over rounds of b's time over a's in the same round. Adjacent
// runs see the same machine; on a machine whose speed moves by tens of
// percent within a second, the ratios of pairs vary far less than either
// plan's times.
double paired_ratio(const TimingResult& a, const TimingResult& b) {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < a.sample_seconds.size() && i < b.sample_seconds.size(); ++i) {
    if (a.sample_seconds[i] > 0) ratios.push_back(b.sample_seconds[i] / a.sample_seconds[i]);
  }
  return ratios.empty() ? 1.0 : percentile(std::move(ratios), 0.5);
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
      medians.push_back(percentile(seconds, 0.5));
    return medians;
  }
};

// What each operator that a partition's kernel ran as a step of its own
// (a span naming one node and no fused chain) took in `runs` traced runs
// of `plan`, the median, by the operator's index in `dfg`.
std::map<PostDfsIndex, double> unfused_op_seconds(RunnablePlan& plan, const DataflowGraph& dfg,
                                                  const std::map<std::string, Tensor>& inputs,
                                                  int runs) {
  TraceRecorder recorder;
  plan.executor.record_into(&recorder);
  for (int i = 0; i < runs; ++i) plan.executor.run(inputs);
  plan.executor.record_into(nullptr);
  std::map<std::string, std::vector<double>> by_node;
  for (const TraceSpan& span : recorder.spans()) {
    if (span.kind != SpanKind::kOp || span.name.find('+') != std::string::npos) continue;
    for (const auto& [key, value] : span.args) {
      if (key == "node") by_node[value].push_back(span.duration_us * 1e-6);
    }
  }
  std::map<PostDfsIndex, double> seconds;
  for (auto& [name, times] : by_node) {
    // A step that ran more or fewer times than the plan did is not one
    // operator's (a loop body's).
    if (static_cast<int>(times.size()) != runs) continue;
    std::optional<NodeId> node = dfg.graph().find_node(name);
    if (!node) continue;
    seconds.emplace(dfg.index_of_node(*node), percentile(std::move(times), 0.5));
  }
  return seconds;
}

// A key naming a cover: each partition's backend and operators.
std::string cover_key(const std::vector<ChosenPartition>& partitions) {
  std::set<std::string> parts;
  for (const ChosenPartition& p : partitions) {
    parts.insert(p.candidate.spec_name() + ":" + p.candidate.sub_graph.inside().to_string());
  }
  return fmt::format("{}", fmt::join(parts, ";"));
}

}  // namespace

std::size_t choose_start(const std::vector<double>& ratios, const std::vector<bool>& one_backend,
                         double margin) {
  std::size_t chosen = 0;
  double chosen_ratio = 1 - margin;
  for (std::size_t k = 1; k < ratios.size(); ++k) {
    if (ratios[k] < chosen_ratio) {
      chosen = k;
      chosen_ratio = ratios[k];
    }
  }
  if (one_backend[chosen]) return chosen;
  std::optional<std::size_t> simpler;
  for (std::size_t k = 0; k < ratios.size(); ++k) {
    if (one_backend[k] && (!simpler || ratios[k] < ratios[*simpler])) simpler = k;
  }
  if (simpler && ratios[*simpler] < ratios[chosen] * (1 + margin)) return *simpler;
  return chosen;
}

std::vector<LocalMove> carves_to_try_first(std::vector<LocalMove> moves, double gap_seconds) {
  std::erase_if(moves, [&](const LocalMove& move) {
    return move.kind != LocalMove::Kind::kCarve || !(move.predicted_seconds < -gap_seconds);
  });
  std::stable_sort(moves.begin(), moves.end(), [](const LocalMove& a, const LocalMove& b) {
    return a.predicted_seconds < b.predicted_seconds;
  });
  if (moves.size() > kRegionCarves) moves.resize(kRegionCarves);
  return moves;
}

std::vector<std::pair<std::string, double>> drop_implausible_starts(std::vector<MoveStart>& starts,
                                                                    double max_ratio) {
  std::vector<std::pair<std::string, double>> dropped;
  if (starts.empty()) return dropped;
  const double first = total_cost(starts.front().partitions).seconds();
  std::vector<MoveStart> kept;
  kept.push_back(std::move(starts.front()));
  for (std::size_t i = 1; i < starts.size(); ++i) {
    const double estimate = total_cost(starts[i].partitions).seconds();
    if (estimate > max_ratio * first) {
      dropped.emplace_back(starts[i].name, estimate * 1e3);
    } else {
      kept.push_back(std::move(starts[i]));
    }
  }
  starts = std::move(kept);
  return dropped;
}

MoveRefinement refine_by_moves(
    const Graph& graph, const DataflowGraph& dfg, const std::vector<MoveStart>& starts,
    const std::vector<EstimatedCandidate>& candidates, CostEstimator& estimator,
    BoundaryCosts* boundaries,
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
  if (starts.empty()) throw Error("local moves need a cover to start from");

  MoveRefinement result;
  // The starts that compile and compute the first start's outputs.
  std::vector<RunnablePlan> runnable;
  std::vector<std::size_t> runnable_start;
  std::map<std::string, Tensor> expected;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    try {
      RunnablePlan plan = compile(starts[i].partitions);
      std::map<std::string, Tensor> outputs = run_checked(graph, plan.executor, inputs);
      if (i == 0) {
        for (auto& [name, tensor] : outputs) expected.emplace(name, tensor.clone());
      } else if (auto differ = outputs_differ(outputs, expected, plan_output_tolerance(graph))) {
        report(fmt::format("start {} skipped: {}", starts[i].name, *differ));
        continue;
      }
      runnable.push_back(std::move(plan));
      runnable_start.push_back(i);
    } catch (const Error& e) {
      if (i == 0) throw;
      report(fmt::format("start {} skipped: {}", starts[i].name, e.what()));
    }
  }
  // Rounds enough for `timing_seconds` of timed runs per plan.
  int rounds = 10;
  {
    std::vector<TimingResult> first = time_interleaved({[&] { runnable[0].run(inputs); }}, 5, 1);
    double per_run = std::max(first[0].median_seconds, 1e-6);
    rounds = std::clamp(static_cast<int>(std::lround(options.timing_seconds / per_run)), 7, 60);
  }
  // The starts side by side; choose_start() picks where the moves begin.
  std::size_t fastest = 0;
  {
    std::vector<std::function<void()>> runs;
    for (RunnablePlan& plan : runnable) {
      plan.partition_seconds.clear();
      runs.push_back([&plan, &inputs] { plan.run(inputs); });
    }
    std::vector<TimingResult> timings = time_interleaved(runs, rounds, 1);
    // Each start's time relative to the first, round by round.
    std::vector<double> ratios;
    std::vector<bool> one_backend;
    for (std::size_t k = 0; k < runnable.size(); ++k) {
      result.start_ms.emplace_back(starts[runnable_start[k]].name, timings[k].median_seconds * 1e3);
      ratios.push_back(paired_ratio(timings[0], timings[k]));
      one_backend.push_back(starts[runnable_start[k]].one_backend);
    }
    fastest = choose_start(ratios, one_backend, options.margin);
  }
  std::vector<ChosenPartition> partitions = starts[runnable_start[fastest]].partitions;
  result.start = starts[runnable_start[fastest]].name;
  result.measured_ms = result.start_ms[fastest].second;
  // The fastest one-backend start when the moves begin from a mixed one:
  // its carves (an operator given to the backend that ran it faster alone)
  // are moves the mixed start does not offer, since there the operator's
  // neighbours are no longer one region to carve it from. DeepLab v3's
  // dilation-12 convolution carved out of oneDNN's region ran the plan in
  // 0.71x single:onednn's time, where the searched plan, the faster start,
  // ran 1.07x.
  std::optional<MoveStart> region;
  std::vector<double> region_in_context;
  double region_gap_seconds = 0;
  std::map<PostDfsIndex, double> region_op_seconds;
  if (!starts[runnable_start[fastest]].one_backend) {
    std::optional<std::size_t> best;
    for (std::size_t k = 0; k < runnable.size(); ++k) {
      if (starts[runnable_start[k]].one_backend &&
          (!best || result.start_ms[k].second < result.start_ms[*best].second)) {
        best = k;
      }
    }
    if (best) {
      region = starts[runnable_start[*best]];
      region_in_context = runnable[*best].partition_medians();
      if (region_in_context.size() != region->partitions.size()) region_in_context.clear();
      region_op_seconds = unfused_op_seconds(runnable[*best], dfg, inputs, kTracedRuns);
      region_gap_seconds = (result.start_ms[*best].second - result.start_ms[fastest].second) * 1e-3;
    }
  }
  RunnablePlan current = std::move(runnable[fastest]);
  // The start, kept to check the moves' sum at the end.
  std::vector<ChosenPartition> start_partitions = partitions;
  std::optional<RunnablePlan> start;
  runnable.clear();
  std::vector<double> in_context_seconds = current.partition_medians();
  if (in_context_seconds.size() != partitions.size()) in_context_seconds.clear();
  std::map<PostDfsIndex, double> op_seconds = unfused_op_seconds(current, dfg, inputs, kTracedRuns);
  // `a` and `b` timed side by side: their medians in milliseconds, and the
  // paired ratio b / a.
  struct Pair {
    double a_ms, b_ms, ratio;
  };
  auto time_pair = [&](RunnablePlan& a, RunnablePlan& b, int times = 1) {
    std::vector<TimingResult> timings =
        time_interleaved({[&] { a.run(inputs); }, [&] { b.run(inputs); }}, rounds * times, 1);
    return Pair{timings[0].median_seconds * 1e3, timings[1].median_seconds * 1e3,
                paired_ratio(timings[0], timings[1])};
  };
  {
    std::vector<std::string> timed;
    for (const auto& [name, ms] : result.start_ms)
      timed.push_back(fmt::format("{} {:.3f} ms", name, ms));
    report(fmt::format("local moves start from {} ({})", result.start, fmt::join(timed, ", ")));
  }

  std::set<std::string> tried = {cover_key(partitions)};
  // Makes `move` of the cover `from` (the current partitions, or another
  // start's, named `origin` in reports) and times it against the current
  // plan; a move faster twice in a row becomes the plan. Returns whether it
  // did.
  auto try_move = [&](const std::vector<ChosenPartition>& from, const LocalMove& move,
                      const std::string& origin) {
    std::string why;
    std::optional<MovedCover> moved =
        apply_local_move(dfg, from, move, estimator, why, options.added_fidelity);
    if (!moved || !tried.insert(cover_key(moved->partitions)).second) return false;
    ++result.tried;
    const std::string described = origin + describe_move(from, move);
    std::optional<RunnablePlan> next;
    try {
      next = compile(moved->partitions);
    } catch (const Error& e) {
      // A move whose plan does not compile is not a move.
      report(fmt::format("move skipped, {}: {}", described, e.what()));
      return false;
    }
    if (auto differ = outputs_differ(run_checked(graph, next->executor, inputs), expected,
                                     plan_output_tolerance(graph))) {
      report(fmt::format("move skipped, {}: {}", described, *differ));
      return false;
    }
    current.partition_seconds.clear();
    // Faster in two timings in a row: one alone, among many moves tried,
    // is often faster by chance on a noisy machine.
    Pair first = time_pair(current, *next);
    result.measured_ms = first.a_ms;
    if (!(first.ratio < 1 - options.margin)) return false;
    Pair again = time_pair(current, *next);
    std::string timed = fmt::format(
        "{:.3f} -> {:.3f} ms, ratio {:.3f}; then {:.3f} -> {:.3f} ms, "
        "ratio {:.3f}",
        first.a_ms, first.b_ms, first.ratio, again.a_ms, again.b_ms, again.ratio);
    if (!(again.ratio < 1 - options.margin)) {
      report(fmt::format("move not confirmed, {} ({})", described, timed));
      return false;
    }
    ++result.kept;
    report(fmt::format("move {}: {} ({})", result.kept, described, timed));
    // The moved plan becomes the plan; its partitions' times come from
    // the runs just made.
    partitions = std::move(moved->partitions);
    in_context_seconds = next->partition_medians();
    if (in_context_seconds.size() != partitions.size()) in_context_seconds.clear();
    op_seconds = unfused_op_seconds(*next, dfg, inputs, kTracedRuns);
    if (!start) start = std::move(current);
    current = std::move(*next);
    result.measured_ms = again.b_ms;
    return true;
  };

  // First the one-backend start's carves that are predicted to make it
  // faster than the start the moves begin from, most promising first.
  if (region) {
    const std::vector<LocalMove> carves =
        carves_to_try_first(propose_local_moves(dfg, region->partitions, candidates,
                                                region_in_context, boundaries, region_op_seconds),
                            region_gap_seconds);
    for (const LocalMove& move : carves) {
      if (out_of_time() || try_move(region->partitions, move, "from " + region->name + ", ")) break;
    }
  }
  for (bool improved = true; improved && !out_of_time();) {
    improved = false;
    std::vector<LocalMove> moves = propose_local_moves(dfg, partitions, candidates,
                                                       in_context_seconds, boundaries, op_seconds);
    for (const LocalMove& move : moves) {
      if (out_of_time()) break;
      if (try_move(partitions, move, "")) {
        improved = true;
        break;
      }
    }
  }
  // The moves together, against the start: each was faster than the plan
  // before it, but on a noisy machine small gains can sum to nothing.
  if (start) {
    Pair last = time_pair(*start, current, 2);
    if (!(last.ratio < 1)) {
      report(
          fmt::format("moves dropped: the plan after {} moves ran {:.3f} ms, its start "
                      "{:.3f} ms (ratio {:.3f})",
                      result.kept, last.b_ms, last.a_ms, last.ratio));
      partitions = std::move(start_partitions);
      result.kept = 0;
      result.measured_ms = last.a_ms;
    } else {
      report(
          fmt::format("the plan after {} moves ran {:.3f} ms, its start {:.3f} ms (ratio {:.3f})",
                      result.kept, last.b_ms, last.a_ms, last.ratio));
      result.measured_ms = last.b_ms;
    }
  }
  report(fmt::format("local moves: {} tried, {} kept, plan measured {:.3f} ms{}", result.tried,
                     result.kept, result.measured_ms, out_of_time() ? " (budget spent)" : ""));
  result.partitions = std::move(partitions);
  return result;
}

}  // namespace collage
