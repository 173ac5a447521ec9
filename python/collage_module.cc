// The Python module `collage` (python/collage/__init__.py imports it as
// collage._collage): Session, tune, compare and backends over the C++ API,
// with numpy arrays in and out.
//
// Inputs that are C-contiguous arrays of the model's element type are read
// in place; outputs are numpy arrays over the buffers the session returns
// (no copy). The GIL is released while a model runs or a tuning run works,
// so other Python threads go on; a progress callback takes it back.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>
#include <string>
#include <variant>
#include <vector>

#include "array_input.h"
#include "collage/collage.h"

namespace py = pybind11;

namespace {

py::dtype numpy_dtype(collage::ElementType type) {
  return py::dtype(collage::element_type_name(type));
}

// A numpy array over an Array's buffer, which the array keeps alive.
py::array to_numpy(const collage::Array& array) {
  auto* keep = new collage::Array(array);
  py::capsule owner(keep, [](void* p) { delete static_cast<collage::Array*>(p); });
  return py::array(numpy_dtype(keep->type()), keep->dims(), keep->data(), owner);
}

py::dict value_info(const collage::ValueInfo& info) {
  py::dict d;
  d["name"] = info.name;
  d["dtype"] = numpy_dtype(info.type);
  d["shape"] = py::tuple(py::cast(info.dims));
  return d;
}

py::list value_infos(const std::vector<collage::ValueInfo>& infos) {
  py::list list;
  for (const collage::ValueInfo& info : infos) list.append(value_info(info));
  return list;
}

py::dict strategy_result(const collage::StrategyResult& r) {
  py::dict d;
  d["strategy"] = r.strategy;
  d["partitions"] = r.partitions;
  d["median_ms"] = r.median_ms;
  d["p10_ms"] = r.p10_ms;
  d["p90_ms"] = r.p90_ms;
  d["estimated_ms"] = r.estimated_ms ? py::cast(*r.estimated_ms) : py::none();
  d["outputs_match"] = r.mismatch.empty();
  d["mismatch"] = r.mismatch;
  return d;
}

py::list strategy_results(const std::vector<collage::StrategyResult>& results) {
  py::list list;
  for (const collage::StrategyResult& r : results) list.append(strategy_result(r));
  return list;
}

const char* stage_name(collage::TuneProgress::Stage stage) {
  switch (stage) {
    case collage::TuneProgress::Stage::kCandidates:
      return "candidates";
    case collage::TuneProgress::Stage::kRefine:
      return "refine";
    case collage::TuneProgress::Stage::kVerify:
      return "verify";
    case collage::TuneProgress::Stage::kCompile:
      return "compile";
    case collage::TuneProgress::Stage::kJobs:
      return "jobs";
    case collage::TuneProgress::Stage::kBody:
      return "body";
    case collage::TuneProgress::Stage::kLayout:
      return "layout";
  }
  return "unknown";
}

using Shapes = std::map<std::string, std::vector<std::int64_t>>;

// workers="local" or "remote" (--workers) and measure_locally
// (--no-local-measure) into `options`.
void set_workers(collage::TuneOptions& options, const std::string& workers, bool measure_locally) {
  if (workers != "local" && workers != "remote") {
    throw collage::Error("must be 'local' or 'remote'", {.field = "workers"});
  }
  options.remote_workers = workers == "remote";
  options.measure_locally = measure_locally;
}

collage::TuneOptions tune_options(std::vector<std::string> backends, int threads,
                                  Shapes input_shapes, std::string graph_opt, std::string cache,
                                  bool isolate, int refine_rounds, double budget, int max_depth,
                                  int max_exits, bool verify, int repeat,
                                  std::optional<py::function> progress) {
  collage::TuneOptions options;
  options.backends = std::move(backends);
  options.threads = threads;
  options.input_shapes = std::move(input_shapes);
  options.graph_opt = std::move(graph_opt);
  options.cache_path = std::move(cache);
  options.isolate = isolate;
  options.search.refine_rounds = refine_rounds;
  options.search.budget_seconds = budget;
  options.search.max_depth = max_depth;
  options.search.max_exits = max_exits;
  options.verify = verify;
  options.repeat = repeat;
  if (progress) {
    options.progress = [callback = *progress](const collage::TuneProgress& p) {
      py::gil_scoped_acquire gil;
      py::dict d;
      d["stage"] = stage_name(p.stage);
      d["done"] = p.done;
      d["total"] = p.total;
      d["measured"] = p.measured;
      d["cache_hits"] = p.cache_hits;
      d["invalid"] = p.invalid;
      d["finished"] = p.finished;
      d["message"] = p.message;
      callback(d);
    };
  }
  return options;
}

// A TuneResult as the plain data tune() returns.
py::dict tune_result(const collage::TuneResult& r) {
  py::dict d;
  d["plan"] = r.plan_json;
  d["kept_strategy"] = r.kept_strategy;
  d["reason"] = r.reason;
  d["searched_estimated_ms"] = r.searched_estimated_ms;
  d["searched_measured_ms"] =
      r.searched_measured_ms ? py::cast(*r.searched_measured_ms) : py::none();
  d["searched_partitions"] = r.searched_partitions;
  py::dict search;
  search["candidates"] = r.search.candidates;
  search["measured"] = r.search.measured;
  search["cache_hits"] = r.search.cache_hits;
  search["invalid"] = r.search.invalid;
  search["seconds"] = r.search.seconds;
  search["screened"] = r.search.screened;
  search["ruled_out"] = r.search.ruled_out;
  d["search"] = search;
  d["measured"] = strategy_results(r.measured);
  return d;
}

collage::Session make_session(const std::string& path, std::optional<std::string> plan, int threads,
                              Shapes input_shapes, std::optional<std::string> graph_opt,
                              std::string strategy, std::optional<std::string> max_memory) {
  collage::SessionOptions options;
  if (plan) {
    // JSON text (tune()'s "plan") or a plan file's path.
    const std::size_t first = plan->find_first_not_of(" \t\r\n");
    const bool is_json = first != std::string::npos && (*plan)[first] == '{';
    // No path is longer than PATH_MAX or holds a line break.
    if (!is_json && (plan->size() >= PATH_MAX || plan->find('\n') != std::string::npos)) {
      throw collage::Error(
          "is neither JSON text (which starts with '{') nor the path of a plan file",
          {.field = "plan"});
    }
    (is_json ? options.plan_json : options.plan_file) = *plan;
  }
  options.threads = threads;
  options.input_shapes = std::move(input_shapes);
  options.graph_opt = graph_opt.value_or("");
  options.strategy = std::move(strategy);
  options.max_memory = max_memory.value_or("");
  py::gil_scoped_release release;
  return collage::Session(path, options);
}

// What numpy says of `array`, read from its header only.
collage::python::ArrayDescription describe(const py::array& array) {
  collage::python::ArrayDescription d;
  d.kind = array.dtype().kind();
  d.itemsize = array.dtype().itemsize();
  d.byteorder = py::cast<char>(array.dtype().attr("byteorder"));
  d.shape.assign(array.shape(), array.shape() + array.ndim());
  d.strides.assign(array.strides(), array.strides() + array.ndim());
  return d;
}

const collage::ValueInfo* find_input(const collage::Session& session, const std::string& name) {
  for (const collage::ValueInfo& info : session.inputs()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

py::dict run_session(collage::Session& session, const py::dict& feeds) {
  // The numpy arrays stay referenced here while the model reads them.
  std::vector<py::array> held;
  std::map<std::string, collage::Array> inputs;
  for (auto [key, value] : feeds) {
    if (!py::isinstance<py::str>(key)) {
      throw py::type_error("input names are str; got a key of type " +
                           py::cast<std::string>(py::type::handle_of(key).attr("__name__")));
    }
    std::string name = py::cast<std::string>(key);
    const collage::ValueInfo* expected = find_input(session, name);
    // An unknown name is the session's to report, with the model's inputs.
    if (expected != nullptr && py::isinstance<py::array>(value)) {
      // Checked before a copy: a broadcast view may be far larger than its memory.
      collage::python::check_input_array(describe(py::reinterpret_borrow<py::array>(value)),
                                         *expected);
    }
    py::array array = py::array::ensure(value, py::array::c_style);
    if (!array) {
      throw collage::Error("is a " +
                               py::cast<std::string>(py::type::handle_of(value).attr("__name__")) +
                               ", which numpy cannot make an array of",
                           {.field = "input '" + name + "'"});
    }
    held.push_back(array);
    std::vector<std::int64_t> dims(array.shape(), array.shape() + array.ndim());
    inputs.emplace(name, collage::Array::view(collage::python::element_type_of(describe(array)),
                                              dims, const_cast<void*>(array.data())));
  }
  std::map<std::string, collage::Array> outputs;
  const std::size_t warned = session.warnings().size();
  {
    py::gil_scoped_release release;
    outputs = session.run(inputs);
  }
  // A run that compiled for shapes no plan was made for says so, as Python
  // code expects to hear of it: a RuntimeWarning.
  const std::vector<std::string> warnings = session.warnings();
  for (std::size_t i = warned; i < warnings.size(); ++i) {
    if (PyErr_WarnEx(PyExc_RuntimeWarning, warnings[i].c_str(), 1) != 0)
      throw py::error_already_set();
  }
  py::dict result;
  for (const collage::ValueInfo& info : session.outputs()) {
    result[py::str(info.name)] = to_numpy(outputs.at(info.name));
  }
  return result;
}

}  // namespace

PYBIND11_MODULE(_collage, m) {
  m.doc() = "Collage: ONNX models partitioned across inference backends by measurement";
  py::register_exception<collage::Error>(m, "Error");
  m.def("version", &collage::version, "The library's version, \"0.1.0\".");

  py::class_<collage::Session>(m, "Session",
                               "A model compiled under a plan, ready to run. run() may be called "
                               "from many threads; calls on one session run one at a time.")
      .def(py::init(&make_session), py::arg("path"), py::arg("plan") = py::none(),
           py::arg("threads") = 0, py::arg("input_shapes") = Shapes{},
           py::arg("graph_opt") = py::none(), py::arg("strategy") = "native",
           py::arg("max_memory") = py::none(),
           "Loads the model and compiles it under `plan` (JSON text from tune(), or a plan "
           "file), or under `strategy` when no plan is given. threads=0: the plan's own count, "
           "or every core.")
      .def("run", &run_session, py::arg("inputs"),
           "Runs the model on {name: ndarray} (exact dtype and shape; any size where the model "
           "leaves a dimension open); returns {name: ndarray}. Shapes no plan was made for are "
           "compiled for on first use, with a RuntimeWarning.")
      .def_property_readonly("inputs",
                             [](const collage::Session& s) { return value_infos(s.inputs()); })
      .def_property_readonly("outputs",
                             [](const collage::Session& s) { return value_infos(s.outputs()); })
      .def_property_readonly("strategy", &collage::Session::strategy)
      .def_property_readonly("threads", &collage::Session::threads)
      .def_property_readonly("partitions", &collage::Session::partitions)
      .def_property_readonly("warnings", &collage::Session::warnings)
      .def_property_readonly("plan", &collage::Session::plan_json, "The plan, as JSON text.");

  m.def(
      "tune",
      [](const std::string& path, std::vector<std::string> backends, int threads,
         std::variant<Shapes, std::vector<Shapes>> input_shapes, std::string graph_opt,
         std::string cache, bool isolate, int refine_rounds, double budget, int max_depth,
         int max_exits, bool verify, int repeat, std::optional<py::function> progress,
         std::vector<std::string> place, std::vector<std::string> avoid, std::string patterns,
         std::string workers, bool measure_locally, bool screen, std::string search_layout) {
        Shapes one_shape;
        if (auto* one = std::get_if<Shapes>(&input_shapes)) one_shape = *one;
        collage::TuneOptions options =
            tune_options(std::move(backends), threads, std::move(one_shape), std::move(graph_opt),
                         std::move(cache), isolate, refine_rounds, budget, max_depth, max_exits,
                         verify, repeat, std::move(progress));
        set_workers(options, workers, measure_locally);
        options.search.screen = screen;
        options.search.layout = std::move(search_layout);
        options.place = std::move(place);
        options.avoid = std::move(avoid);
        options.patterns_file = std::move(patterns);
        // A list of shapes tunes a plan per entry into one plan set.
        if (auto* several = std::get_if<std::vector<Shapes>>(&input_shapes)) {
          std::vector<collage::TuneResult> results;
          {
            py::gil_scoped_release release;
            results = collage::tune_shapes(path, *several, options);
          }
          py::list per_shape;
          for (const collage::TuneResult& r : results) per_shape.append(tune_result(r));
          py::dict d;
          d["plan"] = collage::plan_set_json(results);
          d["per_shape"] = per_shape;
          return d;
        }
        collage::TuneResult r;
        {
          py::gil_scoped_release release;
          r = collage::tune(path, options);
        }
        py::dict d = tune_result(r);
        return d;
      },
      py::arg("path"), py::arg("backends") = std::vector<std::string>{}, py::arg("threads") = 0,
      py::arg("input_shapes") = Shapes{}, py::arg("graph_opt") = "all", py::arg("cache") = "",
      py::arg("isolate") = true, py::arg("refine_rounds") = 3, py::arg("budget") = 120.0,
      py::arg("max_depth") = 6, py::arg("max_exits") = 1, py::arg("verify") = true,
      py::arg("repeat") = 10, py::arg("progress") = py::none(),
      py::arg("place") = std::vector<std::string>{}, py::arg("avoid") = std::vector<std::string>{},
      py::arg("patterns") = "", py::arg("workers") = "local", py::arg("measure_locally") = true,
      py::arg("screen") = true, py::arg("search_layout") = "each",
      "Searches for the fastest plan of the model and returns it as plain data: \"plan\" (JSON "
      "text for Session), the strategy kept and why, the search's statistics and every plan "
      "measured end to end. input_shapes given as a list of dicts tunes a plan per entry: "
      "\"plan\" is then a plan set that serves every entry's shapes, and \"per_shape\" holds "
      "each entry's result (docs/shapes.md). progress, when given, is called with a dict per step. "
      "place, avoid "
      "and patterns constrain where nodes run, as the command line's --place, --avoid and "
      "--patterns (docs/placement.md). workers=\"remote\" measures through jobs in the "
      "PostgreSQL cache that `collage worker` processes take, as --workers remote "
      "(docs/fleet.md); measure_locally=False leaves them all to the workers. screen=True (the "
      "default) "
      "screens candidates first and times in full only those that can still enter the "
      "cheapest cover; screen=False times every candidate in full, as --no-screen "
      "(docs/partitioning.md, \"Screening\"). search_layout is --search-layout: \"each\" "
      "(the default), \"own\", \"auto\" or a layout's name (docs/partitioning.md, \"The search's "
      "layout\").");

  m.def(
      "compare",
      [](const std::string& path, std::vector<std::string> backends, int threads,
         Shapes input_shapes, std::string graph_opt, std::string cache, bool isolate,
         int refine_rounds, double budget, int repeat, std::optional<py::function> progress,
         std::vector<std::string> place, std::vector<std::string> avoid, std::string patterns,
         std::string workers, bool measure_locally, bool screen, std::string search_layout) {
        collage::TuneOptions options =
            tune_options(std::move(backends), threads, std::move(input_shapes),
                         std::move(graph_opt), std::move(cache), isolate, refine_rounds, budget, 6,
                         1, true, repeat, std::move(progress));
        set_workers(options, workers, measure_locally);
        options.search.screen = screen;
        options.search.layout = std::move(search_layout);
        options.place = std::move(place);
        options.avoid = std::move(avoid);
        options.patterns_file = std::move(patterns);
        collage::CompareResult r;
        {
          py::gil_scoped_release release;
          r = collage::compare(path, options);
        }
        py::dict d;
        d["strategies"] = strategy_results(r.strategies);
        d["best_single"] = r.best_single;
        d["kept_strategy"] = r.kept_strategy;
        d["kept_plan"] = r.kept_plan_json;
        d["reason"] = r.reason;
        return d;
      },
      py::arg("path"), py::arg("backends") = std::vector<std::string>{}, py::arg("threads") = 0,
      py::arg("input_shapes") = Shapes{}, py::arg("graph_opt") = "all", py::arg("cache") = "",
      py::arg("isolate") = true, py::arg("refine_rounds") = 3, py::arg("budget") = 120.0,
      py::arg("repeat") = 20, py::arg("progress") = py::none(),
      py::arg("place") = std::vector<std::string>{}, py::arg("avoid") = std::vector<std::string>{},
      py::arg("patterns") = "", py::arg("workers") = "local", py::arg("measure_locally") = true,
      py::arg("screen") = true, py::arg("search_layout") = "each",
      "Runs native, each single backend, greedy placement and the collage search side by side; "
      "returns each one's latency and whether its outputs match native's. workers and "
      "measure_locally and screen as for tune().");

  m.def(
      "backends",
      [] {
        py::list list;
        for (const collage::BackendInfo& b : collage::backends()) {
          py::dict d;
          d["name"] = b.name;
          d["version"] = b.version;
          d["style"] = b.style;
          d["support"] = b.support;
          list.append(d);
        }
        return list;
      },
      "The backends of this build: name, version, style and what each runs.");

  m.def("load_backend_plugin", &collage::load_backend_plugin, py::arg("path"),
        "Loads a backend plugin (a shared library, docs/plugins.md): its backend then takes "
        "part in backends(), tune(), compare() and Session like a built-in one.");
}
