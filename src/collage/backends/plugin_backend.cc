#include "collage/backends/plugin_backend.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>
#include <variant>

#include "collage/backend_plugin.h"
#include "collage/ir/error.h"
#include "collage/ir/pattern_json.h"

namespace collage {
namespace {

static_assert(static_cast<int>(DType::kFloat32) == COLLAGE_DTYPE_FLOAT32 &&
                  static_cast<int>(DType::kFloat16) == COLLAGE_DTYPE_FLOAT16 &&
                  static_cast<int>(DType::kInt64) == COLLAGE_DTYPE_INT64 &&
                  static_cast<int>(DType::kBool) == COLLAGE_DTYPE_BOOL,
              "collage_dtype numbers the element types as DType does");

// A collage_graph view of a Graph, or of one node of it (its inputs and
// outputs as the graph's values). Points into the Graph, which outlives it.
class GraphView {
 public:
  explicit GraphView(const Graph& graph) {
    for (std::size_t v = 0; v < graph.num_values(); ++v) add_value(graph, static_cast<ValueId>(v));
    for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
      add_node(graph.node(static_cast<NodeId>(n)), [](ValueId id) { return id; });
    }
    for (ValueId id : graph.inputs()) {
      if (!graph.value(id).is_constant()) inputs_.push_back(id);
    }
    for (ValueId id : graph.outputs()) outputs_.push_back(id);
    finish();
  }

  GraphView(const Graph& graph, const Node& node) {
    std::vector<ValueId> ids;
    auto index_of = [&](ValueId id) -> std::int32_t {
      if (id == kNoValue) return -1;
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] == id) return static_cast<std::int32_t>(i);
      }
      ids.push_back(id);
      add_value(graph, id);
      return static_cast<std::int32_t>(ids.size() - 1);
    };
    add_node(node, index_of);
    for (std::int32_t i : node_inputs_.front()) {
      if (i >= 0 && values_[static_cast<std::size_t>(i)].data == nullptr) inputs_.push_back(i);
    }
    outputs_ = node_outputs_.front();
    finish();
  }

  const collage_graph* get() const { return &view_; }

 private:
  void add_value(const Graph& graph, ValueId id) {
    const Value& value = graph.value(id);
    collage_value v{};
    v.name = value.name.c_str();
    v.dtype = static_cast<std::int32_t>(value.type.dtype);
    v.rank = value.type.rank();
    v.shape = value.type.shape.data();
    if (value.is_constant()) {
      v.data = value.constant->raw();
      v.bytes = value.constant->byte_size();
    }
    values_.push_back(v);
  }

  template <typename Index>
  void add_node(const Node& node, Index index_of) {
    std::vector<std::int32_t> inputs, outputs;
    for (ValueId id : node.inputs) inputs.push_back(static_cast<std::int32_t>(index_of(id)));
    for (ValueId id : node.outputs) outputs.push_back(static_cast<std::int32_t>(index_of(id)));
    node_inputs_.push_back(std::move(inputs));
    node_outputs_.push_back(std::move(outputs));
    std::vector<collage_attribute> attributes;
    for (const auto& [name, value] : node.attributes.all()) {
      collage_attribute a{};
      a.name = name.c_str();
      if (const auto* i = std::get_if<std::int64_t>(&value)) {
        a.kind = COLLAGE_ATTRIBUTE_INT;
        a.i = *i;
      } else if (const auto* f = std::get_if<float>(&value)) {
        a.kind = COLLAGE_ATTRIBUTE_FLOAT;
        a.f = *f;
      } else if (const auto* s = std::get_if<std::string>(&value)) {
        a.kind = COLLAGE_ATTRIBUTE_STRING;
        a.s = s->c_str();
      } else if (const auto* ints = std::get_if<std::vector<std::int64_t>>(&value)) {
        a.kind = COLLAGE_ATTRIBUTE_INTS;
        a.ints = ints->data();
        a.count = ints->size();
      } else if (const auto* floats = std::get_if<std::vector<float>>(&value)) {
        a.kind = COLLAGE_ATTRIBUTE_FLOATS;
        a.floats = floats->data();
        a.count = floats->size();
      } else if (const auto* strings = std::get_if<std::vector<std::string>>(&value)) {
        a.kind = COLLAGE_ATTRIBUTE_STRINGS;
        std::vector<const char*>& pointers = string_lists_.emplace_back();
        for (const std::string& text : *strings) pointers.push_back(text.c_str());
        a.strings = pointers.data();
        a.count = pointers.size();
      } else {
        a.kind = COLLAGE_ATTRIBUTE_TENSOR;
      }
      attributes.push_back(a);
    }
    node_attributes_.push_back(std::move(attributes));
    collage_node n{};
    n.name = node.name.c_str();
    n.op_type = node.op_type.c_str();
    n.domain = node.domain.c_str();
    nodes_.push_back(n);
  }

  // Points the nodes at their arrays, once every vector has its final size.
  void finish() {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      nodes_[i].inputs = node_inputs_[i].data();
      nodes_[i].num_inputs = node_inputs_[i].size();
      nodes_[i].outputs = node_outputs_[i].data();
      nodes_[i].num_outputs = node_outputs_[i].size();
      nodes_[i].attributes = node_attributes_[i].data();
      nodes_[i].num_attributes = node_attributes_[i].size();
    }
    view_.values = values_.data();
    view_.num_values = values_.size();
    view_.nodes = nodes_.data();
    view_.num_nodes = nodes_.size();
    view_.inputs = inputs_.data();
    view_.num_inputs = inputs_.size();
    view_.outputs = outputs_.data();
    view_.num_outputs = outputs_.size();
  }

  std::vector<collage_value> values_;
  std::vector<collage_node> nodes_;
  std::vector<std::vector<std::int32_t>> node_inputs_, node_outputs_;
  std::vector<std::vector<collage_attribute>> node_attributes_;
  std::vector<std::vector<const char*>> string_lists_;
  std::vector<std::int32_t> inputs_, outputs_;
  collage_graph view_{};
};

