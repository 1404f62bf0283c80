// TorchScript export of the U-Net (see TorchScriptExport.h). The module mirrors UNet3d's layout
// (UNet3d.cpp's header comment) submodule by submodule; each layer's forward is TorchScript source
// generated from the C++ layer's own options, so a change of a layer option is exported as it is,
// and every export is checked against the network before anything is written.
#include "plugins/unet3d/nn/TorchScriptExport.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;
namespace nn = torch::nn;
namespace jit = torch::jit;

// A double as TorchScript source that parses back to the same double (17 significant digits), always
// with a '.' or an exponent so it stays a float literal.
std::string floatLiteral(double value) {
  std::ostringstream text;
  text << std::setprecision(17) << value;
  std::string s = text.str();
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

template <size_t D>
std::string intList(const torch::ExpandingArray<D>& values) {
  std::string s = "[";
  for (size_t i = 0; i < D; ++i) s += (i ? ", " : "") + std::to_string((*values)[i]);
  return s + "]";
}

template <typename Padding>
const torch::ExpandingArray<3>& explicitPadding(const Padding& padding, const std::string& layer) {
  if (const auto* values = c10::get_if<torch::ExpandingArray<3>>(&padding)) return *values;
  throw std::logic_error("TorchScript export: " + layer + " uses \"valid\"/\"same\" padding, which the exporter does not write");
}

template <typename Options>
void requireZeroPadding(const Options& options, const std::string& layer) {
  if (!c10::get_if<torch::enumtype::kZeros>(&options.padding_mode()))
    throw std::logic_error("TorchScript export: " + layer + " pads with another mode than zeros");
}

class ScriptBuilder {
 public:
  explicit ScriptBuilder(const UNetConfig& config)
      : unit_(std::make_shared<jit::CompilationUnit>()), config_(config), slope_(floatLiteral(config.leakySlope)) {}

  jit::Module network(UNet3dImpl& net) {
    auto root = newModule("UNet3d");
    const auto& c = config_;
    root.register_module("encoder", layerList(net, "encoder", c.depth, [&](auto& m) { return block(m); }));
    root.register_module("downsample", layerList(net, "downsample", c.depth - 1, [&](auto& m) { return downsample(m); }));
    root.register_module("upsample", layerList(net, "upsample", c.depth - 1, [&](auto& m) { return layer(m); }));
    root.register_module("decoder", layerList(net, "decoder", c.depth - 1, [&](auto& m) { return block(m); }));
    root.register_module("heads", layerList(net, "heads", 1, [&](auto& m) { return layer(m); }));
    root.define(networkSource());
    return root;
  }

 private:
  // Every module carries "training", as scripted Python modules do: Module::train()/eval() need it.
  jit::Module newModule(const std::string& className) {
    jit::Module module(c10::QualifiedName("__torch__.medseg." + className), unit_, /*shouldMangle=*/true);
    module.register_attribute("training", c10::BoolType::get(), false);
    return module;
  }

  static void copyTensors(const nn::Module& from, jit::Module& to) {
    for (const auto& item : from.named_parameters(/*recurse=*/false))
      if (item.value().defined()) to.register_parameter(item.key(), item.value(), /*is_buffer=*/false);
    for (const auto& item : from.named_buffers(/*recurse=*/false))
      if (item.value().defined()) to.register_buffer(item.key(), item.value());
  }

  static std::shared_ptr<nn::Module> child(const nn::Module& parent, const std::string& name) {
    const auto children = parent.named_children();
    const auto* found = children.find(name);
    if (!found) throw std::logic_error("TorchScript export: the U-Net layer has no \"" + name + "\" (layout changed?)");
    return *found;
  }

  template <typename Make>
  jit::Module layerList(UNet3dImpl& net, const std::string& list, int64_t count, Make make) {
    auto container = newModule("LayerList");
    for (int64_t i = 0; i < count; ++i) container.register_module(std::to_string(i), make(*net.part(list, i)));
    return container;
  }

  // block(a -> b) = conv-norm -> act -> conv-norm (+ input or its projection) -> act (UNet3d.cpp).
  jit::Module block(nn::Module& source) {
    auto module = newModule("ConvBlock");
    module.register_module("first", convNorm(*child(source, "first")));
    module.register_module("second", convNorm(*child(source, "second")));
    std::string residual;
    if (config_.residual) {
      const auto children = source.named_children();
      if (const auto* projection = children.find("projection")) {
        module.register_module("projection", layer(**projection));
        residual = "    y = y + self.projection.forward(x)\n";
      } else {
        residual = "    y = y + x\n";
      }
    }
    module.define("def forward(self, x: Tensor) -> Tensor:\n"
                  "    y = self.first.forward(x).leaky_relu_(" + slope_ + ")\n"
                  "    y = self.second.forward(y)\n" + residual +
                  "    return y.leaky_relu_(" + slope_ + ")\n");
    return module;
  }

  jit::Module downsample(nn::Module& source) {
    auto module = newModule("Downsample");
    module.register_module("body", convNorm(*child(source, "body")));
    module.define("def forward(self, x: Tensor) -> Tensor:\n"
                  "    return self.body.forward(x).leaky_relu_(" + slope_ + ")\n");
    return module;
  }

  jit::Module convNorm(nn::Module& source) {
    auto module = newModule("ConvNorm");
    module.register_module("conv", layer(*child(source, "conv")));
    module.register_module("norm", layer(*child(source, "norm")));
    module.define("def forward(self, x: Tensor) -> Tensor:\n"
                  "    return self.norm.forward(self.conv.forward(x))\n");
    return module;
  }

  // A torch::nn layer: its tensors under their own names and one ATen call with its options.
  jit::Module layer(nn::Module& source) {
    const auto [className, call] = layerCall(source);
    auto module = newModule(className);
    copyTensors(source, module);
    module.define("def forward(self, x: Tensor) -> Tensor:\n" + call);
    return module;
  }

  static std::string tensorOrNone(const torch::Tensor& tensor, const std::string& name) {
    return tensor.defined() ? "self." + name : "None";
  }

  std::pair<std::string, std::string> layerCall(nn::Module& source) const {
    if (auto* conv = source.as<nn::Conv3dImpl>()) {
      const auto& o = conv->options;
      requireZeroPadding(o, "a Conv3d");
      return {"Conv3d", "    return torch.conv3d(x, self.weight, " + tensorOrNone(conv->bias, "bias") + ", " +
                            intList(o.stride()) + ", " + intList(explicitPadding(o.padding(), "a Conv3d")) + ", " +
                            intList(o.dilation()) + ", " + std::to_string(o.groups()) + ")\n"};
    }
    if (auto* up = source.as<nn::ConvTranspose3dImpl>()) {
      const auto& o = up->options;
      requireZeroPadding(o, "a ConvTranspose3d");
      return {"ConvTranspose3d", "    return torch.conv_transpose3d(x, self.weight, " + tensorOrNone(up->bias, "bias") +
                                     ", " + intList(o.stride()) + ", " +
                                     intList(explicitPadding(o.padding(), "a ConvTranspose3d")) + ", " +
                                     intList(o.output_padding()) + ", " + std::to_string(o.groups()) + ", " +
                                     intList(o.dilation()) + ")\n"};
    }
    if (auto* norm = source.as<nn::InstanceNorm3dImpl>()) {
      const auto& o = norm->options;
      // As InstanceNorm's C++ forward: input statistics unless tracked statistics are used in eval.
      const std::string useInputStats = o.track_running_stats() ? "self.training" : "True";
      return {"InstanceNorm3d", "    return torch.instance_norm(x, " + tensorOrNone(norm->weight, "weight") + ", " +
                                    tensorOrNone(norm->bias, "bias") + ", " +
                                    tensorOrNone(norm->running_mean, "running_mean") + ", " +
                                    tensorOrNone(norm->running_var, "running_var") + ", " + useInputStats + ", " +
                                    floatLiteral(o.momentum()) + ", " + floatLiteral(o.eps()) + ", True)\n"};
    }
    if (auto* norm = source.as<nn::BatchNorm3dImpl>()) return {"BatchNorm3d", batchNormCall(*norm)};
    if (auto* norm = source.as<nn::GroupNormImpl>()) {
      const auto& o = norm->options;
      return {"GroupNorm", "    return torch.group_norm(x, " + std::to_string(o.num_groups()) + ", " +
                               tensorOrNone(norm->weight, "weight") + ", " + tensorOrNone(norm->bias, "bias") + ", " +
                               floatLiteral(o.eps()) + ", True)\n"};
    }
    throw std::logic_error("TorchScript export: no TorchScript form for the layer " + source.name());
  }

  // BatchNorm3d's C++ forward: in training it counts batches and updates the running statistics with
  // the momentum; in eval it normalises with them.
  static std::string batchNormCall(const nn::BatchNorm3dImpl& norm) {
    const auto& o = norm.options;
    if (!o.momentum()) throw std::logic_error("TorchScript export: batch norm with a cumulative average (no momentum)");
    std::string count;
    if (o.track_running_stats()) count = "    if self.training:\n        self.num_batches_tracked.add_(1)\n";
    return count + "    return torch.batch_norm(x, " + tensorOrNone(norm.weight, "weight") + ", " +
           tensorOrNone(norm.bias, "bias") + ", " + tensorOrNone(norm.running_mean, "running_mean") + ", " +
           tensorOrNone(norm.running_var, "running_var") + ", " +
           (o.track_running_stats() ? "self.training" : "True") + ", " + floatLiteral(*o.momentum()) + ", " +
           floatLiteral(o.eps()) + ", True)\n";
  }

  // UNet3dImpl::run with extraHeads = 0, unrolled for this depth; the input checks are its own.
  std::string networkSource() const {
    const auto& c = config_;
    const std::string channels = std::to_string(c.inChannels), divisor = std::to_string(c.sizeDivisor());
    auto at = [](const std::string& list, int64_t index) {
      return "getattr(self." + list + ", \"" + std::to_string(index) + "\")";
    };
    std::ostringstream s;
    // assert, not raise: the C++ frontend's resolver knows no exception classes.
    s << "def forward(self, x: Tensor) -> Tensor:\n"
      << "    assert x.dim() == 5 and x.size(1) == " << channels << ", \"MedSeg U-Net input must be [N, " << channels
      << ", D, H, W]\"\n"
      << "    assert x.size(2) % " << divisor << " == 0 and x.size(3) % " << divisor << " == 0 and x.size(4) % "
      << divisor << " == 0, \"MedSeg U-Net input edges must be multiples of " << divisor << "\"\n";
    for (int64_t level = 0; level < c.depth; ++level) {
      if (level > 0) s << "    x = " << at("downsample", level - 1) << ".forward(x)\n";
      s << "    x = " << at("encoder", level) << ".forward(x)\n";
      if (level + 1 < c.depth) s << "    skip" << level << " = x\n";
    }
    for (int64_t level = c.depth - 2; level >= 0; --level) {
      s << "    x = " << at("upsample", level) << ".forward(x)\n"
        << "    x = " << at("decoder", level) << ".forward(torch.cat([x, skip" << level << "], 1))\n";
    }
    s << "    return " << at("heads", 0) << ".forward(x)\n";
    return s.str();
  }

  std::shared_ptr<jit::CompilationUnit> unit_;
  UNetConfig config_;
  std::string slope_;
};

// The seeded check input: the smallest edge the network takes, doubled so the coarsest level keeps
// 2x2x2 voxels (instance norm over one voxel says nothing about the weights).
torch::Tensor checkInput(const UNetConfig& config, torch::ScalarType dtype) {
  const int64_t edge = 2 * config.sizeDivisor();
  auto generator = at::make_generator<at::CPUGeneratorImpl>(20261204);
  return torch::randn({1, config.inChannels, edge, edge, edge}, generator, torch::TensorOptions().dtype(dtype));
}

}  // namespace

