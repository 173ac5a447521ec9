#include "collage/session/worker_location.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "collage/ir/error.h"

namespace collage {
namespace {

// The path of this process's executable.
std::string self_executable() {
  char buffer[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) return "";
  return std::string(buffer, static_cast<std::size_t>(n));
}

// The file of the shared library (or executable) this code was linked into.
std::filesystem::path this_code_file() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&self_executable), &info) == 0 || !info.dli_fname) return {};
  std::error_code ec;
  std::filesystem::path path = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path() : path;
}

bool is_executable_file(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

// Set by serve_measurements_here().
std::atomic<bool> self_serves{false};

}  // namespace

void serve_measurements_here(bool serves) { self_serves = serves; }

std::string worker_executable() {
  if (const char* given = std::getenv("COLLAGE_WORKER"); given && *given) {
    if (!is_executable_file(given)) {
      throw Error("is not an executable file", {.file = given, .field = "COLLAGE_WORKER"});
    }
    return given;
  }
  std::filesystem::path self = self_executable();
  if ((self_serves || self.filename() == "collage") && is_executable_file(self)) {
    return self.string();
  }
  std::vector<std::filesystem::path> places;
  if (std::filesystem::path code = this_code_file(); !code.empty()) {
    places.push_back(code.parent_path() / "collage");
    places.push_back(code.parent_path().parent_path() / "bin" / "collage");
  }
#ifdef COLLAGE_BUILD_TOOL
  places.emplace_back(COLLAGE_BUILD_TOOL);
#endif
  for (const std::filesystem::path& place : places) {
    if (is_executable_file(place)) return place.string();
  }
  throw Error(
      "cannot find the `collage` executable that measures candidates in isolation; set "
      "COLLAGE_WORKER to its path, or measure in this process");
}

}  // namespace collage
