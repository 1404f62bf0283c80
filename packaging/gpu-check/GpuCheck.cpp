// medseg-gpu-check: what a lent GPU machine can tell us that this project's CPU-only CI cannot.
// Built by packaging/gpu-check.sh from MedSeg's own network (core/nn/UNet3d), device resolution
// (core/nn/Device) and rank placement (cluster/parallel/DevicePlacement) against the machine's
// LibTorch. Prints one JSON object:
//   placement  the ranks of a node as a data-parallel run places them on the GPUs it sees;
//   agreement  the same network and weights, float64, on the CPU and on the GPU: logits and
//              gradients must agree to 1e-9 relative (float64 kernels differ only in summation order);
//   training   one training step (forward, cross-entropy, backward, Adam) at the BraTS patch size,
//              float32 and bf16 autocast, median of timed steps after warm-up;
//   inference  a whole 240x240x160 4-channel volume in one forward pass, float32 and bf16.
// Exit 0 when every check passed, 1 when one failed, 3 when the requested device is missing.
// --device cpu --small runs the same checks on tiny sizes (to test this program without a GPU).
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/parallel/DevicePlacement.h"
#include "core/nn/Autocast.h"
#include "core/nn/Device.h"
#include "plugins/unet3d/nn/UNet3d.h"
#include "core/util/Interrupt.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Sizes {
  int64_t patch = 128, batch = 2;                  // the training patch of the BraTS configuration
  std::vector<int64_t> volume{1, 4, 160, 240, 240};  // 155 slices padded to a multiple of 8
  int timedSteps = 5, warmupSteps = 2;
};

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

