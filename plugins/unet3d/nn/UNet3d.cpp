// The 3-D U-Net. Layout, with f(l) = UNetConfig::filtersAt(l) and D = depth:
//
//   encoder[0]   : block(in -> f0)                       full resolution
//   down[l-1]    : conv k2 s2 (f(l-1) -> f(l)) + norm + act  (learned 2x down-sampling), l = 1..D-1
//   encoder[l]   : block(f(l) -> f(l))                    encoder[D-1] is the bottleneck
//   up[l]        : transposed conv k2 s2 (f(l+1) -> f(l)), l = D-2..0
//   decoder[l]   : block(2 f(l) -> f(l)) on concat(up, encoder skip)
//   heads[0]     : conv 1x1x1 f0 -> out; heads[k] on decoder[k] for deep supervision (k = 1..D-2)
//
// block(a -> b) = two (conv 3x3x3 -> norm -> leaky ReLU); residual blocks add the block input (through
// a 1x1x1 projection when a != b) before the second activation. Convolutions followed by a norm carry no
// bias (the norm's shift makes it redundant); the transposed convolutions and heads do.
#include "plugins/unet3d/nn/UNet3d.h"

#include <cmath>
#include <stdexcept>

#include <ATen/autocast_mode.h>

#include "core/nn/BlockTransposedConvolution.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

namespace nn = torch::nn;

// Largest group count <= 8 that divides the channels (GroupNorm needs exact division).
int64_t groupCount(int64_t channels) {
  for (int64_t groups = std::min<int64_t>(8, channels); groups > 1; --groups)
    if (channels % groups == 0) return groups;
  return 1;
}

nn::AnyModule makeNorm(const std::string& kind, int64_t channels) {
  if (kind == "batch") return nn::AnyModule(nn::BatchNorm3d(nn::BatchNorm3dOptions(channels)));
  if (kind == "group") return nn::AnyModule(nn::GroupNorm(nn::GroupNormOptions(groupCount(channels), channels)));
  return nn::AnyModule(nn::InstanceNorm3d(nn::InstanceNorm3dOptions(channels).affine(true)));
}

nn::Conv3d conv3(int64_t in, int64_t out) {
  return nn::Conv3d(nn::Conv3dOptions(in, out, 3).padding(1).bias(false));
}

// conv -> norm (-> activation, applied by the owner so residual blocks can add first).
class ConvNormImpl : public nn::Module {
 public:
  ConvNormImpl(nn::Conv3d conv, const std::string& norm, int64_t outChannels) {
    conv_ = register_module("conv", std::move(conv));
    norm_ = makeNorm(norm, outChannels);
    register_module("norm", norm_.ptr());
  }
  torch::Tensor forward(const torch::Tensor& x) { return norm_.forward(conv_->forward(x)); }

 private:
  nn::Conv3d conv_{nullptr};
  nn::AnyModule norm_;
};
TORCH_MODULE(ConvNorm);

class ConvBlockImpl : public nn::Module {
 public:
  ConvBlockImpl(int64_t in, int64_t out, const UNetConfig& config) : slope_(config.leakySlope) {
    first_ = register_module("first", ConvNorm(conv3(in, out), config.norm, out));
    second_ = register_module("second", ConvNorm(conv3(out, out), config.norm, out));
    residual_ = config.residual;
    if (residual_ && in != out)
      projection_ = register_module("projection", nn::Conv3d(nn::Conv3dOptions(in, out, 1).bias(false)));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto y = activate(first_->forward(x));
    y = second_->forward(y);
    if (residual_) y = y + (projection_ ? projection_->forward(x) : x);
    return activate(y);
  }

 private:
  torch::Tensor activate(torch::Tensor x) const {
    torch::leaky_relu_(x, slope_);  // in place: the norm output is not needed again
    return x;
  }
  double slope_;
  bool residual_ = false;
  ConvNorm first_{nullptr}, second_{nullptr};
  nn::Conv3d projection_{nullptr};
};
TORCH_MODULE(ConvBlock);

class DownsampleImpl : public nn::Module {
 public:
  DownsampleImpl(int64_t in, int64_t out, const UNetConfig& config) : slope_(config.leakySlope) {
    body_ = register_module(
        "body", ConvNorm(nn::Conv3d(nn::Conv3dOptions(in, out, 2).stride(2).bias(false)), config.norm, out));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto y = body_->forward(x);
    torch::leaky_relu_(y, slope_);
    return y;
  }

