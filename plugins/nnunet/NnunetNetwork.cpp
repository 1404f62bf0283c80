// nnU-Net's networks (DNA 0.3.1) in LibTorch. Module tree, with n = stages, F = features_per_stage:
//
//   encoder                      PlainConvEncoder / ResidualEncoder
//     stem.convs.0               ResEnc only: one conv block, input -> stem_channels, stride 1
//     stages.s.0.convs.i         Plain: n_conv_per_stage[s] conv blocks, the first one strided
//     stages.s.blocks.b          ResEnc: n_blocks_per_stage[s] residual blocks, the first one strided
//   decoder
//     encoder                    the encoder again (DNA keeps it as a decoder attribute)
//     transpconvs.s              transposed conv F[n-1-s] -> F[n-2-s], kernel = stride = strides[n-1-s]
//     stages.s.convs.i           conv blocks on concat(up-sampled, skip), 2 F[n-2-s] -> F[n-2-s]
//     seg_layers.s               1x1 conv F[n-2-s] -> outputs (bias); only the last one runs here
//
// A conv block (DNA's ConvDropoutNormReLU) is conv -> [dropout] -> [norm] -> [nonlin] (norm and nonlin
// swapped with nonlin_first), registered by role (conv, dropout, norm, nonlin) and again, in that order,
// as the Sequential all_modules that runs it. Residual blocks (ResNet-D):
//   BasicBlockD:  conv1 (k, stride, nonlin) -> conv2 (k, no nonlin), + skip, nonlin
//   BottleneckD:  conv1 (1, nonlin) -> conv2 (k, stride, nonlin) -> conv3 (1, no nonlin), + skip, nonlin
//   skip: identity, or Sequential(avg pool when strided, conv block 1x1 without bias/nonlin when the
//   channels change).
#include "plugins/nnunet/NnunetNetwork.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "core/nn/SliceWinogradConvolution.h"
#include "core/util/Interrupt.h"

