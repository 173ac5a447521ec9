// run_plan: runs a tuned Collage plan inside an application of its own.
//
//   run_plan MODEL.onnx PLAN.json INPUT.npy OUT_DIR
//
// Loads the model under the plan (as `collage run --plan` does), runs it on
// the input (for a one-input model; NAME=FILE.npy for several, repeatable),
// and writes each output to OUT_DIR/<name>.npy, with the file names `collage
// run --save-outputs` uses.
#include <collage/collage.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

namespace {

// Characters other than [A-Za-z0-9._-] become '_', as in `collage run`.
std::string file_name_for(std::string name) {
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  }
  return name + ".npy";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s MODEL.onnx PLAN.json [NAME=]INPUT.npy... OUT_DIR\n", argv[0]);
    return 2;
  }
  try {
    collage::Session session(argv[1], {.plan_file = argv[2]});
    std::map<std::string, collage::Array> inputs;
    for (int i = 3; i + 1 < argc; ++i) {
      std::string arg = argv[i];
      std::size_t eq = arg.find('=');
      std::string name = eq == std::string::npos ? session.inputs().at(0).name : arg.substr(0, eq);
      inputs[name] = collage::load_npy(eq == std::string::npos ? arg : arg.substr(eq + 1));
    }
    std::map<std::string, collage::Array> outputs = session.run(inputs);

    std::filesystem::path out_dir = argv[argc - 1];
    std::filesystem::create_directories(out_dir);
    for (const collage::ValueInfo& output : session.outputs()) {
      collage::save_npy((out_dir / file_name_for(output.name)).string(), outputs.at(output.name));
      std::printf("%s %s\n", output.name.c_str(), outputs.at(output.name).to_string().c_str());
    }
    std::printf("strategy %s, %d threads\n", session.strategy().c_str(), session.threads());
  } catch (const collage::Error& e) {
    std::fprintf(stderr, "run_plan: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