 private:
  double slope_;
  ConvNorm body_{nullptr};
};
TORCH_MODULE(Downsample);

// He initialisation for leaky-ReLU networks (a = slope), zero biases, unit/zero norm affine.
void initialiseWeights(nn::Module& module, double slope) {
  torch::NoGradGuard noGrad;
  for (auto& child : module.modules(/*include_self=*/false)) {
    if (auto* conv = child->as<nn::Conv3d>()) {
      nn::init::kaiming_normal_(conv->weight, slope, torch::kFanIn, torch::kLeakyReLU);
      if (conv->bias.defined()) nn::init::zeros_(conv->bias);
    } else if (auto* up = child->as<nn::ConvTranspose3d>()) {
      nn::init::kaiming_normal_(up->weight, slope, torch::kFanIn, torch::kLeakyReLU);
      if (up->bias.defined()) nn::init::zeros_(up->bias);
    }
  }
}

// bf16 inference runs these layers (the optimised float32 graph is not used under autocast): there
// the up-sampling goes to BlockTransposedConvolution, on all cores where LibTorch's uses one, in
// float32 as LibTorch's autocast keeps it. Training and float32 passes keep LibTorch's layer, so
// validation and --no-graph-optimisation stay bit for bit those of PyTorch.
torch::Tensor upsample(nn::ConvTranspose3dImpl& layer, const torch::Tensor& x) {
  if (torch::GradMode::is_enabled() || !x.is_cpu() || !at::autocast::is_cpu_enabled()) return layer.forward(x);
  return blockTransposedConvolution3d(x.to(torch::kFloat), layer.weight,
                                      layer.bias.defined() ? c10::optional<torch::Tensor>(layer.bias) : c10::nullopt);
}

}  // namespace

UNet3dImpl::UNet3dImpl(const UNetConfig& config) : config_(config) {
  // Validate through the JSON parser so code-built configs get the same checks as files.
  config_ = UNetConfig::fromJson(config.toJson());
  const auto& c = config_;
  encoder_ = register_module("encoder", nn::ModuleList());
  downsample_ = register_module("downsample", nn::ModuleList());
  upsample_ = register_module("upsample", nn::ModuleList());
  decoder_ = register_module("decoder", nn::ModuleList());
  heads_ = register_module("heads", nn::ModuleList());
  for (int64_t level = 0; level < c.depth; ++level) {
    const int64_t filters = c.filtersAt(level);
    if (level == 0) {
      encoder_->push_back(ConvBlock(c.inChannels, filters, c));
    } else {
      downsample_->push_back(Downsample(c.filtersAt(level - 1), filters, c));
      encoder_->push_back(ConvBlock(filters, filters, c));
    }
  }
  for (int64_t level = 0; level + 1 < c.depth; ++level) {
    const int64_t filters = c.filtersAt(level);
    upsample_->push_back(nn::ConvTranspose3d(nn::ConvTranspose3dOptions(c.filtersAt(level + 1), filters, 2).stride(2)));
    decoder_->push_back(ConvBlock(2 * filters, filters, c));
  }
  heads_->push_back(nn::Conv3d(nn::Conv3dOptions(c.filtersAt(0), c.outChannels, 1)));
  for (int64_t level = 1; level <= c.deepSupervisionHeads(); ++level)
    heads_->push_back(nn::Conv3d(nn::Conv3dOptions(c.filtersAt(level), c.outChannels, 1)));
  initialiseWeights(*this, c.leakySlope);
}

std::vector<torch::Tensor> UNet3dImpl::forwardAllHeads(torch::Tensor input) {
  return run(input, config_.deepSupervisionHeads());
}

torch::Tensor UNet3dImpl::forward(torch::Tensor input) { return run(input, 0).front(); }

