#include "collage/backends/native/vector_math.h"

#include <cstdlib>
#include <cstring>

namespace collage::native {

bool has_avx512() {
  static const bool has = [] {
    const char* setting = std::getenv("COLLAGE_NATIVE_AVX512");
    if (setting != nullptr && std::strcmp(setting, "0") == 0) return false;
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return has;
}

}  // namespace collage::native