// The library stays loaded while any backend or kernel of it lives.
struct Library {
  explicit Library(void* handle) : handle(handle) {}
  ~Library() { ::dlclose(handle); }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  void* handle;
};

class PluginKernel : public Kernel {
 public:
  PluginKernel(std::shared_ptr<Library> library, const collage_backend_plugin* plugin, void* kernel,
               std::string backend)
      : library_(std::move(library)),
        plugin_(plugin),
        kernel_(kernel),
        backend_(std::move(backend)) {}
  ~PluginKernel() override { plugin_->free_kernel(kernel_); }
  PluginKernel(const PluginKernel&) = delete;
  PluginKernel& operator=(const PluginKernel&) = delete;

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    std::vector<collage_tensor> in, out;
    for (const Tensor& t : inputs) {
      in.push_back(collage_tensor{const_cast<void*>(t.raw()), static_cast<std::int32_t>(t.dtype()),
                                  t.rank(), t.shape().data()});
    }
    for (Tensor& t : outputs) {
      out.push_back(collage_tensor{t.raw(), static_cast<std::int32_t>(t.dtype()), t.rank(),
                                   t.shape().data()});
    }
    const char* error = nullptr;
    if (plugin_->run(kernel_, in.data(), in.size(), out.data(), out.size(), &error) != 0) {
      throw Error(fmt::format("backend {} failed to run its kernel: {}", backend_,
                              error ? escape_control(error) : "no reason given"));
    }
  }

 private:
  std::shared_ptr<Library> library_;
  const collage_backend_plugin* plugin_;
  void* kernel_;
  std::string backend_;
};

class PluginBackend : public Backend {
 public:
  PluginBackend(std::shared_ptr<Library> library, const collage_backend_plugin* plugin,
                std::vector<NamedPattern> patterns)
      : library_(std::move(library)), plugin_(plugin), patterns_(std::move(patterns)) {}

