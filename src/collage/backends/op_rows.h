// What every backend's op table shares (docs/architecture.md, "Adding a
// backend"): rows that each name their ONNX op types, found by op type, and
// described for `collage backends` from their conditions.
//
// A row is any struct with a member `op_types` (a vector of strings or
// string views) and, to be described, a member `conditions` (a string view:
// what the row's check requires, empty when nothing worth saying).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace collage {

// The rows of one table by op type, indexed once: support is asked for every
// node of every candidate.
template <typename Row>
class OpRowIndex {
 public:
  explicit OpRowIndex(const std::vector<Row>& rows) {
    for (const Row& row : rows) {
      for (std::string_view type : row.op_types) {
        [[maybe_unused]] const bool added = rows_.emplace(type, &row).second;
        assert(added && "an op type is in two rows of the op table");
      }
    }
  }

  // The row that names `op_type`, or nullptr.
  const Row* find(std::string_view op_type) const {
    auto it = rows_.find(op_type);
    return it == rows_.end() ? nullptr : it->second;
  }

 private:
  std::map<std::string_view, const Row*> rows_;
};

// Every op type of `rows`, sorted, each with its row's conditions:
// "Abs, Add, ..., Conv (2-D, constant weights; ...), ...".
template <typename Row>
std::string describe_op_rows(const std::vector<Row>& rows) {
  std::vector<std::pair<std::string_view, std::string_view>> ops;
  for (const Row& row : rows) {
    for (std::string_view type : row.op_types) ops.emplace_back(type, row.conditions);
  }
  std::sort(ops.begin(), ops.end());
  std::vector<std::string> described;
  for (const auto& [type, conditions] : ops) {
    described.push_back(conditions.empty() ? std::string(type)
                                           : fmt::format("{} ({})", type, conditions));
  }
  return fmt::format("{}", fmt::join(described, ", "));
}

}  // namespace collage
