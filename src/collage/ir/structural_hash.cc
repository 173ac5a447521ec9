#include "collage/ir/structural_hash.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <queue>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

namespace collage {
namespace {

// FNV-1a, 64 bit, fed with an unambiguous encoding: every variable-length
// field is preceded by its length and every alternative by a tag.
class Hasher {
 public:
  void byte(std::uint8_t b) {
    state_ ^= b;
    state_ *= 0x100000001b3ULL;
  }
  void bytes(const void* data, std::size_t size) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    for (std::size_t i = 0; i < size; ++i) byte(p[i]);
  }
  // Little-endian whatever the host.
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) byte(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void f32(float v) { u64(std::bit_cast<std::uint32_t>(v)); }
  void str(std::string_view s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  void tag(char t) { byte(static_cast<std::uint8_t>(t)); }

  std::uint64_t value() const { return state_; }

 private:
  std::uint64_t state_ = 0xcbf29ce484222325ULL;
};

void hash_type(Hasher& h, const TensorType& type) {
  // By name, not enum value, so renumbering DType keeps old cache keys.
  h.str(dtype_name(type.dtype));
  h.u64(type.shape.size());
  for (std::int64_t dim : type.shape) h.i64(dim);
}

// Type, and the data when small. Element bytes are read little-endian on
// every supported host (x86-64, AArch64).
void hash_tensor(Hasher& h, const Tensor& tensor) {
  hash_type(h, tensor.type());
  if (tensor.numel() > kHashedConstantElements) {
    h.tag('w');
    return;
  }
  h.tag('d');
  h.bytes(tensor.raw(), tensor.byte_size());
}

void hash_attributes(Hasher& h, const Attributes& attributes) {
  h.u64(attributes.all().size());
  for (const auto& [name, value] : attributes.all()) {
    h.str(name);
    // Kinds are tagged by letter, not by variant index, so reordering
    // AttributeValue keeps old cache keys.
    std::visit(
        [&h](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::int64_t>) {
            h.tag('i');
            h.i64(v);
          } else if constexpr (std::is_same_v<T, float>) {
            h.tag('f');
            h.f32(v);
          } else if constexpr (std::is_same_v<T, std::string>) {
            h.tag('s');
            h.str(v);
          } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
            h.tag('I');
            h.u64(v.size());
            for (std::int64_t x : v) h.i64(x);
          } else if constexpr (std::is_same_v<T, std::vector<float>>) {
            h.tag('F');
            h.u64(v.size());
            for (float x : v) h.f32(x);
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            h.tag('S');
            h.u64(v.size());
            for (const std::string& x : v) h.str(x);
          } else if constexpr (std::is_same_v<T, Subgraph>) {
            h.tag('g');
            h.i64(v->captured);
            h.u64(structural_hash(*v));
          } else {
            static_assert(std::is_same_v<T, Tensor>, "an attribute kind the hash does not cover");
            h.tag('t');
            hash_tensor(h, v);
          }
        },
        value);
  }
}

void hash_op(Hasher& h, const Node& node) {
  h.str(node.op_type);
  h.str(node.domain);
  hash_attributes(h, node.attributes);
}

// A digest of each node and everything upstream of it, free of names and of
// node order: it orders ready nodes canonically.
std::vector<std::uint64_t> upstream_digests(const Graph& graph) {
  std::vector<std::uint64_t> input_position(graph.num_values(), 0);
  for (std::size_t i = 0; i < graph.inputs().size(); ++i) {
    input_position[static_cast<std::size_t>(graph.inputs()[i])] = i + 1;
  }
  std::vector<std::uint64_t> node_digest(graph.num_nodes(), 0);
  auto value_digest = [&](ValueId id) {
    Hasher h;
    if (id == kNoValue) {
      h.tag('n');
      return h.value();
    }
    const Value& value = graph.value(id);
    if (value.producer != kNoNode) {
      h.tag('o');
      h.u64(node_digest[static_cast<std::size_t>(value.producer)]);
      const auto& outputs = graph.node(value.producer).outputs;
      h.u64(static_cast<std::uint64_t>(std::find(outputs.begin(), outputs.end(), id) -
                                       outputs.begin()));
    } else if (value.is_constant()) {
      h.tag('c');
      hash_tensor(h, *value.constant);
    } else {
      h.tag('i');
      h.u64(input_position[static_cast<std::size_t>(id)]);
    }
    hash_type(h, value.type);
    return h.value();
  };
  // Nodes are stored in topological order, so producers come first.
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(static_cast<NodeId>(n));
    Hasher h;
    hash_op(h, node);
    h.u64(node.inputs.size());
    for (ValueId input : node.inputs) h.u64(value_digest(input));
    h.u64(node.outputs.size());
    node_digest[n] = h.value();
  }
  return node_digest;
}