namespace medseg::nnunet {
namespace {

namespace nn = torch::nn;
using json = nlohmann::json;
using Axes = std::vector<int64_t>;

const std::string kDna = "dynamic_network_architectures.";
const std::string kPlainClass = kDna + "architectures.unet.PlainConvUNet";
const std::string kResEncClass = kDna + "architectures.unet.ResidualEncoderUNet";

// ---------------------------------------------------------------------------------------------------
// Parsing

[[noreturn]] void refuse(const std::string& key, const json& value, const std::string& why) {
  throw InputError("plans.json architecture: " + key + " = " + value.dump() + " " + why);
}

int64_t positiveInt(const json& value, const std::string& key) {
  if (!value.is_number_integer() || value.get<int64_t>() < 1) refuse(key, value, "is not a positive integer");
  return value.get<int64_t>();
}

bool boolean(const json& kwargs, const std::string& key, bool fallback) {
  if (!kwargs.contains(key)) return fallback;
  if (!kwargs[key].is_boolean()) refuse(key, kwargs[key], "is not true or false");
  return kwargs[key].get<bool>();
}

const json& required(const json& kwargs, const std::string& key) {
  if (!kwargs.contains(key)) throw InputError("plans.json architecture: arch_kwargs lacks \"" + key + "\"");
  return kwargs[key];
}

// DNA accepts one integer for all stages or a list with one per stage.
std::vector<int64_t> perStage(const json& value, const std::string& key, int64_t count) {
  if (value.is_number_integer()) return std::vector<int64_t>(static_cast<size_t>(count), positiveInt(value, key));
  if (!value.is_array() || static_cast<int64_t>(value.size()) != count)
    refuse(key, value, "needs one integer or a list of " + std::to_string(count) + " integers");
  std::vector<int64_t> result;
  for (const auto& entry : value) result.push_back(positiveInt(entry, key));
  return result;
}

// Kernel sizes and strides: one integer, or per stage an integer or a list with one per axis.
std::vector<Axes> perStageAxes(const json& value, const std::string& key, int64_t count, int64_t dims) {
  auto axes = [&](const json& entry) {
    if (entry.is_number_integer()) return Axes(static_cast<size_t>(dims), positiveInt(entry, key));
    if (!entry.is_array() || static_cast<int64_t>(entry.size()) != dims)
      refuse(key, value,
             "needs " + std::to_string(dims) + " values per stage for a " + std::to_string(dims) + "-D convolution");
    Axes result;
    for (const auto& v : entry) result.push_back(positiveInt(v, key));
    return result;
  };
  if (value.is_number_integer()) return std::vector<Axes>(static_cast<size_t>(count), axes(value));
  if (!value.is_array() || static_cast<int64_t>(value.size()) != count)
    refuse(key, value, "needs one entry per stage (" + std::to_string(count) + ")");
  std::vector<Axes> result;
  for (const auto& entry : value) result.push_back(axes(entry));
  return result;
}

// The class a plans.json names by import path, as pydoc.locate finds it: torch.nn.X or
// torch.nn.modules.<module>.X. Returns "" for null (no such layer).
std::string torchClass(const json& value, const std::string& key,
                       const std::vector<std::pair<std::string, std::string>>& accepted) {
  if (value.is_null()) return "";
  std::string names;
  for (const auto& [module, name] : accepted) {
    if (value == "torch.nn." + name || value == "torch.nn.modules." + module + "." + name) return name;
    names += (names.empty() ? "" : ", ") + name;
  }
  refuse(key, value, "is not supported (supported: " + names + ")");
}

void checkKeys(const json& object, const std::string& key, const std::set<std::string>& allowed) {
  if (object.is_null()) return;
  if (!object.is_object()) refuse(key, object, "is not an object");
  for (const auto& item : object.items())
    if (!allowed.count(item.key())) refuse(key, object, "has \"" + item.key() + "\", which MedSeg does not implement");
}

int64_t convDimensions(const json& kwargs) {
  const std::string conv = torchClass(required(kwargs, "conv_op"), "conv_op", {{"conv", "Conv3d"}, {"conv", "Conv2d"}});
  if (conv.empty()) refuse("conv_op", kwargs["conv_op"], "must name a convolution");
  return conv == "Conv3d" ? 3 : 2;
}

NormSpec parseNorm(const json& kwargs, int64_t dims) {
  const std::string d = std::to_string(dims) + "d";
  const json op = kwargs.value("norm_op", json());
  const std::string name =
      torchClass(op, "norm_op", {{"instancenorm", "InstanceNorm" + d}, {"batchnorm", "BatchNorm" + d}});
  NormSpec norm;
  if (name.empty()) return norm;
  norm.kind = name.rfind("Batch", 0) == 0 ? NormKind::Batch : NormKind::Instance;
  // PyTorch's defaults for what norm_op_kwargs leaves out.
  norm.affine = norm.trackRunningStats = norm.kind == NormKind::Batch;
  const json options = kwargs.value("norm_op_kwargs", json());
  checkKeys(options, "norm_op_kwargs", {"eps", "momentum", "affine", "track_running_stats"});
  if (options.is_null()) return norm;
  if (options.contains("eps")) {
    if (!options["eps"].is_number() || options["eps"].get<double>() <= 0)
      refuse("norm_op_kwargs.eps", options["eps"], "is not a positive number");
    norm.eps = options["eps"].get<double>();
  }
  norm.affine = boolean(options, "affine", norm.affine);
  norm.trackRunningStats = boolean(options, "track_running_stats", norm.trackRunningStats);
  return norm;  // momentum only matters in training
}

void parseNonlin(const json& kwargs, NetworkSpec& spec) {
  const std::string name =
      torchClass(kwargs.value("nonlin", json()), "nonlin", {{"activation", "LeakyReLU"}, {"activation", "ReLU"}});
  if (name.empty()) return;
  spec.nonlin = name == "ReLU" ? NonlinKind::ReLU : NonlinKind::LeakyReLU;
  const json options = kwargs.value("nonlin_kwargs", json());
  if (spec.nonlin == NonlinKind::ReLU) {
    checkKeys(options, "nonlin_kwargs", {"inplace"});
    return;
  }
  checkKeys(options, "nonlin_kwargs", {"negative_slope", "inplace"});
  if (options.is_object() && options.contains("negative_slope")) {
    if (!options["negative_slope"].is_number())
      refuse("nonlin_kwargs.negative_slope", options["negative_slope"], "is not a number");
    spec.negativeSlope = options["negative_slope"].get<double>();
  }
}

void parseDropout(const json& kwargs, NetworkSpec& spec) {
  const std::vector<std::pair<std::string, std::string>> dropouts = {
      {"dropout", "Dropout"}, {"dropout", "Dropout1d"}, {"dropout", "Dropout2d"}, {"dropout", "Dropout3d"}};
  spec.dropout = !torchClass(kwargs.value("dropout_op", json()), "dropout_op", dropouts).empty();
  checkKeys(kwargs.value("dropout_op_kwargs", json()), "dropout_op_kwargs", {"p", "inplace"});
}

void parseResidualOptions(const json& kwargs, NetworkSpec& spec) {
  if (kwargs.contains("block")) {
    const json& block = kwargs["block"];
    const std::string path = kDna + "building_blocks.residual.";
    if (block == path + "BottleneckD")
      spec.block = ResidualBlock::Bottleneck;
    else if (block != path + "BasicBlockD")
      refuse("block", block, "is not " + path + "BasicBlockD or BottleneckD");
  }
  const json stem = kwargs.value("stem_channels", json());
  spec.stemChannels = stem.is_null() ? spec.featuresPerStage[0] : positiveInt(stem, "stem_channels");
  if (spec.block == ResidualBlock::Basic) return;  // DNA ignores bottleneck_channels for BasicBlockD
  const json channels = kwargs.value("bottleneck_channels", json());
  if (!channels.is_number_integer() && !(channels.is_array() && static_cast<int64_t>(channels.size()) == spec.stages))
    refuse("bottleneck_channels", channels,
           "must be given for BottleneckD: an integer, or one entry per stage (" + std::to_string(spec.stages) + ")");
  for (int64_t s = 0; s < spec.stages; ++s) {
    const json& stage = channels.is_array() ? channels[static_cast<size_t>(s)] : channels;
    // An entry is one count for all blocks of the stage or a list with one per block.
    spec.bottleneckChannels.push_back(
        perStage(stage, "bottleneck_channels", spec.encoderDepth[static_cast<size_t>(s)]));
  }
}

// The keyword arguments the two classes take (DNA 0.3.1), besides input_channels and num_classes,
// which nnU-Net sets from dataset.json.
const std::set<std::string> kCommonKwargs = {"n_stages",          "features_per_stage",
                                             "conv_op",           "kernel_sizes",
                                             "strides",           "n_conv_per_stage_decoder",
                                             "conv_bias",         "norm_op",
                                             "norm_op_kwargs",    "dropout_op",
                                             "dropout_op_kwargs", "nonlin",
                                             "nonlin_kwargs",     "deep_supervision"};
const std::set<std::string> kPlainKwargs = {"n_conv_per_stage", "nonlin_first"};
const std::set<std::string> kResEncKwargs = {"n_blocks_per_stage", "block", "bottleneck_channels", "stem_channels"};

NetworkClass parseClass(const json& architecture) {
  const json name = architecture.value("network_class_name", json());
  if (name == kPlainClass) return NetworkClass::PlainConvUNet;
  if (name == kResEncClass) return NetworkClass::ResidualEncoderUNet;
  throw InputError("plans.json architecture: network_class_name " + name.dump() + " is not supported; MedSeg runs " +
                   kPlainClass + " and " + kResEncClass);
}

// ---------------------------------------------------------------------------------------------------
// Layers

Axes ones(int64_t dims) { return Axes(static_cast<size_t>(dims), 1); }

bool strided(const Axes& stride) {
  return std::any_of(stride.begin(), stride.end(), [](int64_t s) { return s != 1; });
}

// Conv3d (the same parameters, so the checkpoint's keys load as they are) that takes oneDNN's
// Winograd kernel at inference where the layer and CPU allow (core/nn/SliceWinogradConvolution), and
// Conv3d's own direct convolution otherwise. The kernel's transformed weights are made on the first
// pass after the weights change (a loaded fold copies into them).
class WinogradConv3dImpl : public nn::Conv3dImpl {
 public:
  using nn::Conv3dImpl::Conv3dImpl;