  std::string name() const override { return plugin_->name; }
  std::string version() const override { return plugin_->version; }
  std::string code_version() const override {
    return plugin_->code_version ? plugin_->code_version : "";
  }
  BackendStyle style() const override { return static_cast<BackendStyle>(plugin_->style); }
  bool supports(const Graph& graph, const Node& node) const override {
    // The C ABI has no form for a body graph: control flow stays off plugins.
    for (const auto& [name, value] : node.attributes.all()) {
      if (std::holds_alternative<Subgraph>(value)) return false;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    GraphView view(graph, node);
    return plugin_->supports(plugin_->state, view.get(), 0) != 0;
  }
  std::vector<NamedPattern> patterns() const override { return patterns_; }
  std::string describe_support() const override {
    return plugin_->support ? escape_control(plugin_->support) : "(plugin)";
  }
  std::string report_color() const override {
    const std::string color = plugin_->color ? plugin_->color : "";
    return color.size() == 7 && color[0] == '#' ? color : "#bbbbbb";
  }
  Result<std::unique_ptr<Kernel>> compile(const Graph& partition,
                                          const CompileOptions& options) const override {
    if (auto problem = edge_layout_problem(partition, options)) return Failure{*problem};
    for (EdgeLayout layout : options.input_layouts) {
      if (layout != EdgeLayout::kPlain) return Failure{"the plugin takes plain edges only"};
    }
    for (EdgeLayout layout : options.output_layouts) {
      if (layout != EdgeLayout::kPlain) return Failure{"the plugin takes plain edges only"};
    }
    std::lock_guard<std::mutex> lock(mutex_);
    GraphView view(partition);
    const char* error = nullptr;
    void* kernel = plugin_->compile(plugin_->state, view.get(), options.threads, &error);
    if (kernel == nullptr) {
      return Failure{error ? escape_control(error) : std::string("the plugin compiled nothing")};
    }
    return std::unique_ptr<Kernel>(
        std::make_unique<PluginKernel>(library_, plugin_, kernel, plugin_->name));
  }

 private:
  std::shared_ptr<Library> library_;
  const collage_backend_plugin* plugin_;
  std::vector<NamedPattern> patterns_;
  // The C calls are made one at a time (backend_plugin.h).
  mutable std::mutex mutex_;
};

}  // namespace

std::unique_ptr<Backend> load_plugin_backend(const std::string& path) {
  // RTLD_LOCAL: two plugins may define the same symbols without clashing.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    throw Error(fmt::format("not a loadable backend plugin: {}",
                            why ? escape_control(why) : "dlopen failed"),
                {.file = path});
  }
  auto library = std::make_shared<Library>(handle);
  void* symbol = ::dlsym(handle, COLLAGE_PLUGIN_ENTRY);
  if (symbol == nullptr) {
    throw Error("not a backend plugin: it does not export " COLLAGE_PLUGIN_ENTRY
                " (include/collage/backend_plugin.h)",
                {.file = path});
  }
  auto entry = reinterpret_cast<collage_backend_plugin_entry>(symbol);
  const collage_backend_plugin* plugin = entry();
  if (plugin == nullptr) throw Error(COLLAGE_PLUGIN_ENTRY " returned no plugin", {.file = path});
  if (plugin->abi_version != COLLAGE_PLUGIN_ABI_VERSION) {
    throw Error(fmt::format("the plugin is built for plugin ABI version {}; this collage loads "
                            "version {}: rebuild it against this collage's backend_plugin.h",
                            plugin->abi_version, COLLAGE_PLUGIN_ABI_VERSION),
                {.file = path});
  }
  std::vector<std::string> missing;
  if (plugin->name == nullptr) missing.push_back("name");
  if (plugin->version == nullptr) missing.push_back("version");
  if (plugin->supports == nullptr) missing.push_back("supports");
  if (plugin->compile == nullptr) missing.push_back("compile");
  if (plugin->run == nullptr) missing.push_back("run");
  if (plugin->free_kernel == nullptr) missing.push_back("free_kernel");
  if (!missing.empty()) {
    throw Error(fmt::format("the plugin leaves {} unset", fmt::join(missing, ", ")),
                {.file = path});
  }
  if (!is_plain_name(plugin->name)) {
    throw Error(fmt::format("the plugin's name {} is not letters, digits, '_' and '-'",
                            quote_untrusted(plugin->name)),
                {.file = path});
  }
  if (plugin->style < COLLAGE_STYLE_LIBRARY || plugin->style > COLLAGE_STYLE_COMPILER) {
    throw Error(fmt::format("the plugin's style {} is not library (0), graph (1) or compiler (2)",
                            plugin->style),
                {.file = path});
  }
  if ((plugin->edge_layouts & COLLAGE_EDGE_LAYOUT_PLAIN) == 0) {
    throw Error("the plugin's edge layouts leave out plain (COLLAGE_EDGE_LAYOUT_PLAIN)",
                {.file = path});
  }
  std::vector<NamedPattern> patterns;
  if (plugin->patterns_json != nullptr) {
    for (PatternRuleJson& rule :
         read_pattern_rules(plugin->patterns_json, path + " (patterns_json)", plugin->name)) {
      if (rule.backend != plugin->name) {
        throw Error(fmt::format("rule {} is for backend {}, not the plugin's own",
                                quote_untrusted(rule.name), quote_untrusted(rule.backend)),
                    {.file = path});
      }
      patterns.push_back(NamedPattern{plugin->name + std::string(".") + rule.name, rule.pattern});
    }
  }
  return std::make_unique<PluginBackend>(std::move(library), plugin, std::move(patterns));
}

}  // namespace collage
