#include "collage/runtime/memory_budget.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "collage/ir/error.h"

namespace collage {
namespace {

constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max();

std::int64_t value_bytes(const Graph& graph, ValueId id) {
  return checked_byte_size(graph.type(id)).value_or(kUnlimited);
}

}  // namespace

MemoryEstimate estimate_memory(const Graph& graph) {
  MemoryEstimate estimate;
  for (std::size_t v = 0; v < graph.num_values(); ++v) {
    const auto id = static_cast<ValueId>(v);
    estimate.by_size.push_back(id);
    if (__builtin_add_overflow(estimate.total_bytes, value_bytes(graph, id),
                               &estimate.total_bytes)) {
      estimate.total_bytes = kUnlimited;
    }
  }
  std::stable_sort(estimate.by_size.begin(), estimate.by_size.end(), [&](ValueId a, ValueId b) {
    return value_bytes(graph, a) > value_bytes(graph, b);
  });
  return estimate;
}

std::int64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  std::int64_t bytes = 0;
  if (pages <= 0 || page_size <= 0 || __builtin_mul_overflow(pages, page_size, &bytes)) return 0;
  return bytes;
}

std::int64_t default_memory_budget() {
  const std::int64_t physical = physical_memory_bytes();
  return physical == 0 ? kUnlimited : physical / 4 * 3;
}

void check_memory_budget(const Graph& graph, std::int64_t budget_bytes, const std::string& flag) {
  const MemoryEstimate estimate = estimate_memory(graph);
  if (estimate.total_bytes <= budget_bytes) return;
  std::vector<std::string> largest;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, estimate.by_size.size()); ++i) {
    const Value& value = graph.value(estimate.by_size[i]);
    largest.push_back(fmt::format("'{}' {} ({})", value.name, value.type.to_string(),
                                  format_bytes(value_bytes(graph, estimate.by_size[i]))));
  }
  throw Error(fmt::format("the model's tensors need {}{}, more than the limit of {}; largest: {}",
                          estimate.total_bytes == kUnlimited ? "more than " : "",
                          format_bytes(estimate.total_bytes), format_bytes(budget_bytes),
                          fmt::join(largest, ", ")),
              {.field = flag});
}

std::string format_bytes(std::int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  auto value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::int64_t parse_byte_count(const std::string& text, const std::string& flag) {
  auto bad = [&] {
    return Error(fmt::format("'{}' is not a byte count (examples: 1073741824, 512M, 8G)", text),
                 {.field = flag});
  };
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 18) throw bad();
  std::int64_t count = std::stoll(text.substr(0, digits));
  std::string unit = text.substr(digits);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  if (unit.size() == 2 && unit[1] == 'i') unit.pop_back();
  if (unit.size() > 1) throw bad();
  int shift = 0;
  if (!unit.empty()) {
    const std::string units = "KMGT";
    std::size_t index =
        units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0]))));
    if (index == std::string::npos) throw bad();
    shift = 10 * static_cast<int>(index + 1);
  }
  if (count == 0) throw Error("must be more than 0 bytes", {.field = flag});
  if (count > (kUnlimited >> shift))
    throw Error(fmt::format("'{}' is too large", text), {.field = flag});
  return count << shift;
}

}  // namespace collage