  torch::Tensor forward(const torch::Tensor& x) {
    if (torch::GradMode::is_enabled() || !SliceWinogradConvolution::fits(weight, options.stride(), padding(),
                                                                        options.dilation(), options.groups()))
      return nn::Conv3dImpl::forward(x);
    const auto version = std::make_pair(weight.data_ptr(), weight.is_inference() ? 0 : weight._version());
    if (!winograd_ || version != preparedFor_) {
      winograd_ = std::make_unique<SliceWinogradConvolution>(weight, bias);
      preparedFor_ = version;
    }
    torch::Tensor y = winograd_->forward(x);
    return y.defined() ? y : nn::Conv3dImpl::forward(x);
  }

 private:
  c10::IntArrayRef padding() const { return c10::get<torch::ExpandingArray<3>>(options.padding()); }

  std::unique_ptr<SliceWinogradConvolution> winograd_;
  std::pair<void*, int64_t> preparedFor_{nullptr, 0};
};
TORCH_MODULE(WinogradConv3d);

nn::AnyModule makeConv(int64_t dims, int64_t in, int64_t out, const Axes& kernel, const Axes& stride, bool bias) {
  Axes padding;
  for (int64_t k : kernel) padding.push_back((k - 1) / 2);
  if (dims == 3)
    return nn::AnyModule(WinogradConv3d(nn::Conv3dOptions(in, out, kernel).stride(stride).padding(padding).bias(bias)));
  return nn::AnyModule(nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(bias)));
}

nn::AnyModule makeTransposedConv(int64_t dims, int64_t in, int64_t out, const Axes& stride, bool bias) {
  if (dims == 3)
    return nn::AnyModule(nn::ConvTranspose3d(nn::ConvTranspose3dOptions(in, out, stride).stride(stride).bias(bias)));
  return nn::AnyModule(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(in, out, stride).stride(stride).bias(bias)));
}

