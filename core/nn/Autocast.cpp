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

bool cpuHasNativeBf16() {
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

bool parseBf16Precision(const std::string& name, const torch::Device& device) {
  if (name == "fp32" || name == "float32") return false;
  if (name != "bf16" && name != "bfloat16") throw InputError("precision must be fp32 or bf16, got '" + name + "'");
  if (device.is_cpu() && !cpuHasNativeBf16())
    throw InputError("bf16 needs a CPU with native bf16 (AVX-512 BF16 or AMX): this one would emulate it, slower than "
                     "fp32; use --precision fp32");
  return true;
}

}  // namespace medseg