torch::jit::Module toTorchScript(UNet3dImpl& network) {
  auto module = ScriptBuilder(network.config()).network(network);
  module.eval();
  return module;
}

fs::path sidecarPath(const fs::path& model) { return model.string() + ".json"; }

nlohmann::json torchScriptSidecar(const ModelDescription& description, const fs::path& source) {
  nlohmann::json sidecar = description.toJson();
  const auto& n = description.network;
  sidecar["size_divisor"] = n.sizeDivisor();
  const bool regions = description.targets == TargetMode::Regions;
  sidecar["export"] = {
      {"exported_by", std::string("medseg ") + MEDSEG_VERSION + " export"},
      {"source", source.filename().string()},
      {"input", "float32 [N, " + std::to_string(n.inChannels) + ", D, H, W] (channels: the modalities in order), D, H, W "
                "multiples of " + std::to_string(n.sizeDivisor()) + ", after the preprocessing described here"},
      {"output", "logits [N, " + std::to_string(n.outChannels) + ", D, H, W]; " +
                     (regions ? std::string("sigmoid per channel, region where > 0.5")
                              : std::string("softmax over channels, label = argmax"))}};
  return sidecar;
}

TorchScriptExport exportTorchScript(const fs::path& checkpoint, const fs::path& out) {
  std::error_code ec;
  if (fs::exists(out, ec) && fs::equivalent(checkpoint, out, ec))
    throw InputError("--out " + out.string() + " is the checkpoint itself; export to another file");
  ModelDescription description;
  UNet3d network = loadModelForInference(checkpoint, &description);
  torch::NoGradGuard noGrad;
  const auto module = toTorchScript(*network);

  std::ostringstream serialized;
  module.save(serialized, {{"medseg_description.json", description.toJson().dump(2)}});
  const std::string bytes = serialized.str();
  // Check what will be on disk, not the in-memory module: the reloaded bytes against the network.
  std::istringstream reread(bytes);
  auto reloaded = torch::jit::load(reread, torch::kCPU);
  reloaded.eval();
  const auto input = checkInput(description.network, torch::kFloat);
  const auto expected = network->forward(input);
  const auto actual = reloaded.forward({input}).toTensor();
  TorchScriptExport result;
  result.maxAbsLogit = expected.abs().max().item<double>();
  result.maxAbsDifference = actual.sizes() == expected.sizes() ? (actual - expected).abs().max().item<double>() : INFINITY;
  // Same ATen calls on both sides: any real difference is a layout mistake, far above rounding.
  if (!(result.maxAbsDifference <= 1e-4 * std::max(1.0, result.maxAbsLogit)))
    throw std::runtime_error("the exported TorchScript module does not reproduce the network (largest logit difference " +
                             std::to_string(result.maxAbsDifference) + "); nothing was written. This is a MedSeg bug: "
                             "please report it with the checkpoint's network settings");

  result.model = out;
  result.sidecar = sidecarPath(out);
  for (const auto& parameter : module.parameters()) result.parameters += parameter.numel();
  result.bytes = static_cast<int64_t>(bytes.size());
  if (out.has_parent_path()) fs::create_directories(out.parent_path());
  writeFileAtomically(result.model, bytes);
  writeFileAtomically(result.sidecar, torchScriptSidecar(description, checkpoint).dump(2) + "\n");
  return result;
}

}  // namespace medseg