nn::AnyModule makeNorm(int64_t dims, const NormSpec& norm, int64_t channels) {
  if (norm.kind == NormKind::Batch) {
    auto options =
        nn::BatchNormOptions(channels).eps(norm.eps).affine(norm.affine).track_running_stats(norm.trackRunningStats);
    return dims == 3 ? nn::AnyModule(nn::BatchNorm3d(options)) : nn::AnyModule(nn::BatchNorm2d(options));
  }
  auto options =
      nn::InstanceNormOptions(channels).eps(norm.eps).affine(norm.affine).track_running_stats(norm.trackRunningStats);
  return dims == 3 ? nn::AnyModule(nn::InstanceNorm3d(options)) : nn::AnyModule(nn::InstanceNorm2d(options));
}

// In place always: every activation here gets a tensor just computed by a conv, norm or sum, which
// nothing else reads, so this saves a feature-map allocation whatever nonlin_kwargs.inplace says.
nn::AnyModule makeNonlin(const NetworkSpec& spec) {
  if (spec.nonlin == NonlinKind::ReLU) return nn::AnyModule(nn::ReLU(nn::ReLUOptions(true)));
  return nn::AnyModule(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(spec.negativeSlope).inplace(true)));
}

nn::AnyModule makeAvgPool(int64_t dims, const Axes& stride) {
  if (dims == 3) return nn::AnyModule(nn::AvgPool3d(nn::AvgPool3dOptions(stride).stride(stride)));
  return nn::AnyModule(nn::AvgPool2d(nn::AvgPool2dOptions(stride).stride(stride)));
}

torch::Tensor activate(NonlinKind nonlin, double negativeSlope, torch::Tensor x) {
  if (nonlin == NonlinKind::ReLU) return torch::relu_(x);
  if (nonlin == NonlinKind::LeakyReLU) return torch::leaky_relu_(x, negativeSlope);
  return x;
}

struct BlockOptions {
  bool bias = false;
  bool dropout = false;
  bool nonlin = true;
  bool nonlinFirst = false;
};

// DNA's ConvDropoutNormReLU.
class ConvDropoutNormReLUImpl : public nn::Module {
 public:
  ConvDropoutNormReLUImpl(const NetworkSpec& spec, int64_t in, int64_t out, const Axes& kernel, const Axes& stride,
                          const BlockOptions& options) {
    std::vector<nn::AnyModule> ops{makeConv(spec.dimensions, in, out, kernel, stride, options.bias)};
    register_module("conv", ops.back().ptr());
    // Dropout is the identity at inference; the placeholder keeps the norm's index in all_modules.
    if (options.dropout) {
      ops.emplace_back(nn::Identity());
      register_module("dropout", ops.back().ptr());
    }
    const bool norm = spec.norm.kind != NormKind::None, nonlin = options.nonlin && spec.nonlin != NonlinKind::None;
    if (norm) {
      ops.push_back(makeNorm(spec.dimensions, spec.norm, out));
      register_module("norm", ops.back().ptr());
    }
    if (nonlin) {
      ops.push_back(makeNonlin(spec));
      register_module("nonlin", ops.back().ptr());
    }
    if (options.nonlinFirst && norm && nonlin) std::swap(ops[ops.size() - 1], ops[ops.size() - 2]);
    allModules_ = register_module("all_modules", nn::Sequential());
    for (auto& op : ops) allModules_->push_back(std::move(op));
  }
  torch::Tensor forward(torch::Tensor x) { return allModules_->forward(x); }

