#pragma once
// A 3-D convolution with a k x 3 x 3 kernel (k odd, stride 1, "same" padding), the layer that
// dominates a U-Net's inference (the nnunet plugin's networks use this), computed with fewer
// multiplications: each depth slice is convolved in 2-D by oneDNN's Winograd F(4x4, 3x3) kernel (36
// products for 16 outputs instead of 144), the k depth taps stacked as output channels of one 2-D
// convolution, then the taps of neighbouring slices summed. LibTorch 1.13 only reaches oneDNN's direct
// convolution, which already runs at about the cores' peak (resources/benchmarks/compare_nnunet.py
// logs its seconds), so fewer multiplications are what is left to win. Results differ from the direct convolution by float32
// rounding of the transforms (about 1e-5 relative).
//
// oneDNN has this kernel for AVX-512 only: elsewhere (an AVX2-only CPU, ONEDNN_MAX_CPU_ISA=AVX2),
// or for shapes it refuses, forward() returns an undefined tensor and the caller runs its direct
// convolution. For inference only: no autograd.
#include <array>
#include <map>
#include <memory>

#include <torch/torch.h>

namespace medseg {

class SliceWinogradConvolution {
 public:
  // weight [out, in, k, 3, 3] and bias [out] (or undefined), float32, as a Conv3d module holds them.
  SliceWinogradConvolution(const torch::Tensor& weight, const torch::Tensor& bias);
  ~SliceWinogradConvolution();
  SliceWinogradConvolution(const SliceWinogradConvolution&) = delete;
  SliceWinogradConvolution& operator=(const SliceWinogradConvolution&) = delete;

  // Whether a Conv3d with these settings has the shape this computes (before asking oneDNN):
  // kernel k x 3 x 3 with k odd, stride 1, dilation 1, padding (k-1)/2, 1, 1, one group, float32 on
  // the CPU, input and output channels multiples of 16 (oneDNN's channel block, so the stacked
  // taps start on block boundaries).
  static bool fits(const torch::Tensor& weight, c10::IntArrayRef stride, c10::IntArrayRef padding,
                   c10::IntArrayRef dilation, int64_t groups);

  // input [n, in, d, h, w]; returns [n, out, d, h, w], or an undefined tensor when oneDNN has no
  // Winograd kernel for this input on this CPU (asked once per input shape), and for inputs that need
  // gradients or passes under CPU autocast (bf16), which the caller's conv3d serves.
  torch::Tensor forward(const torch::Tensor& input);

  // Whether forward() computes inputs of this shape here (asks oneDNN, as forward() does).
  bool computes(c10::IntArrayRef inputSizes);

 private:
  struct Plan;
  Plan* planFor(int64_t slices, int64_t height, int64_t width);
  Plan* planForInput(c10::IntArrayRef inputSizes);  // nullptr for other shapes and channel counts
  void addNeighbourTaps(float* stacked, int64_t samples, int64_t depth, int64_t plane) const;

  int64_t in_, out_, taps_;
  torch::Tensor stackedWeight_;  // [taps * out, in, 3, 3]: tap t of output o is 2-D output t * out + o
  torch::Tensor bias_;           // [out], zeros when the layer has none
  std::map<std::array<int64_t, 3>, std::unique_ptr<Plan>> plans_;  // by slices, height, width
};

}  // namespace medseg
