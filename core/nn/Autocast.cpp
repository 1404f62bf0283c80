#include "core/nn/Autocast.h"

#include <fstream>
#include <sstream>

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include "core/util/Interrupt.h"

namespace medseg {
namespace {

// The autocast API was renamed in LibTorch 2.4 (the GPU check builds against a pip torch).
void setAutocast(torch::DeviceType type, bool enabled) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  at::autocast::set_autocast_dtype(type, at::kBFloat16);
  at::autocast::set_autocast_enabled(type, enabled);
#else
  if (type == torch::kCPU) {
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::set_cpu_enabled(enabled);
  } else {
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(enabled);
  }
#endif
}

}  // namespace

Bf16Autocast::Bf16Autocast(const torch::Device& device, bool enabled) : type_(device.type()), enabled_(enabled) {
  if (enabled_) setAutocast(type_, true);
}

Bf16Autocast::~Bf16Autocast() {
  if (!enabled_) return;
  setAutocast(type_, false);
  at::autocast::clear_cache();
}

namespace {

bool cpuFlagsNameBf16() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream flags(line.substr(line.find(':') + 1));
    std::string flag;
    while (flags >> flag)
      if (flag == "avx512_bf16" || flag == "amx_bf16") return true;
    return false;
  }
  return false;
}

// oneDNN may be kept below the CPU's instruction set (ONEDNN_MAX_CPU_ISA=AVX2, as the test suite's
// second run does): then it has no bf16 convolution at all and says so only when one is made.
bool bf16ConvolutionRuns() {
  try {
    torch::NoGradGuard noGrad;
    Bf16Autocast autocast(torch::kCPU, true);
    torch::conv3d(torch::ones({1, 2, 6, 6, 6}), torch::ones({2, 2, 3, 3, 3}), {}, 1, 1);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

bool cpuHasNativeBf16() {
  static const bool native = cpuFlagsNameBf16() && bf16ConvolutionRuns();
  return native;
}

bool parseBf16Precision(const std::string& name, const torch::Device& device) {
  if (name == "fp32" || name == "float32") return false;
  if (name != "bf16" && name != "bfloat16") throw InputError("precision must be fp32 or bf16, got '" + name + "'");
  if (device.is_cpu() && !cpuHasNativeBf16())
    throw InputError("bf16 needs a CPU with native bf16 (AVX-512 BF16 or AMX) that oneDNN may use (ONEDNN_MAX_CPU_ISA "
                     "must allow it): here it would be emulated or fail; use --precision fp32");
  return true;
}

PrecisionChoice choosePrecision(const std::string& name, const torch::Device& device) {
  if (name != "auto") {
    const bool bf16 = parseBf16Precision(name, device);
    return {bf16, bf16 ? "bf16" : "fp32"};
  }
  if (!device.is_cpu()) return {false, "fp32 (auto: bf16 is chosen on CPUs only; --precision bf16 asks for it)"};
  if (!cpuHasNativeBf16()) return {false, "fp32 (auto: this CPU has no native bf16)"};
  return {true, "bf16 (auto: this CPU computes bf16 natively; --precision fp32 for float32)"};
}

}  // namespace medseg