 private:
  nn::Sequential allModules_{nullptr};
};
TORCH_MODULE(ConvDropoutNormReLU);

// DNA's StackedConvBlocks: `count` conv blocks, only the first one strided.
class StackedConvBlocksImpl : public nn::Module {
 public:
  StackedConvBlocksImpl(const NetworkSpec& spec, int64_t count, int64_t in, int64_t out, const Axes& kernel,
                        const Axes& stride, const BlockOptions& options) {
    convs_ = register_module("convs", nn::Sequential());
    for (int64_t i = 0; i < count; ++i)
      convs_->push_back(
          ConvDropoutNormReLU(spec, i == 0 ? in : out, out, kernel, i == 0 ? stride : ones(spec.dimensions), options));
  }
  torch::Tensor forward(torch::Tensor x) { return convs_->forward(x); }

 private:
  nn::Sequential convs_{nullptr};
};
TORCH_MODULE(StackedConvBlocks);

// The residual blocks' shared part: the skip path and the final sum and activation.
class ResidualBlockImpl : public nn::Module {
 public:
  ResidualBlockImpl(const NetworkSpec& spec, int64_t in, int64_t out, const Axes& stride)
      : nonlin_(spec.nonlin), negativeSlope_(spec.negativeSlope) {
    if (!strided(stride) && in == out) return;
    skip_ = register_module("skip", nn::Sequential());
    if (strided(stride)) skip_->push_back(makeAvgPool(spec.dimensions, stride));
    if (in != out)
      skip_->push_back(ConvDropoutNormReLU(spec, in, out, ones(spec.dimensions), ones(spec.dimensions),
                                           BlockOptions{false, false, false, false}));
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor out = x;
    for (auto& conv : convs_) out = conv->forward(out);
    out += skip_ ? skip_->forward(x) : x;
    return activate(nonlin_, negativeSlope_, out);
  }

 protected:
  void addConv(const std::string& name, ConvDropoutNormReLU conv) { convs_.push_back(register_module(name, conv)); }

 private:
  NonlinKind nonlin_;
  double negativeSlope_;
  std::vector<ConvDropoutNormReLU> convs_;
  nn::Sequential skip_{nullptr};
};

// BasicBlockD and BottleneckD differ only in their convolutions.
class BasicBlockDImpl : public ResidualBlockImpl {
 public:
  BasicBlockDImpl(const NetworkSpec& spec, int64_t in, int64_t out, const Axes& kernel, const Axes& stride)
      : ResidualBlockImpl(spec, in, out, stride) {
    addConv("conv1",
            ConvDropoutNormReLU(spec, in, out, kernel, stride, BlockOptions{spec.convBias, spec.dropout, true, false}));
    addConv("conv2", ConvDropoutNormReLU(spec, out, out, kernel, ones(spec.dimensions),
                                         BlockOptions{spec.convBias, false, false, false}));
  }
};
TORCH_MODULE(BasicBlockD);

class BottleneckDImpl : public ResidualBlockImpl {
 public:
  BottleneckDImpl(const NetworkSpec& spec, int64_t in, int64_t bottleneck, int64_t out, const Axes& kernel,
                  const Axes& stride)
      : ResidualBlockImpl(spec, in, out, stride) {
    const Axes one = ones(spec.dimensions);
    addConv("conv1",
            ConvDropoutNormReLU(spec, in, bottleneck, one, one, BlockOptions{spec.convBias, false, true, false}));
    addConv("conv2", ConvDropoutNormReLU(spec, bottleneck, bottleneck, kernel, stride,
                                         BlockOptions{spec.convBias, spec.dropout, true, false}));
    addConv("conv3",
            ConvDropoutNormReLU(spec, bottleneck, out, one, one, BlockOptions{spec.convBias, false, false, false}));
  }
};
TORCH_MODULE(BottleneckD);

