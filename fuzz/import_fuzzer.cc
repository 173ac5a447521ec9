// libFuzzer target: the ONNX importer and canonicalization (with the native
// evaluator for constant folding) on arbitrary bytes. Bad input must end in
// collage::Error; anything else (a crash, a sanitizer report, another
// exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "collage/backends/native/native_backend.h"
#include "collage/ir/error.h"
#include "collage/onnx/importer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto model = std::make_shared<onnx::ModelProto>();
  if (!model->ParseFromArray(data, static_cast<int>(size))) return 0;
  collage::ImportOptions options;
  options.evaluator = &collage::native_evaluator();
  try {
    collage::import_onnx_model(std::move(model), options, "/nonexistent");
  } catch (const collage::Error&) {
  }
  return 0;
}
