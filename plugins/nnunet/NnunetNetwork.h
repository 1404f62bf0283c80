#pragma once
// nnU-Net v2's networks, from dynamic-network-architectures (DNA) 0.3: PlainConvUNet and
// ResidualEncoderUNet, built in LibTorch from a plans.json `architecture` entry, for inference only.
//
// The modules carry DNA's names and nesting, aliases included (a conv block's `all_modules.N` are its
// `conv` / `norm` modules again, the decoder's `encoder` is the encoder again), so the network's
// state-dict keys are exactly those of nnU-Net's checkpoints and `network_weights` load by name.
// forward() returns the full-resolution logits only, as nnU-Net's predictor does (deep supervision off);
// the deep-supervision heads are built all the same because the checkpoints hold their weights.
#include <torch/torch.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace medseg::nnunet {

enum class NetworkClass { PlainConvUNet, ResidualEncoderUNet };
enum class NormKind { None, Instance, Batch };
enum class NonlinKind { None, LeakyReLU, ReLU };
enum class ResidualBlock { Basic, Bottleneck };

struct NormSpec {
  NormKind kind = NormKind::None;
  double eps = 1e-5;
  bool affine = false;
  bool trackRunningStats = false;  // running statistics are used in eval mode when tracked
};

// A parsed `architecture` entry, with DNA's defaults filled in and scalars expanded per stage.
struct NetworkSpec {
  NetworkClass networkClass = NetworkClass::PlainConvUNet;
  int64_t dimensions = 3;  // 3: Conv3d, 2: Conv2d
  int64_t stages = 0;
  std::vector<int64_t> featuresPerStage;
  std::vector<std::vector<int64_t>> kernelSizes;  // [stage][axis]
  std::vector<std::vector<int64_t>> strides;      // [stage][axis]
  std::vector<int64_t> encoderDepth;              // n_conv_per_stage, or n_blocks_per_stage (ResEnc)
  std::vector<int64_t> decoderConvs;              // n_conv_per_stage_decoder, stages - 1 entries
  bool convBias = false;
  NormSpec norm;
  bool dropout = false;  // a dropout_op was named: identity at inference, as in PyTorch's eval()
  NonlinKind nonlin = NonlinKind::None;
  double negativeSlope = 0.01;
  bool nonlinFirst = false;      // PlainConvUNet: conv -> nonlin -> norm instead of conv -> norm -> nonlin
  bool deepSupervision = false;  // as planned; inference uses the full-resolution head only
  // ResidualEncoderUNet only.
  ResidualBlock block = ResidualBlock::Basic;
  std::vector<std::vector<int64_t>> bottleneckChannels;  // [stage][block], BottleneckD only
  int64_t stemChannels = 0;                              // features_per_stage[0] unless given
};

// Throws InputError naming the key and value of anything DNA 0.3.1 would not build the same way.
NetworkSpec parseArchitecture(const nlohmann::json& architecture);

class NnunetNetworkImpl : public torch::nn::Module {
 public:
  // inputChannels: the channels of dataset.json; outputChannels: foreground regions (region-based
  // models) or labels including background, as nnU-Net's label manager counts them.
  NnunetNetworkImpl(NetworkSpec spec, int64_t inputChannels, int64_t outputChannels);
  // [N, inputChannels, spatial...] -> logits [N, outputChannels, spatial...]; every spatial edge must be
  // a multiple of sizeDivisor() on its axis.
  torch::Tensor forward(const torch::Tensor& input);

  const NetworkSpec& spec() const { return spec_; }
  int64_t inputChannels() const { return inputChannels_; }
  int64_t outputChannels() const { return outputChannels_; }
  std::vector<int64_t> sizeDivisor() const;  // per spatial axis: the product of the stage strides
  // The state-dict keys nnU-Net writes for this network (parameters, then buffers), aliases included.
  std::vector<std::string> expectedKeys() const;

 private:
  NetworkSpec spec_;
  int64_t inputChannels_;
  int64_t outputChannels_;
  std::shared_ptr<torch::nn::Module> encoder_;
  std::shared_ptr<torch::nn::Module> decoder_;
};
TORCH_MODULE(NnunetNetwork);

// The network in eval mode (inference only: batch norm uses its running statistics, dropout is off).
NnunetNetwork buildNetwork(const NetworkSpec& spec, int64_t inputChannels, int64_t outputChannels);

// Copies a checkpoint's `network_weights` into the network by key. Every key must be one of
// expectedKeys() with the same shape; every tensor of the network must be given under at least one of
// its keys, and keys naming the same tensor (aliases) must hold equal values. Throws InputError naming
// the offending key before anything is copied.
using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;
void loadNnunetWeights(NnunetNetworkImpl& network, const NamedTensors& weights);
// The same for readNnunetCheckpoint's networkWeights.
void loadNnunetWeights(NnunetNetworkImpl& network, const torch::OrderedDict<std::string, torch::Tensor>& weights);

}  // namespace medseg::nnunet