// Kahn's algorithm, taking the ready node with the smallest digest first
// (then the smallest id, for nodes that are interchangeable upstream).
std::vector<NodeId> canonical_order(const Graph& graph) {
  const std::vector<std::uint64_t> digest = upstream_digests(graph);
  const auto users = graph.consumers();
  std::vector<int> missing(graph.num_nodes(), 0);
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    std::vector<NodeId> producers;
    for (ValueId input : graph.node(static_cast<NodeId>(n)).inputs) {
      if (input == kNoValue) continue;
      NodeId producer = graph.value(input).producer;
      if (producer == kNoNode) continue;
      if (std::find(producers.begin(), producers.end(), producer) != producers.end()) continue;
      producers.push_back(producer);
    }
    missing[n] = static_cast<int>(producers.size());
  }
  using Entry = std::tuple<std::uint64_t, NodeId>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    if (missing[n] == 0) ready.emplace(digest[n], static_cast<NodeId>(n));
  }
  std::vector<NodeId> order;
  order.reserve(graph.num_nodes());
  while (!ready.empty()) {
    NodeId n = std::get<1>(ready.top());
    ready.pop();
    order.push_back(n);
    std::vector<NodeId> released;
    for (ValueId output : graph.node(n).outputs) {
      for (NodeId user : users[static_cast<std::size_t>(output)]) {
        if (std::find(released.begin(), released.end(), user) != released.end()) continue;
        released.push_back(user);
        if (--missing[static_cast<std::size_t>(user)] == 0) {
          ready.emplace(digest[static_cast<std::size_t>(user)], user);
        }
      }
    }
  }
  return order;
}

}  // namespace

std::uint64_t structural_hash(const Graph& graph) {
  Hasher h;
  h.tag('G');
  h.i64(graph.opset);
  h.u64(graph.other_opsets.size());
  for (const auto& [domain, version] : graph.other_opsets) {
    h.str(domain);
    h.i64(version);
  }

  // Values are numbered by position: inputs first, then in order of first
  // use along the canonical node order.
  constexpr std::int64_t kUnnumbered = -1;
  std::vector<std::int64_t> number(graph.num_values(), kUnnumbered);
  std::int64_t next = 0;
  auto describe = [&](ValueId id) {
    number[static_cast<std::size_t>(id)] = next++;
    const Value& value = graph.value(id);
    if (value.is_constant()) {
      h.tag('c');
      hash_tensor(h, *value.constant);
      return;
    }
    h.tag(value.producer == kNoNode ? 'f' : 'v');
    hash_type(h, value.type);
  };

  h.tag('I');
  h.u64(graph.inputs().size());
  for (ValueId input : graph.inputs()) {
    if (number[static_cast<std::size_t>(input)] != kUnnumbered) {
      h.tag('r');
      h.i64(number[static_cast<std::size_t>(input)]);
      continue;
    }
    number[static_cast<std::size_t>(input)] = next++;
    h.tag('i');
    hash_type(h, graph.type(input));
  }

  const std::vector<NodeId> order = canonical_order(graph);
  h.tag('N');
  h.u64(order.size());
  for (NodeId n : order) {
    const Node& node = graph.node(n);
    // Values first seen here (constants) are described before the node.
    for (ValueId input : node.inputs) {
      if (input != kNoValue && number[static_cast<std::size_t>(input)] == kUnnumbered) {
        describe(input);
      }
    }
    h.tag('n');
    hash_op(h, node);
    h.u64(node.inputs.size());
    for (ValueId input : node.inputs) {
      h.i64(input == kNoValue ? kUnnumbered : number[static_cast<std::size_t>(input)]);
    }
    h.u64(node.outputs.size());
    for (ValueId output : node.outputs) describe(output);
  }

  h.tag('O');
  h.u64(graph.outputs().size());
  for (ValueId output : graph.outputs()) {
    if (number[static_cast<std::size_t>(output)] == kUnnumbered) describe(output);
    h.i64(number[static_cast<std::size_t>(output)]);
  }
  return h.value();
}

std::string structural_hash_hex(const Graph& graph) {
  return fmt::format("{:016x}", structural_hash(graph));
}

std::uint64_t fnv1a_64(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace collage
