// The flags the subcommands share, each declared once: --input-shape,
// --graph-opt, --threads, --max-memory and the search's limits. What they
// mean and how values are validated lives in the library (session/); this is
// only how the command line spells them.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "collage/ir/tensor_type.h"
#include "collage/session/planning.h"

namespace collage::cli {

// Adds the repeatable --input-shape NAME=D0,D1,... to `command`.
void add_input_shape_flag(CLI::App& command, std::vector<std::string>& flags);

// Parses every --input-shape value. Throws Error for malformed text or a
// name given twice.
std::map<std::string, Shape> parse_input_shapes(const std::vector<std::string>& flags);

// Parses --input-shape values for `tune`, which makes a plan per shape: an
// input may be named more than once, and a dimension may be a range LO..HI,
// which stands for LO, the powers of two between, and HI (320..640: 320,
// 512, 640). An input's shapes go to the plans in order; inputs with one
// shape have it in every plan; inputs with several must have the same
// number (so that ids=1,8..64 and mask=1,8..64 pair up), as must the ranges
// of one value. Throws Error for malformed text, counts that differ, a shape
// set given twice, or more than kMaxShapeSets plans.
inline constexpr std::size_t kMaxShapeSets = 32;
std::vector<std::map<std::string, Shape>> parse_input_shape_sets(
    const std::vector<std::string>& flags);

// Adds --graph-opt LEVEL (none, basic, all; default all) to `command`.
CLI::Option* add_graph_opt_flag(CLI::App& command, std::string& level);

// Adds --threads (default: every core) to `command`.
CLI::Option* add_threads_flag(CLI::App& command, int& threads);

// Adds the repeatable --backend-plugin PATH.so to `command`.
void add_backend_plugin_flag(CLI::App& command, std::vector<std::string>& paths);

// Loads each backend plugin (BackendRegistry::load_plugin); Error naming a
// file that is not one.
void load_backend_plugins(const std::vector<std::string>& paths);

// Adds --max-memory to `command` (empty `text`: the default budget).
void add_max_memory_flag(CLI::App& command, std::string& text);

// The flags of the commands that search (tune, compare), declared once.
struct PlanningFlags {
  std::string model;
  std::vector<std::string> input_shapes;
  std::string graph_opt = "all";
  std::string backends = "all";
  std::string cache;
  std::string max_memory;
  int threads = 0;
  int repeat = 10;
  bool no_isolation = false;
  // "local" or "remote" (measurement jobs for `collage worker`s).
  std::string workers = "local";
  bool no_local_measure = false;
  bool prune = false;
  bool quiet = false;
  SearchSettings search;
  // Placement constraints (docs/placement.md).
  std::vector<std::string> place;
  std::vector<std::string> avoid;
  std::string patterns;
  std::vector<std::string> backend_plugins;
};

// Adds the model argument and every PlanningFlags flag to `command`;
// `backends_help` and `repeat_help` say what --backends and --repeat mean there.
void add_planning_flags(CLI::App& command, PlanningFlags& flags, const std::string& backends_help,
                        const std::string& repeat_help);

// The validated PlanningOptions the flags give (Error naming a bad flag),
// drawing progress on stderr unless --quiet.
PlanningOptions planning_options(const PlanningFlags& flags);

}  // namespace collage::cli
