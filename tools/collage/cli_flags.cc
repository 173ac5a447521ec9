#include "cli_flags.h"

#include <fmt/format.h>

#include "collage/backends/registry.h"
#include "collage/ir/error.h"
#include "collage/onnx/importer.h"
#include "collage/runtime/memory_budget.h"
#include "collage/session/model_loading.h"
#include "collage/session/resources.h"
#include "collage/session/shape_plans.h"
#include "progress.h"

namespace collage::cli {

void add_input_shape_flag(CLI::App& command, std::vector<std::string>& flags) {
  command.add_option("--input-shape", flags, "fix an input's shape: NAME=D0,D1,... (repeatable)")
      ->allow_extra_args(false);
}

std::map<std::string, Shape> parse_input_shapes(const std::vector<std::string>& flags) {
  std::map<std::string, Shape> shapes;
  for (const std::string& flag : flags) {
    std::pair<std::string, Shape> parsed;
    try {
      parsed = parse_input_shape(flag);
    } catch (const Error& e) {
      if (!e.where().field.empty()) throw;
      throw Error(e.message(), {.field = "--input-shape " + quote_untrusted(flag)});
    }
    if (!shapes.emplace(parsed.first, parsed.second).second) {
      throw Error(fmt::format("input '{}' is given twice", parsed.first),
                  {.field = "--input-shape"});
    }
  }
  return shapes;
}

namespace {

// The sizes a range LO..HI of one dimension stands for.
std::vector<std::int64_t> range_sizes(std::int64_t low, std::int64_t high) {
  std::vector<std::int64_t> sizes{low};
  for (std::int64_t power = 2; power < high; power *= 2) {
    if (power > low) sizes.push_back(power);
    if (power > high / 2) break;
  }
  if (high > low) sizes.push_back(high);
  return sizes;
}

// A dimension of an --input-shape value: a size, or LO..HI.
std::vector<std::int64_t> parse_dimension_sizes(const std::string& text, const std::string& flag) {
  auto number = [&](const std::string& part) {
    std::optional<std::int64_t> value = parse_dimension(part);
    if (!value) {
      throw Error(quote_untrusted(flag) + " is not NAME=D0,D1,... (each D a size or LO..HI)",
                  {.field = "--input-shape"});
    }
    return *value;
  };
  const std::size_t dots = text.find("..");
  if (dots == std::string::npos) return {number(text)};
  const std::int64_t low = number(text.substr(0, dots));
  const std::int64_t high = number(text.substr(dots + 2));
  if (low < 1 || high <= low) {
    throw Error(fmt::format("range {} must have 1 <= LO < HI", quote_untrusted(text)),
                {.field = "--input-shape " + quote_untrusted(flag)});
  }
  return range_sizes(low, high);
}

// The shapes one --input-shape value stands for: one, or one per size of
// its ranges, which go together in order.
std::pair<std::string, std::vector<Shape>> parse_shape_flag(const std::string& flag) {
  const std::size_t eq = flag.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size()) {
    throw Error(quote_untrusted(flag) + " is not NAME=D0,D1,...", {.field = "--input-shape"});
  }
  std::vector<std::vector<std::int64_t>> dims;
  std::size_t count = 1;
  std::string rest = flag.substr(eq + 1);
  for (std::size_t start = 0;;) {
    const std::size_t comma = rest.find(',', start);
    dims.push_back(parse_dimension_sizes(rest.substr(start, comma - start), flag));
    if (dims.back().size() > 1) {
      if (count > 1 && dims.back().size() != count) {
        throw Error(fmt::format("its ranges stand for {} and {} sizes; ranges of one input go "
                                "together in order, so they must stand for as many",
                                count, dims.back().size()),
                    {.field = "--input-shape " + quote_untrusted(flag)});
      }
      count = dims.back().size();
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::vector<Shape> shapes(count);
  for (std::size_t i = 0; i < count; ++i) {
    for (const std::vector<std::int64_t>& sizes : dims)
      shapes[i].push_back(sizes.size() == 1 ? sizes.front() : sizes[i]);
  }
  return {flag.substr(0, eq), std::move(shapes)};
}

}  // namespace

std::vector<std::map<std::string, Shape>> parse_input_shape_sets(
    const std::vector<std::string>& flags) {
  std::map<std::string, std::vector<Shape>> per_input;
  for (const std::string& flag : flags) {
    auto [name, shapes] = parse_shape_flag(flag);
    std::vector<Shape>& all = per_input[name];
    all.insert(all.end(), shapes.begin(), shapes.end());
  }
  std::size_t count = 1;
  std::string counted;
  for (const auto& [name, shapes] : per_input) {
    if (shapes.size() == 1) continue;
    if (count > 1 && shapes.size() != count) {
      throw Error(fmt::format("gives {} shapes for '{}' and {} for '{}': the shapes of inputs "
                              "given several go to the plans in order, so give each as many",
                              count, counted, shapes.size(), name),
                  {.field = "--input-shape"});
    }
    count = shapes.size();
    counted = name;
  }
  if (count > kMaxShapeSets) {
    throw Error(fmt::format("asks for {} plans, more than {}: give fewer shapes or a narrower "
                            "range",
                            count, kMaxShapeSets),
                {.field = "--input-shape"});
  }
  std::vector<std::map<std::string, Shape>> sets(count);
  for (std::size_t i = 0; i < count; ++i) {
    for (const auto& [name, shapes] : per_input)
      sets[i].emplace(name, shapes.size() == 1 ? shapes.front() : shapes[i]);
  }
  if (auto repeat = first_repeated_shapes(sets)) {
    throw Error(
        fmt::format("gives the shapes {} twice", escape_control(shapes_text(sets[repeat->second]))),
        {.field = "--input-shape"});
  }
  return sets;
}

CLI::Option* add_graph_opt_flag(CLI::App& command, std::string& level) {
  return command
      .add_option("--graph-opt", level,
                  "Graph optimizations before partitioning: none, basic (remove redundant work, "
                  "fold scales into weights) or all (also fuse LayerNorm, Gelu, Swish, "
                  "HardSwish chains into one op each)")
      ->check(CLI::IsMember({"none", "basic", "all"}))
      ->capture_default_str();
}

CLI::Option* add_threads_flag(CLI::App& command, int& threads) {
  threads = default_threads();
  return command.add_option("--threads", threads, "threads for every backend (default: all cores)")
      ->capture_default_str();
}

void add_backend_plugin_flag(CLI::App& command, std::vector<std::string>& paths) {
  command
      .add_option("--backend-plugin", paths,
                  "load a backend from a shared library (include/collage/backend_plugin.h, "
                  "docs/plugins.md; repeatable; also $COLLAGE_BACKEND_PLUGINS, ':'-separated)")
      ->allow_extra_args(false);
}

void load_backend_plugins(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) BackendRegistry::load_plugin(path);
}

void add_max_memory_flag(CLI::App& command, std::string& text) {
  command.add_option("--max-memory", text,
                     fmt::format("refuse a model whose tensors need more than this many bytes "
                                 "(K, M, G suffixes; default: 3/4 of physical memory, {})",
                                 format_bytes(default_memory_budget())));
}

namespace {

void add_search_flags(CLI::App& command, SearchSettings& settings) {
  command
      .add_option("--refine-rounds", settings.refine_rounds,
                  "rounds of: profile the plan in context, charge each backend's observed "
                  "per-partition overhead, search again (0: search once)")
      ->capture_default_str();
  command
      .add_option("--budget", settings.budget_seconds,
                  "seconds after which refinement (re-search rounds, then local moves) starts "
                  "nothing new; the rounds start none after half of it (measuring the "
                  "candidates is not counted)")
      ->capture_default_str();
  command.add_flag("!--no-local-moves", settings.local_moves,
                   "keep the searched plan as it is, without trying local moves (merge "
                   "neighbours, move a boundary, the runner-up backend, carve an operator out "
                   "to a faster backend) measured end to end");
  command.add_flag("--screen,!--no-screen", settings.screen,
                   "screen candidates with a short timing and time in full only those that can "
                   "still enter the cheapest cover, the default: about a quarter of the "
                   "measurements (docs/partitioning.md, \"Screening\"); --no-screen times every "
                   "candidate in full");
  command
      .add_option("--search-layout", settings.layout,
                  "the layout the search measures a backend that computes in several in (oneDNN: "
                  "its own or blocked-16): each, a search in each, every searched plan then run "
                  "beside the baselines; own; auto, which times that backend's single plan in "
                  "each first and searches in the fastest; channels-last, blocked-8 or blocked-16")
      ->capture_default_str();
  command.add_flag("!--no-boundary-costs", settings.boundary_costs,
                   "search without charging the layout conversions between partitions of "
                   "different layout families (for comparison)");
  command
      .add_option("--max-depth", settings.max_depth,
                  "longest path inside a graph-runtime or fusing-compiler candidate")
      ->capture_default_str();
  command
      .add_option("--max-exits", settings.max_exits,
                  "most outputs of a graph-runtime or fusing-compiler candidate (library calls "
                  "always have one)")
      ->capture_default_str();
}

}  // namespace

void add_planning_flags(CLI::App& command, PlanningFlags& flags, const std::string& backends_help,
                        const std::string& repeat_help) {
  command.add_option("model", flags.model, "ONNX model file")->required();
  add_input_shape_flag(command, flags.input_shapes);
  add_graph_opt_flag(command, flags.graph_opt);
  command.add_option("--backends", flags.backends, backends_help)->capture_default_str();
  command.add_option(
      "--cache", flags.cache,
      "measurement cache: a file, or a PostgreSQL database "
      "(postgresql://user@host/db, docs/fleet.md) (default: $COLLAGE_CACHE_URL, else "
      "$XDG_CACHE_HOME/collage/measurements.sqlite; 'none' for no cache)");
  add_threads_flag(command, flags.threads);
  add_max_memory_flag(command, flags.max_memory);
  command.add_option("--repeat", flags.repeat, repeat_help)->capture_default_str();
  command.add_flag("--no-isolation", flags.no_isolation,
                   "measure candidates in this process (faster start, but a crashing backend "
                   "ends the run)");
  command
      .add_option("--workers", flags.workers,
                  "where candidates are measured: 'local' (here), or 'remote' (as jobs in the "
                  "PostgreSQL cache that `collage worker` processes on machines of this class "
                  "take; docs/fleet.md)")
      ->check(CLI::IsMember({"local", "remote"}))
      ->capture_default_str();
  command.add_flag("--no-local-measure", flags.no_local_measure,
                   "with --workers remote: leave every job to the workers");
  command.add_flag("--prune", flags.prune, "measure only the maximal candidates of each backend");
  command.add_flag("-q,--quiet", flags.quiet, "no progress display");
  add_search_flags(command, flags.search);
  add_backend_plugin_flag(command, flags.backend_plugins);
  command
      .add_option("--place", flags.place,
                  "run these nodes on this backend only: NODES=BACKEND, NODES a node name or "
                  "op:OP_TYPE, * and ? as wildcards ('Conv_12=onednn', 'op:Softmax=native'; "
                  "repeatable)")
      ->allow_extra_args(false);
  command
      .add_option("--avoid", flags.avoid,
                  "never run these nodes on this backend: BACKEND:NODES ('xnnpack:op:Softmax'; "
                  "repeatable)")
      ->allow_extra_args(false);
  command.add_option("--patterns", flags.patterns,
                     "JSON file of pattern rules of your own for existing backends "
                     "(docs/placement.md)");
}

PlanningOptions planning_options(const PlanningFlags& flags) {
  load_backend_plugins(flags.backend_plugins);
  PlanningOptions options;
  options.model_path = flags.model;
  options.input_shapes = parse_input_shapes(flags.input_shapes);
  options.graph_opt = graph_opt_level(flags.graph_opt);
  options.backends = parse_backend_list(flags.backends);
  options.threads = checked_threads(flags.threads);
  options.cache_path = flags.cache;
  options.isolate = !flags.no_isolation;
  options.remote_workers = flags.workers == "remote";
  options.measure_locally = !flags.no_local_measure;
  if (flags.no_local_measure && !options.remote_workers) {
    throw Error("only means something with --workers remote", {.field = "--no-local-measure"});
  }
  options.prune = flags.prune;
  options.search = flags.search;
  for (const std::string& text : flags.place) options.placement.pin(text);
  for (const std::string& text : flags.avoid) options.placement.avoid(text);
  if (!flags.patterns.empty()) options.placement.add_patterns_file(flags.patterns);
  options.progress = progress_printer(!flags.quiet);
  check_search_settings(options.search);
  if (flags.repeat < 1) throw Error("must be at least 1", {.field = "--repeat"});
  resolve_backends(options.backends);
  return options;
}

}  // namespace collage::cli
