// Move refinement: the searched plan improved by local moves, each measured
// end to end.
//
// After the shortest path (and its re-search rounds), the plan is the best
// cover under the cost model; where the model is wrong, a measurement of
// the whole plan is not. The refinement starts from the fastest of a few
// covers (the searched one, each backend's single-backend cover and the
// greedy placement, made of the same candidates), timed side by side. Each local move
// (search/local_moves.h) is made on a copy of the plan, compiled, checked
// against the current plan's outputs, and timed beside it (A B A B ...,
// each timed run settled). A move that is faster by more than the noise
// margin in two such timings in a row becomes the plan; the moves are then
// proposed again around it. When the start is a mixed cover and a
// one-backend cover was among the starts, its carves (an operator of its
// region given to the backend that ran it faster alone) are tried first,
// the two predicted to gain the most, if they are predicted to beat the
// start's lead: from a mixed start they cannot be proposed, the region being
// cut up already. At the end the plan is timed against its start
// once more, and the start returned if the moves together did not make it
// faster. Anytime: it stops when no proposed move is left or the budget runs out,
// and the plan it returns was measured no slower than the covers it
// started from.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collage/cost/boundary_costs.h"
#include "collage/cost/cost_estimator.h"
#include "collage/ir/graph.h"
#include "collage/ir/tensor.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/plan/plan.h"
#include "collage/search/collage_partitioner.h"
#include "collage/search/local_moves.h"
#include "collage/search/shortest_path.h"

namespace collage {

struct MoveRefinementOptions {
  int threads = 1;
  // A move is kept when its median is below the current plan's by more
  // than this fraction.
  double margin = 0.015;
  // Seconds of timing per plan and comparison (rounds grow for fast plans).
  double timing_seconds = 0.25;
  // True when no new move may be tried.
  std::function<bool()> out_of_time;
  // One line per kept move, and a summary at the end; may be empty.
  std::function<void(const std::string&)> report;
  // How surely a move's added partitions are costed before it is timed
  // end to end (apply_local_move()).
  Fidelity added_fidelity = Fidelity::kExact;
};

// A cover to start from: a name for reports ("searched", "single:onednn")
// and its partitions (costs without boundary charges). `one_backend` marks
// the cover a single-backend strategy runs: simpler than a mixed cover, it
// is preferred where it ran within the margin of the fastest start.
struct MoveStart {
  std::string name;
  std::vector<ChosenPartition> partitions;
  bool one_backend = false;
};

struct MoveRefinement {
  // The start the moves were made from, and each start's median when they
  // were timed side by side (milliseconds, in the order given; a start
  // that failed to compile or whose outputs differ is left out).
  std::string start;
  std::vector<std::pair<std::string, double>> start_ms;
  // The plan's partitions after the kept moves, in an execution order,
  // costs without boundary charges.
  std::vector<ChosenPartition> partitions;
  // The last end-to-end median of that plan, in milliseconds.
  double measured_ms = 0;
  int tried = 0;
  int kept = 0;
};

// Which of the starts the moves begin from, given each start's time over
// the first's (the median over rounds of the paired ratio; the first's is
// 1) and whether it is a one-backend cover. Another start replaces the
// first only when faster by `margin`, as a move must be. Then a tie goes to
// the simpler cover: a one-backend start within `margin` of the chosen
// mixed one replaces it (the fastest such), since one library has no
// boundary between libraries where the cost model may have missed
// something, and a mixed cover that close is not shown to be faster.
// ResNet-50's searched cover, single:onednn's cut differently, ran 1 to 3 %
// slower than it, too close for single:onednn to replace it by the first rule.
std::size_t choose_start(const std::vector<double>& ratios, const std::vector<bool>& one_backend,
                         double margin);

// A start estimated at more than this many times the first start is not
// worth compiling and timing: estimates are off by tens of percent, not by
// 2x. On maxvit_t, compiling and timing all six starts (the slowest
// estimated at 6x the searched cover) spent the whole budget before a move.
inline constexpr double kMaxStartEstimateRatio = 2.0;

// Removes from `starts` (after the first, the searched cover) those whose
// estimate (the sum of their partitions' costs) is more than `max_ratio`
// times the first's; returns what each removed one was estimated at (ms).
std::vector<std::pair<std::string, double>> drop_implausible_starts(std::vector<MoveStart>& starts,
                                                                    double max_ratio);

// How many carves of a one-backend start refine_by_moves() tries before
// the moves of a mixed start that ran faster.
inline constexpr std::size_t kRegionCarves = 2;

// Of `moves` (proposed on a one-backend start that ran `gap_seconds`
// slower than the mixed start the moves begin from), the carves predicted
// to gain more than that gap, at most kRegionCarves, the largest predicted
// gain first.
std::vector<LocalMove> carves_to_try_first(std::vector<LocalMove> moves, double gap_seconds);

// Refines the start that choose_start() picks from `starts` (covers of
// `dfg`, timed side by side; the first is the reference whose outputs the
// others must match, and must compile) of
// `graph`. `make_plan` turns partitions with their boundaries charged into
// the plan to compile. A start or move whose plan fails to compile or whose
// outputs differ is skipped.
MoveRefinement refine_by_moves(
    const Graph& graph, const DataflowGraph& dfg, const std::vector<MoveStart>& starts,
    const std::vector<EstimatedCandidate>& candidates, CostEstimator& estimator,
    BoundaryCosts* boundaries,
    const std::function<Plan(const std::vector<ChosenPartition>&)>& make_plan,
    const std::map<std::string, Tensor>& inputs, const MoveRefinementOptions& options);

}  // namespace collage
