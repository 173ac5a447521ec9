// Attributes: the typed, named parameters of a node (kernel_shape, axis, ...).
//
// Stored sorted by name so that iteration, printing and hashing are
// deterministic. Typed getters with a default cover the common case of an
// optional ONNX attribute; getters without a default throw an Error naming
// the attribute when it is missing or has another type.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "collage/ir/tensor.h"

namespace collage {

class Graph;
// The body of a control-flow node (If's branches, Loop's and Scan's body);
// see ir/control_flow.h.
using Subgraph = std::shared_ptr<const Graph>;

using AttributeValue = std::variant<std::int64_t, float, std::string, std::vector<std::int64_t>,
                                    std::vector<float>, std::vector<std::string>, Tensor, Subgraph>;

class Attributes {
 public:
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void set(const std::string& name, AttributeValue value) { values_[name] = std::move(value); }
  void erase(const std::string& name) { values_.erase(name); }

  std::int64_t get_int(const std::string& name) const;
  std::int64_t get_int(const std::string& name, std::int64_t fallback) const;
  float get_float(const std::string& name) const;
  float get_float(const std::string& name, float fallback) const;
  const std::string& get_string(const std::string& name) const;
  std::string get_string(const std::string& name, const std::string& fallback) const;
  const std::vector<std::int64_t>& get_ints(const std::string& name) const;
  std::vector<std::int64_t> get_ints(const std::string& name,
                                     const std::vector<std::int64_t>& fallback) const;
  const std::vector<float>& get_floats(const std::string& name) const;
  const std::vector<std::string>& get_strings(const std::string& name) const;
  const Tensor& get_tensor(const std::string& name) const;
  const Subgraph& get_graph(const std::string& name) const;

  const std::map<std::string, AttributeValue>& all() const { return values_; }
  bool empty() const { return values_.empty(); }

 private:
  template <typename T>
  const T& get(const std::string& name) const;

  std::map<std::string, AttributeValue> values_;
};

// "kernel_shape=[3,3], strides=[1,1]" (tensor attributes print their type).
std::string to_string(const Attributes& attributes);

}  // namespace collage