// What actually ran: autocast is turned on for CUDA devices only (the CPU path is this program's own test).
std::string precisionName(const torch::Device& device, bool bf16) {
  return bf16 && device.is_cuda() ? "bf16-autocast" : "float32";
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

json placement(int visibleDevices) {
  const int localSize = std::max(4, visibleDevices);
  json ranks = json::array();
  std::vector<std::string> devices;
  for (int local = 0; local < localSize; ++local) {
    const auto placed = medseg::cluster::placeRank(local, localSize, visibleDevices, "auto");
    ranks.push_back({{"local_rank", local}, {"device", placed.device}, {"shared", placed.shared()}});
    devices.push_back(placed.device);
  }
  std::sort(devices.begin(), devices.end());
  const auto distinct = std::unique(devices.begin(), devices.end()) - devices.begin();
  const bool ok = distinct == std::min<int64_t>(localSize, std::max(1, visibleDevices));
  return {{"ranks", ranks}, {"distinct_devices", distinct}, {"ok", ok}};
}

double maxRelativeDifference(const torch::Tensor& a, const torch::Tensor& b) {
  const double scale = std::max(a.abs().max().item<double>(), 1e-30);
  return (a - b.to(a.device())).abs().max().item<double>() / scale;
}

// float64 forward and backward of one small network on the CPU and on `device`, same weights.
json agreement(const torch::Device& device) {
  torch::manual_seed(7);
  medseg::UNetConfig config;
  config.depth = 3;
  config.baseFilters = 8;
  medseg::UNet3d cpu(config), other(config);
  cpu->to(torch::kFloat64);
  other->to(torch::kFloat64);
  {
    torch::NoGradGuard noGrad;
    const auto from = cpu->parameters();
    auto to = other->parameters();
    for (size_t i = 0; i < from.size(); ++i) to[i].copy_(from[i]);
  }
  other->to(device);
  const auto input = torch::randn({2, 4, 32, 32, 32}, torch::kFloat64);
  const auto cpuOut = cpu->forward(input);
  const auto otherOut = other->forward(input.to(device));
  cpuOut.square().mean().backward();
  otherOut.square().mean().backward();
  double gradient = 0.0;
  const auto a = cpu->parameters(), b = other->parameters();
  for (size_t i = 0; i < a.size(); ++i) gradient = std::max(gradient, maxRelativeDifference(a[i].grad(), b[i].grad().cpu()));
  const double logits = maxRelativeDifference(cpuOut.detach(), otherOut.detach().cpu());
  constexpr double kBound = 1e-9;  // float64: only the order of summation differs between kernels
  return {{"dtype", "float64"}, {"logits_max_relative_difference", logits},
          {"gradients_max_relative_difference", gradient}, {"bound", kBound},
          {"ok", logits < kBound && gradient < kBound}};
}

json trainingStep(const torch::Device& device, const Sizes& sizes, bool bf16) {
  torch::manual_seed(11);
  medseg::UNet3d net{medseg::UNetConfig{}};
  net->to(device);
  torch::optim::Adam optimizer(net->parameters(), torch::optim::AdamOptions(3e-4));
  const auto input = torch::randn({sizes.batch, 4, sizes.patch, sizes.patch, sizes.patch}, torch::TensorOptions(device));
  const auto target = torch::randint(0, 4, {sizes.batch, sizes.patch, sizes.patch, sizes.patch},
                                     torch::TensorOptions(device).dtype(torch::kLong));
  std::vector<double> seconds;
  double loss = 0.0;
  for (int step = 0; step < sizes.warmupSteps + sizes.timedSteps; ++step) {
    synchronize(device);
    const auto start = Clock::now();
    optimizer.zero_grad();
    torch::Tensor logits;
    {
      medseg::Bf16Autocast autocast(device, bf16 && device.is_cuda());
      logits = net->forward(input);
    }
    const auto value = torch::nn::functional::cross_entropy(logits.to(torch::kFloat32), target);
    value.backward();
    optimizer.step();
    synchronize(device);
    if (step >= sizes.warmupSteps) seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    loss = value.item<double>();
  }
  const double perStep = median(seconds);
  const double voxels = double(sizes.batch) * sizes.patch * sizes.patch * sizes.patch;
  return {{"precision", precisionName(device, bf16)}, {"batch", sizes.batch}, {"patch", sizes.patch},
          {"parameters", net->parameterCount()}, {"seconds_per_step", perStep}, {"voxels_per_second", voxels / perStep},
          {"final_loss", loss}, {"ok", std::isfinite(loss)}};
}

json wholeVolume(const torch::Device& device, const Sizes& sizes, bool bf16, torch::Tensor* labels) {
  torch::manual_seed(13);
  medseg::UNet3d net{medseg::UNetConfig{}};
  net->to(device);
  net->eval();
  torch::NoGradGuard noGrad;
  const auto input = torch::randn(sizes.volume, torch::TensorOptions(device));
  std::vector<double> seconds;
  torch::Tensor logits;
  for (int run = 0; run < 3; ++run) {
    synchronize(device);
    const auto start = Clock::now();
    medseg::Bf16Autocast autocast(device, bf16 && device.is_cuda());
    logits = net->forward(input);
    synchronize(device);
    if (run > 0) seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  *labels = logits.argmax(1);
  return {{"precision", precisionName(device, bf16)}, {"shape", sizes.volume},
          {"seconds", median(seconds)}, {"ok", torch::isfinite(logits.to(torch::kFloat32)).all().item<bool>()}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string deviceName = "cuda";
  Sizes sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--device" && i + 1 < argc) deviceName = argv[++i];
    else if (arg == "--small") sizes.patch = 32, sizes.volume = {1, 4, 32, 48, 48}, sizes.timedSteps = 2, sizes.warmupSteps = 1;
    else {
      std::cerr << "usage: medseg-gpu-check [--device cuda|cuda:N|cpu] [--small]\n";
      return 2;
    }
  }
  json report = {{"torch_version", TORCH_VERSION}, {"cuda_available", torch::cuda::is_available()},
                 {"cuda_devices", torch::cuda::device_count()}};
  torch::Device device(torch::kCPU);
  try {
    device = medseg::resolveDevice(deviceName);
  } catch (const medseg::InputError& e) {
    report["error"] = e.what();
    std::cout << report.dump() << std::endl;
    return 3;
  }
  report["device"] = device.str();
  try {
    report["placement"] = placement(int(torch::cuda::device_count()));
    report["agreement"] = agreement(device);
    report["training"] = {trainingStep(device, sizes, false), trainingStep(device, sizes, true)};
    torch::Tensor fp32Labels, bf16Labels;
    report["inference"] = {wholeVolume(device, sizes, false, &fp32Labels), wholeVolume(device, sizes, true, &bf16Labels)};
    // Same random weights and input: how often bf16 changes the winning class (a trained model's
    // Dice cost is measured by the demo, not here).
    report["inference_bf16_label_agreement"] = fp32Labels.eq(bf16Labels).to(torch::kFloat64).mean().item<double>();
  } catch (const std::exception& e) {
    report["error"] = e.what();
    std::cout << report.dump() << std::endl;
    return 1;
  }
  bool ok = report["placement"]["ok"] && report["agreement"]["ok"];
  for (const auto& part : {"training", "inference"})
    for (const auto& entry : report[part]) ok = ok && entry["ok"].get<bool>();
  report["ok"] = ok;
  std::cout << report.dump() << std::endl;
  return ok ? 0 : 1;
}