// DNA's StackedResidualBlocks for encoder stage `s`.
class StackedResidualBlocksImpl : public nn::Module {
 public:
  StackedResidualBlocksImpl(const NetworkSpec& spec, size_t s, int64_t in) {
    blocks_ = register_module("blocks", nn::Sequential());
    const int64_t out = spec.featuresPerStage[s];
    for (int64_t b = 0; b < spec.encoderDepth[s]; ++b) {
      const int64_t blockIn = b == 0 ? in : out;
      const Axes stride = b == 0 ? spec.strides[s] : ones(spec.dimensions);
      if (spec.block == ResidualBlock::Basic)
        blocks_->push_back(BasicBlockD(spec, blockIn, out, spec.kernelSizes[s], stride));
      else
        blocks_->push_back(BottleneckD(spec, blockIn, spec.bottleneckChannels[s][static_cast<size_t>(b)], out,
                                       spec.kernelSizes[s], stride));
    }
  }
  torch::Tensor forward(torch::Tensor x) { return blocks_->forward(x); }

 private:
  nn::Sequential blocks_{nullptr};
};
TORCH_MODULE(StackedResidualBlocks);

// PlainConvEncoder / ResidualEncoder: returns every stage's output (the skips, bottleneck last).
class EncoderImpl : public nn::Module {
 public:
  EncoderImpl(const NetworkSpec& spec, int64_t in) {
    const BlockOptions options{spec.convBias, spec.dropout, true, spec.nonlinFirst};
    if (spec.networkClass == NetworkClass::ResidualEncoderUNet) {
      stem_ = register_module("stem", StackedConvBlocks(spec, 1, in, spec.stemChannels, spec.kernelSizes[0],
                                                        ones(spec.dimensions), options));
      in = spec.stemChannels;
    }
    auto stages = register_module("stages", nn::ModuleList());
    for (size_t s = 0; s < static_cast<size_t>(spec.stages); ++s) {
      if (spec.networkClass == NetworkClass::ResidualEncoderUNet) {
        stages_.emplace_back(StackedResidualBlocks(spec, s, in));
        stages->push_back(stages_.back().ptr());
      } else {
        // PlainConvEncoder wraps each stage in a Sequential (room for a pooling layer): stages.s.0.
        stages_.emplace_back(StackedConvBlocks(spec, spec.encoderDepth[s], in, spec.featuresPerStage[s],
                                               spec.kernelSizes[s], spec.strides[s], options));
        nn::ModuleList wrapper;
        wrapper->push_back(stages_.back().ptr());
        stages->push_back(wrapper);
      }
      in = spec.featuresPerStage[s];
    }
  }
  std::vector<torch::Tensor> forward(torch::Tensor x) {
    if (stem_) x = stem_->forward(x);
    std::vector<torch::Tensor> skips;
    for (auto& stage : stages_) skips.push_back(x = stage.forward(x));
    return skips;
  }

 private:
  StackedConvBlocks stem_{nullptr};
  std::vector<nn::AnyModule> stages_;
};
TORCH_MODULE(Encoder);

// UNetDecoder: from the bottleneck up, transposed conv, concatenation with the skip, conv blocks.
class DecoderImpl : public nn::Module {
 public:
  DecoderImpl(const NetworkSpec& spec, const Encoder& encoder, int64_t outputChannels) {
    register_module("encoder", encoder);  // keys decoder.encoder.* = encoder.*, as in nnU-Net's state dicts
    auto stages = register_module("stages", nn::ModuleList());
    auto transpconvs = register_module("transpconvs", nn::ModuleList());
    auto segLayers = register_module("seg_layers", nn::ModuleList());
    const auto n = static_cast<size_t>(spec.stages);
    const Axes one = ones(spec.dimensions);
    for (size_t s = 1; s < n; ++s) {
      const int64_t below = spec.featuresPerStage[n - s], skip = spec.featuresPerStage[n - s - 1];
      transpconvs_.push_back(makeTransposedConv(spec.dimensions, below, skip, spec.strides[n - s], spec.convBias));
      transpconvs->push_back(transpconvs_.back().ptr());
      stages_.push_back(StackedConvBlocks(spec, spec.decoderConvs[s - 1], 2 * skip, skip, spec.kernelSizes[n - s - 1],
                                          one, BlockOptions{spec.convBias, spec.dropout, true, spec.nonlinFirst}));
      stages->push_back(stages_.back());
      segLayers_.push_back(makeConv(spec.dimensions, skip, outputChannels, one, one, true));
      segLayers->push_back(segLayers_.back().ptr());
    }
  }
  torch::Tensor forward(std::vector<torch::Tensor> skips) {
    torch::Tensor x = skips.back();
    for (size_t s = 0; s < stages_.size(); ++s) {
      torch::Tensor& skip = skips[skips.size() - 2 - s];
      x = torch::cat({transpconvs_[s].forward(x), skip}, 1);
      skip.reset();  // frees the full-size skips as soon as they are used
      x = stages_[s]->forward(x);
    }
    return segLayers_.back().forward(x);
  }

