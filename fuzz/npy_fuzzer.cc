// libFuzzer target: the .npy reader on arbitrary bytes. Bad input must end
// in collage::Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collage/ir/error.h"
#include "collage/runtime/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    collage::parse_npy(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  } catch (const collage::Error&) {
  }
  return 0;
}
