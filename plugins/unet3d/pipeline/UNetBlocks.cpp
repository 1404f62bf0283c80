#include "plugins/unet3d/pipeline/UNetBlocks.h"

#include <stdexcept>

namespace medseg::unet3d {
namespace {

using Key = ActivationBundle;

// Layer lists and indices (UNet3dImpl::part) that make up a block.
std::vector<std::pair<std::string, int64_t>> layersOf(const UNetConfig& config, const BlockSpec& block) {
  switch (block.kind) {
    case BlockKind::Encoder: return {{"encoder", block.level}};
    case BlockKind::Down: return {{"downsample", block.level - 1}};
    case BlockKind::Up: return {{"upsample", block.level}};
    case BlockKind::Decoder:
      if (block.level >= 1 && block.level <= config.deepSupervisionHeads()) return {{"decoder", block.level}, {"heads", block.level}};
      return {{"decoder", block.level}};
    case BlockKind::Head: return {{"heads", 0}};
  }
  throw std::logic_error("unknown U-Net block kind");
}

}  // namespace

std::string BlockSpec::name() const {
  switch (kind) {
    case BlockKind::Encoder: return "encoder" + std::to_string(level);
    case BlockKind::Down: return "down" + std::to_string(level);
    case BlockKind::Up: return "up" + std::to_string(level);
    case BlockKind::Decoder: return "decoder" + std::to_string(level);
    case BlockKind::Head: return "head";
  }
  return "?";
}

std::vector<BlockSpec> unetBlocks(const UNetConfig& config) {
  std::vector<BlockSpec> blocks;
  for (int64_t level = 0; level < config.depth; ++level) {
    if (level > 0) blocks.push_back({BlockKind::Down, level});
    blocks.push_back({BlockKind::Encoder, level});
  }
  for (int64_t level = config.depth - 2; level >= 0; --level) {
    blocks.push_back({BlockKind::Up, level});
    blocks.push_back({BlockKind::Decoder, level});
  }
  blocks.push_back({BlockKind::Head, 0});
  return blocks;
}

ActivationBundle networkInput(const torch::Tensor& image) {
  ActivationBundle bundle;
  bundle.tensors[Key::mainKey()] = image;
  return bundle;
}

ActivationBundle runBlock(UNet3dImpl& network, const BlockSpec& block, const ActivationBundle& input, bool allHeads) {
  const UNetConfig& c = network.config();
  ActivationBundle out = input;
  const int64_t l = block.level;
  switch (block.kind) {
    case BlockKind::Encoder: {
      auto y = network.forwardPart("encoder", l, input.at(Key::mainKey()));
      if (l + 1 < c.depth) {  // an encoder output below the bottleneck is a skip; down-sampling reads it there
        out.tensors.erase(Key::mainKey());
        out.tensors[Key::skipKey(l)] = y;
      } else {
        out.tensors[Key::mainKey()] = y;
      }
      break;
    }
    case BlockKind::Down:
      out.tensors[Key::mainKey()] = network.forwardPart("downsample", l - 1, input.at(Key::skipKey(l - 1)));
      break;
    case BlockKind::Up:
      out.tensors[Key::mainKey()] = network.forwardPart("upsample", l, input.at(Key::mainKey()));
      break;
    case BlockKind::Decoder: {
      auto y = network.forwardPart("decoder", l, torch::cat({input.at(Key::mainKey()), input.at(Key::skipKey(l))}, 1));
      out.tensors.erase(Key::skipKey(l));
      out.tensors[Key::mainKey()] = y;
      if (allHeads && l >= 1 && l <= c.deepSupervisionHeads()) out.tensors[Key::headKey(l)] = network.forwardPart("heads", l, y);
      break;
    }
    case BlockKind::Head:
      out.tensors[Key::headKey(0)] = network.forwardPart("heads", 0, input.at(Key::mainKey()));
      out.tensors.erase(Key::mainKey());
      break;
  }
  return out;
}

std::vector<std::shared_ptr<torch::nn::Module>> blockModules(const UNet3dImpl& network, const BlockSpec& block) {
  std::vector<std::shared_ptr<torch::nn::Module>> modules;
  for (const auto& [list, index] : layersOf(network.config(), block)) modules.push_back(network.part(list, index));
  return modules;
}

std::vector<torch::Tensor> blockParameters(const UNet3dImpl& network, const BlockSpec& block) {
  std::vector<torch::Tensor> out;
  for (const auto& module : blockModules(network, block))
    for (const auto& p : module->parameters()) out.push_back(p);
  return out;
}

std::vector<std::string> blockParameterNames(const UNet3dImpl& network, const BlockSpec& block) {
  std::vector<std::string> out;
  for (const auto& [list, index] : layersOf(network.config(), block))
    for (const auto& item : network.part(list, index)->named_parameters())
      out.push_back(list + "." + std::to_string(index) + "." + item.key());
  return out;
}

}  // namespace medseg::unet3d
