#include "core/nn/SliceWinogradConvolution.h"

#include <algorithm>

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <oneapi/dnnl/dnnl.hpp>

namespace medseg {
namespace {

using dnnl::memory;
constexpr int64_t kChannelBlock = 16;  // the nChw16c layout oneDNN's AVX-512 Winograd kernel reads and writes

dnnl::engine& cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

bool allEqual(c10::IntArrayRef values, int64_t expected) {
  return std::all_of(values.begin(), values.end(), [expected](int64_t v) { return v == expected; });
}

// The stacked weights [taps * out, in, 3, 3] in the layout the chosen kernel reads (its Winograd domain).
memory transformWeights(const torch::Tensor& stackedWeight, const memory::desc& layout) {
  memory transformed(layout, cpuEngine());
  const memory::dims dims(stackedWeight.sizes().begin(), stackedWeight.sizes().end());
  memory plain({dims, memory::data_type::f32, memory::format_tag::oihw}, cpuEngine(), stackedWeight.data_ptr<float>());
  dnnl::stream stream(cpuEngine());
  dnnl::reorder(plain, transformed).execute(stream, plain, transformed);
  stream.wait();
  return transformed;
}

// Copies each sample of a [n, channels, depth, h, w] volume to (toBlocked) or from the blocked 2-D
// layout `blocked` of oneDNN's kernel, whose images are the samples' depth slices (sample s, slice z at
// image s * depth + z) and whose channels from `channelOffset` on are the volume's.
void copySlices(dnnl::stream& stream, const memory::desc& blocked, float* blockedData, float* volume,
                c10::IntArrayRef volumeSizes, int64_t channelOffset, bool toBlocked) {
  const int64_t samples = volumeSizes[0], channels = volumeSizes[1], depth = volumeSizes[2],
                height = volumeSizes[3], width = volumeSizes[4];
  const memory::dims slices{depth, channels, height, width};
  const memory::desc sampleLayout(slices, memory::data_type::f32,
                                  memory::dims{height * width, depth * height * width, width, 1});
  for (int64_t s = 0; s < samples; ++s) {
    memory sample(sampleLayout, cpuEngine(), volume + s * channels * depth * height * width);
    memory part(blocked.submemory_desc(slices, {s * depth, channelOffset, 0, 0}), cpuEngine(), blockedData);
    if (toBlocked)
      dnnl::reorder(sample, part).execute(stream, sample, part);
    else
      dnnl::reorder(part, sample).execute(stream, part, sample);
  }
}

}  // namespace

struct SliceWinogradConvolution::Plan {
  dnnl::convolution_forward convolution;
  memory::desc source, destination;
  memory weights;  // the stacked weights already in the kernel's own (Winograd-domain) layout
};

SliceWinogradConvolution::SliceWinogradConvolution(const torch::Tensor& weight, const torch::Tensor& bias)
    : in_(weight.size(1)), out_(weight.size(0)), taps_(weight.size(2)) {
  stackedWeight_ = weight.detach()
                       .to(torch::kFloat)
                       .permute({2, 0, 1, 3, 4})
                       .contiguous()
                       .reshape({taps_ * out_, in_, 3, 3});
  bias_ = bias.defined() ? bias.detach().to(torch::kFloat).contiguous() : torch::zeros({out_});
}

SliceWinogradConvolution::~SliceWinogradConvolution() = default;

bool SliceWinogradConvolution::fits(const torch::Tensor& weight, c10::IntArrayRef stride, c10::IntArrayRef padding,
                                    c10::IntArrayRef dilation, int64_t groups) {
  if (weight.dim() != 5 || weight.scalar_type() != torch::kFloat || !weight.device().is_cpu()) return false;
  const int64_t taps = weight.size(2);
  if (taps % 2 == 0 || weight.size(3) != 3 || weight.size(4) != 3) return false;
  if (groups != 1 || weight.size(0) % kChannelBlock != 0 || weight.size(1) % kChannelBlock != 0) return false;
  return allEqual(stride, 1) && allEqual(dilation, 1) && padding.size() == 3 && padding[0] == (taps - 1) / 2 &&
         padding[1] == 1 && padding[2] == 1;
}

SliceWinogradConvolution::Plan* SliceWinogradConvolution::planFor(int64_t slices, int64_t height, int64_t width) {
  const std::array<int64_t, 3> key{slices, height, width};
  if (auto found = plans_.find(key); found != plans_.end()) return found->second.get();
  std::unique_ptr<Plan> plan;
  try {
    const memory::dims source{slices, in_, height, width}, weights{taps_ * out_, in_, 3, 3},
        destination{slices, taps_ * out_, height, width};
    using tag = memory::format_tag;
    const auto f32 = memory::data_type::f32;
    const dnnl::convolution_forward::desc problem(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_winograd, memory::desc(source, f32, tag::nChw16c),
        memory::desc(weights, f32, tag::any), memory::desc(destination, f32, tag::nChw16c), {1, 1}, {1, 1}, {1, 1});
    const dnnl::convolution_forward::primitive_desc chosen(problem, cpuEngine());
    plan = std::make_unique<Plan>();
    plan->convolution = dnnl::convolution_forward(chosen);
    plan->source = chosen.src_desc();
    plan->destination = chosen.dst_desc();
    // Plans for other batch sizes often want the same layout: the weights are transformed once for them.
    for (const auto& [other, made] : plans_)
      if (made && made->weights.get_desc() == chosen.weights_desc()) plan->weights = made->weights;
    if (!plan->weights) plan->weights = transformWeights(stackedWeight_, chosen.weights_desc());
  } catch (const dnnl::error&) {
    // No Winograd kernel for this CPU or shape: remembered, so the caller's direct convolution
    // takes every later input of this shape without asking again.
    plan.reset();
  }
  return (plans_[key] = std::move(plan)).get();
}

void SliceWinogradConvolution::addNeighbourTaps(float* stacked, int64_t samples, int64_t depth, int64_t plane) const {
  // Output slice z of channel o = bias + the sum over taps t of 2-D channel t * out + o at slice
  // z + t - reach (nothing outside the volume: the depth padding). Summed into the centre tap's
  // channels in place: no item writes another tap's channels, so the items run in parallel.
  const int64_t blocks = out_ / kChannelBlock, stackedBlocks = taps_ * blocks, reach = (taps_ - 1) / 2,
                blockSize = plane * kChannelBlock;
  const float* bias = bias_.data_ptr<float>();
  at::parallel_for(0, samples * depth * blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t s = item / (depth * blocks), z = item / blocks % depth, b = item % blocks;
      float* centre = stacked + ((s * depth + z) * stackedBlocks + reach * blocks + b) * blockSize;
      for (int64_t t = 0; t < taps_; ++t) {
        const int64_t from = z + t - reach;
        if (t == reach || from < 0 || from >= depth) continue;
        const float* tap = stacked + ((s * depth + from) * stackedBlocks + t * blocks + b) * blockSize;
        for (int64_t i = 0; i < blockSize; ++i) centre[i] += tap[i];
      }
      const float* blockBias = bias + b * kChannelBlock;
      for (int64_t p = 0; p < plane; ++p)
        for (int64_t j = 0; j < kChannelBlock; ++j) centre[p * kChannelBlock + j] += blockBias[j];
    }
  });
}

