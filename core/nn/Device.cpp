#include "core/nn/Device.h"
#include "core/nn/CudaDeviceCount.h"

#include <optional>

#include "core/util/Interrupt.h"

namespace medseg {

int cudaDeviceCount() { return static_cast<int>(torch::cuda::device_count()); }

torch::Device resolveDevice(const std::string& name) {
  if (name.empty() || name == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  std::optional<torch::Device> device;
  try {
    device = torch::Device(name);
  } catch (const c10::Error&) {
    throw InputError("unknown device \"" + name + "\": use auto, cpu, cuda or cuda:N");
  }
  if (device->is_cuda()) {
    if (!torch::cuda::is_available())
      throw InputError("device \"" + name + "\" requested but no CUDA device is available to this LibTorch; use --device cpu");
    if (device->has_index() && device->index() >= int64_t(torch::cuda::device_count()))
      throw InputError("device \"" + name + "\" requested but only " + std::to_string(torch::cuda::device_count()) +
                       " CUDA device(s) exist");
  } else if (!device->is_cpu()) {
    throw InputError("device \"" + name + "\" is not supported: use auto, cpu, cuda or cuda:N");
  }
  return *device;
}

}  // namespace medseg
