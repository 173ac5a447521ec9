// Splitting lists written on one line: "onednn,,xnnpack" -> {"onednn",
// "xnnpack"}, "/a.so:/b.so" -> {"/a.so", "/b.so"}.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace collage {

// The parts of `text` between `separator`s, empty ones dropped.
inline std::vector<std::string> split_nonempty(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

}  // namespace collage