std::vector<torch::Tensor> UNet3dImpl::run(const torch::Tensor& input, int64_t extraHeads) {
  const auto& c = config_;
  if (input.dim() != 5 || input.size(1) != c.inChannels)
    throw InputError("U-Net input must be [N, " + std::to_string(c.inChannels) + ", D, H, W], got " +
                     c10::str(input.sizes()));
  for (int64_t axis = 2; axis < 5; ++axis)
    if (input.size(axis) % c.sizeDivisor() != 0)
      throw InputError("U-Net input edges must be multiples of " + std::to_string(c.sizeDivisor()) + ", got " +
                       c10::str(input.sizes()));
  std::vector<torch::Tensor> skips;
  torch::Tensor x = input;
  for (int64_t level = 0; level < c.depth; ++level) {
    if (level > 0) x = downsample_[level - 1]->as<DownsampleImpl>()->forward(x);
    x = encoder_[level]->as<ConvBlockImpl>()->forward(x);
    skips.push_back(x);
  }
  std::vector<torch::Tensor> outputs(static_cast<size_t>(1 + extraHeads));
  for (int64_t level = c.depth - 2; level >= 0; --level) {
    x = upsample(*upsample_[level]->as<nn::ConvTranspose3dImpl>(), x);
    x = decoder_[level]->as<ConvBlockImpl>()->forward(torch::cat({x, skips[static_cast<size_t>(level)]}, 1));
    if (level <= extraHeads) outputs[static_cast<size_t>(level)] = heads_[level]->as<nn::Conv3dImpl>()->forward(x);
  }
  if (c.depth == 1) outputs[0] = heads_[0]->as<nn::Conv3dImpl>()->forward(x);
  return outputs;
}

std::shared_ptr<torch::nn::Module> UNet3dImpl::part(const std::string& list, int64_t index) const {
  const nn::ModuleList* modules = list == "encoder"      ? &encoder_
                                  : list == "downsample" ? &downsample_
                                  : list == "upsample"   ? &upsample_
                                  : list == "decoder"    ? &decoder_
                                  : list == "heads"      ? &heads_
                                                         : nullptr;
  if (!modules) throw std::invalid_argument("U-Net has no layer list \"" + list + "\"");
  if (index < 0 || index >= static_cast<int64_t>((*modules)->size()))
    throw std::out_of_range("U-Net layer list \"" + list + "\" has no entry " + std::to_string(index));
  return (*modules)->ptr(static_cast<size_t>(index));
}

torch::Tensor UNet3dImpl::forwardPart(const std::string& list, int64_t index, const torch::Tensor& x) {
  const auto module = part(list, index);
  if (list == "encoder" || list == "decoder") return module->as<ConvBlockImpl>()->forward(x);
  if (list == "downsample") return module->as<DownsampleImpl>()->forward(x);
  if (list == "upsample") return upsample(*module->as<nn::ConvTranspose3dImpl>(), x);
  return module->as<nn::Conv3dImpl>()->forward(x);
}

int64_t UNet3dImpl::parameterCount() const {
  int64_t count = 0;
  for (const auto& parameter : parameters()) count += parameter.numel();
  return count;
}

// Forward FLOPs per input voxel, counting only convolutions (2 FLOPs per multiply-add; norms,
// activations, biases and concatenation are O(C) per voxel against O(27 C^2) and left out):
//   conv k^3, a -> b at level l:        2 k^3 a b / 8^l     (one output voxel per 8^l input voxels)
//   down conv k2 s2, a -> b into l:     2 * 8 a b / 8^l     (= 2 a b / 8^(l-1))
//   transposed conv k2 s2, a -> b at l: 2 a b / 8^l         (each level-l output voxel gets a MACs x b)
//   residual projection 1x1x1:          2 a b / 8^l
double UNet3dImpl::forwardFlopsPerVoxel() const {
  const auto& c = config_;
  auto scale = [](int64_t level) { return 1.0 / std::pow(8.0, static_cast<double>(level)); };
  auto block = [&](int64_t in, int64_t out, int64_t level) {
    double macs = 27.0 * in * out + 27.0 * out * out;
    if (c.residual && in != out) macs += static_cast<double>(in) * out;
    return 2.0 * macs * scale(level);
  };
  double flops = 0.0;
  for (int64_t level = 0; level < c.depth; ++level) {
    const int64_t f = c.filtersAt(level);
    if (level == 0) {
      flops += block(c.inChannels, f, 0);
    } else {
      flops += 2.0 * 8.0 * c.filtersAt(level - 1) * f * scale(level);
      flops += block(f, f, level);
    }
  }
  for (int64_t level = 0; level + 1 < c.depth; ++level) {
    const int64_t f = c.filtersAt(level);
    flops += 2.0 * c.filtersAt(level + 1) * f * scale(level);
    flops += block(2 * f, f, level);
  }
  flops += 2.0 * c.filtersAt(0) * c.outChannels;
  for (int64_t level = 1; level <= c.deepSupervisionHeads(); ++level)
    flops += 2.0 * c.filtersAt(level) * c.outChannels * scale(level);
  return flops;
}

}  // namespace medseg
