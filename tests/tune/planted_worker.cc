// planted_worker MODEL: a measurement worker that knows the planted backends.
//
// The test counterpart of `collage worker`: it loads MODEL the way the tuner
// does and answers measurement requests for native and the planted backends
// (planted_backends.h) until its input ends. A planted crash or hang takes
// this process down, which is the point.
#include <sys/resource.h>

#include <cstdio>
#include <exception>
#include <iostream>

#include "collage/backends/native/native_backend.h"
#include "collage/cost/measurement_server.h"
#include "collage/onnx/importer.h"
#include "tune/planted_backends.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: planted_worker MODEL\n");
    return 2;
  }
  // Planted crashes are expected; they must not leave core files behind.
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);

  std::FILE* replies = collage::take_stdout_for_replies();
  try {
    collage::ImportOptions import_options;
    import_options.evaluator = &collage::native_evaluator();
    collage::Graph model = collage::import_onnx(argv[1], import_options);

    collage::testing::PlantedBackends backends;
    // A short protocol: these tests check outcomes, not timings.
    collage::MeasureOptions options;
    options.timing.warmup_runs = 1;
    options.timing.warmup_seconds = 0;
    options.timing.min_samples = 3;
    options.timing.max_samples = 10;
    options.timing.budget_seconds = 0.05;
    collage::InProcessMeasurer measurer(backends.native(), options);
    collage::serve_measurements(
        model, measurer, [&](const std::string& name) { return backends.find(name); }, std::cin,
        replies);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "planted_worker: %s\n", e.what());
    return 2;
  }
  return 0;
}
