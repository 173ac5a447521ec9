#include "collage/ir/attribute.h"

#include <fmt/format.h>

#include "collage/ir/error.h"
#include "collage/ir/graph.h"

namespace collage {
namespace {

template <typename T>
constexpr const char* kind_name() {
  if constexpr (std::is_same_v<T, std::int64_t>) return "int";
  if constexpr (std::is_same_v<T, float>) return "float";
  if constexpr (std::is_same_v<T, std::string>) return "string";
  if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) return "ints";
  if constexpr (std::is_same_v<T, std::vector<float>>) return "floats";
  if constexpr (std::is_same_v<T, std::vector<std::string>>) return "strings";
  if constexpr (std::is_same_v<T, Tensor>) return "tensor";
  if constexpr (std::is_same_v<T, Subgraph>) return "graph";
  return "?";
}

std::string value_to_string(const AttributeValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Tensor>) {
          return "tensor " + v.type().to_string();
        } else if constexpr (std::is_same_v<T, Subgraph>) {
          return fmt::format("graph of {} nodes", v->num_nodes());
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "\"" + v + "\"";
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          return fmt::format("[\"{}\"]", fmt::join(v, "\",\""));
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>> ||
                             std::is_same_v<T, std::vector<float>>) {
          return fmt::format("[{}]", fmt::join(v, ","));
        } else {
          return fmt::format("{}", v);
        }
      },
      value);
}

}  // namespace

template <typename T>
const T& Attributes::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw Error("missing attribute", {.field = name});
  const T* value = std::get_if<T>(&it->second);
  if (value == nullptr) {
    throw Error(fmt::format("attribute is not of kind {}", kind_name<T>()), {.field = name});
  }
  return *value;
}

std::int64_t Attributes::get_int(const std::string& name) const { return get<std::int64_t>(name); }
std::int64_t Attributes::get_int(const std::string& name, std::int64_t fallback) const {
  return has(name) ? get<std::int64_t>(name) : fallback;
}
float Attributes::get_float(const std::string& name) const { return get<float>(name); }
float Attributes::get_float(const std::string& name, float fallback) const {
  return has(name) ? get<float>(name) : fallback;
}
const std::string& Attributes::get_string(const std::string& name) const {
  return get<std::string>(name);
}
std::string Attributes::get_string(const std::string& name, const std::string& fallback) const {
  return has(name) ? get<std::string>(name) : fallback;
}
const std::vector<std::int64_t>& Attributes::get_ints(const std::string& name) const {
  return get<std::vector<std::int64_t>>(name);
}
std::vector<std::int64_t> Attributes::get_ints(const std::string& name,
                                               const std::vector<std::int64_t>& fallback) const {
  return has(name) ? get<std::vector<std::int64_t>>(name) : fallback;
}
const std::vector<float>& Attributes::get_floats(const std::string& name) const {
  return get<std::vector<float>>(name);
}
const std::vector<std::string>& Attributes::get_strings(const std::string& name) const {
  return get<std::vector<std::string>>(name);
}
const Tensor& Attributes::get_tensor(const std::string& name) const { return get<Tensor>(name); }
const Subgraph& Attributes::get_graph(const std::string& name) const { return get<Subgraph>(name); }

std::string to_string(const Attributes& attributes) {
  std::string text;
  for (const auto& [name, value] : attributes.all()) {
    if (!text.empty()) text += ", ";
    text += name + "=" + value_to_string(value);
  }
  return text;
}

}  // namespace collage
