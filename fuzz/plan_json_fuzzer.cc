// libFuzzer target: the plan reader (JSON parsing, then plans_from_json, a
// plan or a plan set) on arbitrary bytes. Bad input must end in a JSON exception (which load_plan
// turns into an Error) or collage::Error.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "collage/ir/error.h"
#include "collage/plan/plan_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
  try {
    collage::plans_from_json(document, "fuzz.json");
  } catch (const collage::Error&) {
  }
  return 0;
}
