#include "tune/planted_backends.h"

#include <chrono>
#include <csignal>
#include <stdexcept>
#include <thread>

#include "collage/backends/native/native_backend.h"

namespace collage::testing {
namespace {

class CrashingKernel final : public Kernel {
 public:
  void run(std::span<const Tensor>, std::span<Tensor>) override {
    // The default action, whatever handler a library may have installed.
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
  }
};

class HangingKernel final : public Kernel {
 public:
  void run(std::span<const Tensor>, std::span<Tensor>) override {
    std::this_thread::sleep_for(std::chrono::hours(1));
  }
};

// The reference result, off by one everywhere.
class OffByOneKernel final : public Kernel {
 public:
  explicit OffByOneKernel(std::unique_ptr<Kernel> reference) : reference_(std::move(reference)) {}

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    reference_->run(inputs, outputs);
    for (Tensor& output : outputs) {
      float* data = output.data<float>();
      for (std::int64_t i = 0; i < output.numel(); ++i) data[i] += 1.0f;
    }
  }

 private:
  std::unique_ptr<Kernel> reference_;
};

class PlantedBackend final : public Backend {
 public:
  PlantedBackend(Fault fault, std::set<std::string> ops) : fault_(fault), ops_(std::move(ops)) {}

  std::string name() const override { return fault_backend_name(fault_); }
  std::string version() const override { return "planted 1"; }
  BackendStyle style() const override { return BackendStyle::kLibrary; }

  bool supports(const Graph& graph, const Node& node) const override {
    if (ops_.count(node.op_type) == 0) return false;
    for (ValueId id : node.outputs) {
      if (graph.type(id).dtype != DType::kFloat32) return false;
    }
    return true;
  }

  std::string describe_support() const override { return "planted fault: " + name(); }

  Result<std::unique_ptr<Kernel>> compile(const Graph& partition,
                                          const CompileOptions& options) const override {
    switch (fault_) {
      case Fault::kCrash:
        return std::unique_ptr<Kernel>(std::make_unique<CrashingKernel>());
      case Fault::kHang:
        return std::unique_ptr<Kernel>(std::make_unique<HangingKernel>());
      case Fault::kWrongNumbers:
        return std::unique_ptr<Kernel>(
            std::make_unique<OffByOneKernel>(compile_reference(partition, options.threads)));
      case Fault::kThrowOnCompile:
        throw std::runtime_error("planted compile failure");
    }
    return Failure{"unknown fault"};
  }

 private:
  Fault fault_;
  std::set<std::string> ops_;
};

constexpr Fault kAllFaults[] = {Fault::kCrash, Fault::kHang, Fault::kWrongNumbers,
                                Fault::kThrowOnCompile};

}  // namespace

std::string fault_backend_name(Fault fault) {
  switch (fault) {
    case Fault::kCrash:
      return "crashing";
    case Fault::kHang:
      return "hanging";
    case Fault::kWrongNumbers:
      return "wrong";
    case Fault::kThrowOnCompile:
      return "throwing";
  }
  return "?";
}

std::unique_ptr<Backend> make_planted_backend(Fault fault, std::set<std::string> ops) {
  return std::make_unique<PlantedBackend>(fault, std::move(ops));
}

PlantedBackends::PlantedBackends() : native_(make_native_backend()) {
  for (Fault fault : kAllFaults) planted_.push_back(make_planted_backend(fault));
}

const Backend& PlantedBackends::planted(Fault fault) const {
  return *planted_[static_cast<std::size_t>(fault)];
}

const Backend* PlantedBackends::find(const std::string& name) const {
  if (name == native_->name()) return native_.get();
  for (const auto& backend : planted_) {
    if (backend->name() == name) return backend.get();
  }
  return nullptr;
}

}  // namespace collage::testing
