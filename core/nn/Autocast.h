#pragma once
// bf16 autocast for the scope's life, on the device a computation runs on: matrix products and
// convolutions in bfloat16, reductions, norms and losses kept in float32 by LibTorch's autocast
// lists. bf16 keeps float32's exponent range, so no loss scaling is needed (the C++ API has none).
// Autocast is per thread: a scope covers the calling thread only, so work spread over threads
// (concurrent windows, batch shards) opens one in each.
#include <string>

#include <torch/torch.h>

namespace medseg {

class Bf16Autocast {
 public:
  Bf16Autocast(const torch::Device& device, bool enabled);
  ~Bf16Autocast();
  Bf16Autocast(const Bf16Autocast&) = delete;
  Bf16Autocast& operator=(const Bf16Autocast&) = delete;

 private:
  torch::DeviceType type_;
  bool enabled_;
};

// Whether this CPU computes bf16 natively (AVX-512 BF16 or AMX) and oneDNN may use it (a bf16
// convolution is tried once): elsewhere bf16 is emulated, slower than float32, or fails.
bool cpuHasNativeBf16();

// The precision an option names: "fp32" (also "float32") or "bf16" (also "bfloat16"); InputError
// otherwise. bf16 on a CPU without native bf16 is refused with that reason.
bool parseBf16Precision(const std::string& name, const torch::Device& device);

// Inference's precision from its option, and what was chosen and why (infer's `precision`): "fp32",
// "bf16" (as parseBf16Precision), or "auto": bf16 on a CPU that computes it natively, where its Dice
// cost on the demo's held-out cases was 0.0003 at most and windows ran 1.4x faster (README, bf16 on
// the CPU), float32 elsewhere (no native bf16, or a GPU, where that cost has not been measured).
struct PrecisionChoice {
  bool bf16 = false;
  std::string description;  // "bf16 (auto: this CPU computes bf16 natively)", "fp32", ...
};
PrecisionChoice choosePrecision(const std::string& name, const torch::Device& device);

}  // namespace medseg
