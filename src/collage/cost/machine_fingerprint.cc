#include "collage/cost/machine_fingerprint.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace collage {
namespace {

// Flags that change which kernels a library picks.
bool is_isa_flag(const std::string& flag) {
  static const char* const kPrefixes[] = {"sse", "ssse", "avx", "fma", "f16c", "amx", "bmi"};
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](const char* prefix) { return flag.rfind(prefix, 0) == 0; });
}

std::string trim(const std::string& text) {
  auto begin = text.find_first_not_of(" \t");
  auto end = text.find_last_not_of(" \t");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

}  // namespace

MachineFingerprint MachineFingerprint::current(int threads) {
  MachineFingerprint fingerprint;
  fingerprint.threads = threads;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (std::getline(cpuinfo, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = trim(line.substr(0, colon));
    std::string value = trim(line.substr(colon + 1));
    if (key == "model name" && fingerprint.cpu_model.empty()) fingerprint.cpu_model = value;
    if (key == "flags" && flags.empty()) {
      std::istringstream words(value);
      std::string flag;
      while (words >> flag) {
        if (is_isa_flag(flag)) flags.insert(flag);
      }
    }
  }
  for (const std::string& flag : flags) {
    if (!fingerprint.isa_flags.empty()) fingerprint.isa_flags += ",";
    fingerprint.isa_flags += flag;
  }
  return fingerprint;
}

std::string MachineFingerprint::to_string() const {
  return cpu_model + "|" + isa_flags + "|t" + std::to_string(threads);
}

}  // namespace collage