SliceWinogradConvolution::Plan* SliceWinogradConvolution::planForInput(c10::IntArrayRef sizes) {
  if (sizes.size() != 5 || sizes[1] != in_) return nullptr;
  return planFor(sizes[0] * sizes[2], sizes[3], sizes[4]);
}

bool SliceWinogradConvolution::computes(c10::IntArrayRef sizes) { return planForInput(sizes) != nullptr; }

torch::Tensor SliceWinogradConvolution::forward(const torch::Tensor& input) {
  // Under bf16 autocast the caller's conv3d is what autocast casts; a float32 kernel here would undo it.
  if (input.scalar_type() != torch::kFloat || !input.device().is_cpu() || input.requires_grad() ||
      at::autocast::is_cpu_enabled())
    return {};
  Plan* plan = planForInput(input.sizes());
  if (plan == nullptr) return {};
  const torch::Tensor x = input.contiguous();
  const int64_t samples = x.size(0), depth = x.size(2), height = x.size(3), width = x.size(4);
  dnnl::stream stream(cpuEngine());

  // Buffers are tensors, so they come from the process's allocator like every other feature map.
  torch::Tensor source = torch::empty({static_cast<int64_t>(plan->source.get_size() / sizeof(float))});
  copySlices(stream, plan->source, source.data_ptr<float>(), x.data_ptr<float>(), x.sizes(), 0, true);
  torch::Tensor stacked = torch::empty({static_cast<int64_t>(plan->destination.get_size() / sizeof(float))});
  memory sourceMemory(plan->source, cpuEngine(), source.data_ptr<float>());
  memory stackedMemory(plan->destination, cpuEngine(), stacked.data_ptr<float>());
  plan->convolution.execute(stream, {{DNNL_ARG_SRC, sourceMemory},
                                     {DNNL_ARG_WEIGHTS, plan->weights},
                                     {DNNL_ARG_DST, stackedMemory}});
  stream.wait();
  source.reset();
  addNeighbourTaps(stacked.data_ptr<float>(), samples, depth, height * width);

  // The centre tap's channels, now the output, back as [n, out, d, h, w].
  torch::Tensor output = torch::empty({samples, out_, depth, height, width});
  copySlices(stream, plan->destination, stacked.data_ptr<float>(), output.data_ptr<float>(), output.sizes(),
             (taps_ - 1) / 2 * out_, false);
  stream.wait();
  return output;
}

}  // namespace medseg