 private:
  std::vector<StackedConvBlocks> stages_;
  std::vector<nn::AnyModule> transpconvs_, segLayers_;
};
TORCH_MODULE(Decoder);

// Guards code-built specs (parseArchitecture's are consistent) against out-of-range indexing.
void checkSpec(const NetworkSpec& spec, int64_t inputChannels, int64_t outputChannels) {
  const auto n = static_cast<size_t>(spec.stages);
  bool ok = spec.stages >= 2 && (spec.dimensions == 2 || spec.dimensions == 3) && inputChannels > 0 &&
            outputChannels > 0 && spec.featuresPerStage.size() == n && spec.kernelSizes.size() == n &&
            spec.strides.size() == n && spec.encoderDepth.size() == n && spec.decoderConvs.size() == n - 1;
  for (size_t s = 0; ok && s < n; ++s)
    ok = spec.kernelSizes[s].size() == static_cast<size_t>(spec.dimensions) &&
         spec.strides[s].size() == static_cast<size_t>(spec.dimensions) &&
         (spec.block == ResidualBlock::Basic || spec.networkClass == NetworkClass::PlainConvUNet ||
          (spec.bottleneckChannels.size() == n &&
           static_cast<int64_t>(spec.bottleneckChannels[s].size()) == spec.encoderDepth[s]));
  if (!ok || (spec.networkClass == NetworkClass::ResidualEncoderUNet && spec.stemChannels < 1))
    throw InputError("nnU-Net network specification is inconsistent (stage lists of different lengths?)");
}

}  // namespace

NetworkSpec parseArchitecture(const json& architecture) {
  if (!architecture.is_object() || !architecture.contains("arch_kwargs") || !architecture["arch_kwargs"].is_object())
    throw InputError("plans.json architecture: expected an object with network_class_name and arch_kwargs");
  NetworkSpec spec;
  spec.networkClass = parseClass(architecture);
  const bool plain = spec.networkClass == NetworkClass::PlainConvUNet;
  const json& kwargs = architecture["arch_kwargs"];
  for (const auto& item : kwargs.items())
    if (!kCommonKwargs.count(item.key()) && !(plain ? kPlainKwargs : kResEncKwargs).count(item.key()))
      throw InputError("plans.json architecture: " + std::string(plain ? "PlainConvUNet" : "ResidualEncoderUNet") +
                       " takes no argument \"" + item.key() + "\" (dynamic-network-architectures 0.3.1); " +
                       "MedSeg cannot build this network");
  spec.stages = positiveInt(required(kwargs, "n_stages"), "n_stages");
  if (spec.stages < 2)
    refuse("n_stages", kwargs["n_stages"], "gives a U-Net without decoder; at least 2 stages are needed");
  spec.dimensions = convDimensions(kwargs);
  spec.featuresPerStage = perStage(required(kwargs, "features_per_stage"), "features_per_stage", spec.stages);
  spec.kernelSizes = perStageAxes(required(kwargs, "kernel_sizes"), "kernel_sizes", spec.stages, spec.dimensions);
  spec.strides = perStageAxes(required(kwargs, "strides"), "strides", spec.stages, spec.dimensions);
  const std::string depthKey = plain ? "n_conv_per_stage" : "n_blocks_per_stage";
  spec.encoderDepth = perStage(required(kwargs, depthKey), depthKey, spec.stages);
  spec.decoderConvs =
      perStage(required(kwargs, "n_conv_per_stage_decoder"), "n_conv_per_stage_decoder", spec.stages - 1);
  spec.convBias = boolean(kwargs, "conv_bias", false);
  spec.norm = parseNorm(kwargs, spec.dimensions);
  parseDropout(kwargs, spec);
  parseNonlin(kwargs, spec);
  spec.deepSupervision = boolean(kwargs, "deep_supervision", false);
  if (plain)
    spec.nonlinFirst = boolean(kwargs, "nonlin_first", false);
  else
    parseResidualOptions(kwargs, spec);
  return spec;
}

NnunetNetworkImpl::NnunetNetworkImpl(NetworkSpec spec, int64_t inputChannels, int64_t outputChannels)
    : spec_(std::move(spec)), inputChannels_(inputChannels), outputChannels_(outputChannels) {
  checkSpec(spec_, inputChannels_, outputChannels_);
  Encoder encoder(spec_, inputChannels_);
  encoder_ = register_module("encoder", encoder);
  decoder_ = register_module("decoder", Decoder(spec_, encoder, outputChannels_));
}

std::vector<int64_t> NnunetNetworkImpl::sizeDivisor() const {
  std::vector<int64_t> divisor = ones(spec_.dimensions);
  for (const auto& stride : spec_.strides)
    for (size_t axis = 0; axis < divisor.size(); ++axis) divisor[axis] *= stride[axis];
  return divisor;
}

torch::Tensor NnunetNetworkImpl::forward(const torch::Tensor& input) {
  const std::vector<int64_t> divisor = sizeDivisor();
  bool ok = input.dim() == spec_.dimensions + 2 && input.size(1) == inputChannels_;
  for (int64_t axis = 0; ok && axis < spec_.dimensions; ++axis)
    ok = input.size(axis + 2) % divisor[static_cast<size_t>(axis)] == 0;
  if (!ok)
    throw InputError("nnU-Net network input must be [N, " + std::to_string(inputChannels_) + ", spatial] with " +
                     std::to_string(spec_.dimensions) + " spatial edges that are multiples of " +
                     c10::str(at::IntArrayRef(divisor)) + ", got " + c10::str(input.sizes()));
  return decoder_->as<DecoderImpl>()->forward(encoder_->as<EncoderImpl>()->forward(input));
}

std::vector<std::string> NnunetNetworkImpl::expectedKeys() const {
  std::vector<std::string> keys = named_parameters().keys();
  for (const auto& key : named_buffers().keys()) keys.push_back(key);
  return keys;
}

NnunetNetwork buildNetwork(const NetworkSpec& spec, int64_t inputChannels, int64_t outputChannels) {
  NnunetNetwork network(spec, inputChannels, outputChannels);
  network->eval();
  return network;
}

void loadNnunetWeights(NnunetNetworkImpl& network, const NamedTensors& weights) {
  // Aliases are the same tensor under several keys: group the keys by tensor.
  std::vector<std::pair<std::string, torch::Tensor>> targets;
  for (const auto& item : network.named_parameters()) targets.emplace_back(item.key(), item.value());
  for (const auto& item : network.named_buffers()) targets.emplace_back(item.key(), item.value());
  std::map<std::string, torch::Tensor> byKey(targets.begin(), targets.end());
  struct Source {
    std::string key;
    torch::Tensor value;
  };
  std::unordered_map<const c10::TensorImpl*, Source> sources;
  for (const auto& [key, value] : weights) {
    const auto target = byKey.find(key);
    if (target == byKey.end())
      throw InputError("nnU-Net weights: unknown key \"" + key +
                       "\": the network built from plans.json has no such tensor (is the checkpoint from this model "
                       "folder's plans and configuration?)");
    if (value.sizes() != target->second.sizes())
      throw InputError("nnU-Net weights: \"" + key + "\" has shape " + c10::str(value.sizes()) +
                       " but the network built from plans.json expects " + c10::str(target->second.sizes()));
    const auto [source, added] = sources.try_emplace(target->second.unsafeGetTensorImpl(), Source{key, value});
    if (!added && !torch::equal(source->second.value, value.to(source->second.value.dtype())))
      throw InputError("nnU-Net weights: \"" + key + "\" and \"" + source->second.key +
                       "\" name the same tensor but hold different values");
  }
  for (const auto& [key, tensor] : targets)
    if (!sources.count(tensor.unsafeGetTensorImpl()))
      throw InputError("nnU-Net weights: missing key \"" + key +
                       "\" (the checkpoint does not fit the network built "
                       "from plans.json)");
  torch::NoGradGuard noGrad;
  for (auto& [key, tensor] : targets) tensor.copy_(sources.at(tensor.unsafeGetTensorImpl()).value);
}

void loadNnunetWeights(NnunetNetworkImpl& network, const torch::OrderedDict<std::string, torch::Tensor>& weights) {
  NamedTensors named;
  for (const auto& item : weights) named.emplace_back(item.key(), item.value());
  loadNnunetWeights(network, named);
}

}  // namespace medseg::nnunet
