// The LibTorch port of nnU-Net's networks against dynamic-network-architectures 0.3.1 itself: logits
// and key sets recorded by tests/data/nnunet/reference/make_network_reference.py (see there how), for
// the fixture checkpoints and for small synthetic architectures covering the options they do not use.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/util/Interrupt.h"
#include "support/TestSupport.h"
#include "plugins/nnunet/NnunetCheckpoint.h"
#include "plugins/nnunet/NnunetNetwork.h"

namespace medseg::nnunet {
namespace {

using json = nlohmann::json;

std::filesystem::path dataPath(const std::string& relative) {
  return std::filesystem::path(MEDSEG_SOURCE_DIR) / "tests/data/nnunet" / relative;
}

json readJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return json::parse(in);
}

const json& referenceCase(const std::string& name) {
  static const json reference = readJson(dataPath("reference/network_reference.json"));
  for (const auto& entry : reference["cases"])
    if (entry["name"] == name) return entry;
  throw std::runtime_error("no reference case " + name);
}

json architectureOf(const json& model) {
  return readJson(dataPath(model.get<std::string>() + "/plans.json"))["configurations"]["3d_fullres"]["architecture"];
}

const std::vector<std::string> kCheckpointCases = {"911_plain_f0", "911_resenc_f0", "912_plain_f0"};
const std::vector<std::string> kSyntheticCases = {"resenc_bottleneck_bn2d", "plain_nonlin_first_aniso3d",
                                                  "resenc_basic_2stage3d"};

NnunetNetwork networkFor(const json& reference, const json& architecture) {
  return buildNetwork(parseArchitecture(architecture), reference["inputChannels"].get<int64_t>(),
                      reference["outputChannels"].get<int64_t>());
}

std::filesystem::path checkpointPath(const json& reference) {
  return dataPath(reference["model"].get<std::string>()) / ("fold_" + std::to_string(reference["fold"].get<int>())) /
         "checkpoint_final.pth";
}

NamedTensors checkpointWeights(const json& reference) {
  NamedTensors weights;
  for (const auto& item : readNnunetCheckpoint(checkpointPath(reference)).networkWeights)
    weights.emplace_back(item.key(), item.value());
  return weights;
}

// The script's input: sin(0.31 i0 + 0.17 i1 + 0.23 i2 + 1.1 c + 0.5 n) + 0.5 cos(0.05 i0 i1 - 0.07 i2 + c).
torch::Tensor testInput(const std::vector<int64_t>& shape) {
  auto x = torch::empty(shape, torch::kFloat);
  const int64_t spatial = x[0][0].numel(), e1 = shape[3], e2 = shape.size() == 5 ? shape[4] : 1;
  float* data = x.data_ptr<float>();
  for (int64_t n = 0; n < shape[0]; ++n)
    for (int64_t c = 0; c < shape[1]; ++c)
      for (int64_t v = 0; v < spatial; ++v) {
        const double i0 = static_cast<double>(v / (e1 * e2)), i1 = static_cast<double>(v / e2 % e1),
                     i2 = static_cast<double>(v % e2);
        *data++ = static_cast<float>(std::sin(0.31 * i0 + 0.17 * i1 + 0.23 * i2 + 1.1 * c + 0.5 * n) +
                                     0.5 * std::cos(0.05 * i0 * i1 - 0.07 * i2 + c));
      }
  return x;
}

std::unordered_map<const c10::TensorImpl*, std::vector<std::string>> keysByTensor(const NnunetNetworkImpl& network) {
  std::unordered_map<const c10::TensorImpl*, std::vector<std::string>> groups;
  for (const auto& item : network.named_parameters()) groups[item.value().unsafeGetTensorImpl()].push_back(item.key());
  for (const auto& item : network.named_buffers()) groups[item.value().unsafeGetTensorImpl()].push_back(item.key());
  return groups;
}

int64_t distinctParameterCount(const NnunetNetworkImpl& network) {
  std::unordered_set<const c10::TensorImpl*> seen;
  int64_t count = 0;
  for (const auto& parameter : network.parameters())
    if (seen.insert(parameter.unsafeGetTensorImpl()).second) count += parameter.numel();
  return count;
}

// The script's formula_weights: per distinct tensor, named by the smallest of its keys; every key given.
NamedTensors formulaWeights(const NnunetNetworkImpl& network) {
  std::map<std::string, torch::Tensor> byKey;
  for (const auto& item : network.named_parameters()) byKey[item.key()] = item.value();
  for (const auto& item : network.named_buffers()) byKey[item.key()] = item.value();
  NamedTensors weights;
  for (const auto& [impl, keys] : keysByTensor(network)) {
    const std::string name = *std::min_element(keys.begin(), keys.end());
    const torch::Tensor& like = byKey.at(name);
    torch::Tensor values = torch::zeros_like(like);
    if (like.is_floating_point()) {
      int64_t hash = 0;
      for (size_t j = 0; j < name.size(); ++j) hash += static_cast<int64_t>(j + 1) * name[j];
      auto ends = [&](const std::string& tail) {
        return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
      };
      std::vector<float> v(static_cast<size_t>(like.numel()));
      for (size_t i = 0; i < v.size(); ++i) {
        const double s = std::sin(0.9 * static_cast<double>(i) + 0.1 * static_cast<double>(hash % 997) + 0.3);
        v[i] = static_cast<float>(ends("running_var") ? 0.5 + 0.25 * (1.0 + s)
                                  : like.dim() > 1    ? s / std::sqrt(static_cast<double>(like.numel() / like.size(0)))
                                  : ends("weight")    ? 1.0 + 0.3 * s
                                                      : 0.2 * s);
      }
      values = torch::tensor(v).reshape(like.sizes());
    }
    for (const auto& key : keys) weights.emplace_back(key, values);
  }
  return weights;
}

// Logits at the reference positions within 1e-4; per-channel sums and absolute sums within 1e-5 per voxel.
void expectLogitsMatch(NnunetNetworkImpl& network, const json& reference) {
  torch::NoGradGuard noGrad;
  const torch::Tensor logits =
      network.forward(testInput(reference["inputShape"].get<std::vector<int64_t>>())).contiguous();
  ASSERT_EQ(logits.sizes().vec(), reference["outputShape"].get<std::vector<int64_t>>());
  double worst = 0.0;
  const auto strides = logits.strides();
  for (size_t k = 0; k < reference["positions"].size(); ++k) {
    int64_t offset = 0;
    for (size_t axis = 0; axis < strides.size(); ++axis)
      offset += reference["positions"][k][axis].get<int64_t>() * strides[axis];
    worst = std::max(worst, std::abs(logits.data_ptr<float>()[offset] - reference["values"][k].get<double>()));
  }
  EXPECT_LE(worst, 1e-4) << reference["name"];
  std::vector<int64_t> dims{0};
  for (int64_t axis = 2; axis < logits.dim(); ++axis) dims.push_back(axis);
  const torch::Tensor sums = logits.to(torch::kDouble).sum(dims), absSums = logits.to(torch::kDouble).abs().sum(dims);
  const double voxels = static_cast<double>(logits.numel() / logits.size(1));
  for (int64_t c = 0; c < logits.size(1); ++c) {
    EXPECT_NEAR(sums[c].item<double>(), reference["channelSums"][c].get<double>(), 1e-5 * voxels) << reference["name"];
    EXPECT_NEAR(absSums[c].item<double>(), reference["channelAbsSums"][c].get<double>(), 1e-5 * voxels)
        << reference["name"];
  }
}

TEST(NnunetNetwork, ParsesTheFixturePlans) {
  const NetworkSpec plain = parseArchitecture(architectureOf(referenceCase("911_plain_f0")["model"]));
  EXPECT_EQ(plain.networkClass, NetworkClass::PlainConvUNet);
  EXPECT_EQ(plain.dimensions, 3);
  EXPECT_EQ(plain.featuresPerStage, (std::vector<int64_t>{4, 8, 16, 32}));
  EXPECT_EQ(plain.strides.back(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(plain.encoderDepth, (std::vector<int64_t>{2, 2, 2, 2}));
  EXPECT_EQ(plain.decoderConvs, (std::vector<int64_t>{2, 2, 2}));
  EXPECT_TRUE(plain.convBias);
  EXPECT_EQ(plain.norm.kind, NormKind::Instance);
  EXPECT_TRUE(plain.norm.affine);
  EXPECT_DOUBLE_EQ(plain.norm.eps, 1e-5);
  EXPECT_EQ(plain.nonlin, NonlinKind::LeakyReLU);
  EXPECT_DOUBLE_EQ(plain.negativeSlope, 0.01);
  EXPECT_FALSE(plain.dropout);
  const NetworkSpec resenc = parseArchitecture(architectureOf(referenceCase("911_resenc_f0")["model"]));
  EXPECT_EQ(resenc.networkClass, NetworkClass::ResidualEncoderUNet);
  EXPECT_EQ(resenc.encoderDepth, (std::vector<int64_t>{1, 3, 4, 6}));
  EXPECT_EQ(resenc.decoderConvs, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(resenc.block, ResidualBlock::Basic);
  EXPECT_EQ(resenc.stemChannels, 4);
  EXPECT_EQ(buildNetwork(resenc, 4, 3)->sizeDivisor(), (std::vector<int64_t>{8, 8, 8}));
}

// The checkpoint's keys, aliases included, are exactly the network's; so are the parameter counts
// (88,537 and 74,287 in the fixtures' README).
TEST(NnunetNetwork, KeysAreThoseOfTheCheckpoints) {
  for (const auto& name : kCheckpointCases) {
    const json& reference = referenceCase(name);
    auto network = networkFor(reference, architectureOf(reference["model"]));
    const std::vector<std::string> expected = network->expectedKeys();
    std::set<std::string> checkpointKeys;
    for (const auto& [key, tensor] : checkpointWeights(reference)) checkpointKeys.insert(key);
    const std::set<std::string> networkKeys(expected.begin(), expected.end());
    std::vector<std::string> onlyNetwork, onlyCheckpoint;
    std::set_difference(networkKeys.begin(), networkKeys.end(), checkpointKeys.begin(), checkpointKeys.end(),
                        std::back_inserter(onlyNetwork));
    std::set_difference(checkpointKeys.begin(), checkpointKeys.end(), networkKeys.begin(), networkKeys.end(),
                        std::back_inserter(onlyCheckpoint));
    EXPECT_EQ(onlyNetwork, std::vector<std::string>{}) << name;
    EXPECT_EQ(onlyCheckpoint, std::vector<std::string>{}) << name;
    EXPECT_EQ(static_cast<int64_t>(expected.size()), reference["numKeys"].get<int64_t>()) << name;
    EXPECT_EQ(distinctParameterCount(*network), reference["numParameters"].get<int64_t>()) << name;
  }
}

TEST(NnunetNetwork, LogitsMatchDnaForTheFixtureCheckpoints) {
  for (const auto& name : kCheckpointCases) {
    const json& reference = referenceCase(name);
    auto network = networkFor(reference, architectureOf(reference["model"]));
    loadNnunetWeights(*network, readNnunetCheckpoint(checkpointPath(reference)).networkWeights);
    expectLogitsMatch(*network, reference);
  }
}

// The Winograd layers transform their weights on their first pass: weights loaded again into the
// same network are what its next pass computes with.
TEST(NnunetNetwork, ANetworkLoadedAgainComputesWithItsNewWeights) {
  const json& reference = referenceCase("912_plain_f0");
  auto network = networkFor(reference, architectureOf(reference["model"]));
  loadNnunetWeights(*network, formulaWeights(*network));
  {
    torch::NoGradGuard noGrad;
    network->forward(testInput(reference["inputShape"].get<std::vector<int64_t>>()));
  }
  loadNnunetWeights(*network, readNnunetCheckpoint(checkpointPath(reference)).networkWeights);
  expectLogitsMatch(*network, reference);
}

// BottleneckD, Conv2d, batch norm with running statistics, ReLU, nonlin_first, dropout, no conv bias,
// stem_channels, anisotropic kernels and strides, scalar arguments.
TEST(NnunetNetwork, LogitsMatchDnaForSyntheticArchitectures) {
  for (const auto& name : kSyntheticCases) {
    const json& reference = referenceCase(name);
    auto network = networkFor(reference, reference["architecture"]);
    EXPECT_EQ(static_cast<int64_t>(network->expectedKeys().size()), reference["numKeys"].get<int64_t>()) << name;
    EXPECT_EQ(static_cast<int64_t>(keysByTensor(*network).size()), reference["numDistinctTensors"].get<int64_t>())
        << name;
    EXPECT_EQ(distinctParameterCount(*network), reference["numParameters"].get<int64_t>()) << name;
    loadNnunetWeights(*network, formulaWeights(*network));
    expectLogitsMatch(*network, reference);
  }
}

TEST(NnunetNetwork, RefusesArchitecturesItDoesNotImplementNamingThem) {
  const json base = architectureOf(referenceCase("911_resenc_f0")["model"]);
  auto refusal = [&](const std::function<void(json&)>& edit) {
    json architecture = base;
    edit(architecture);
    return test::inputErrorMessageOf([&] { parseArchitecture(architecture); });
  };
  const std::string other = "dynamic_network_architectures.architectures.unet.ResidualUNet";
  std::string message = refusal([&](json& a) { a["network_class_name"] = other; });
  EXPECT_NE(message.find(other), std::string::npos) << message;
  EXPECT_NE(message.find("dynamic_network_architectures.architectures.unet.PlainConvUNet"), std::string::npos)
      << message;
  message = refusal([](json& a) { a["network_class_name"] = "PlainConvUNet"; });
  EXPECT_NE(message.find("\"PlainConvUNet\" is not supported"), std::string::npos) << message;
  message = refusal([](json& a) { a["arch_kwargs"]["pool_type"] = "avg"; });
  EXPECT_NE(message.find("\"pool_type\""), std::string::npos) << message;
  message = refusal([](json& a) { a["arch_kwargs"]["conv_op"] = "torch.nn.modules.conv.Conv1d"; });
  EXPECT_NE(message.find("conv_op = \"torch.nn.modules.conv.Conv1d\""), std::string::npos) << message;
  message = refusal([](json& a) { a["arch_kwargs"]["norm_op"] = "torch.nn.modules.instancenorm.InstanceNorm2d"; });
  EXPECT_NE(message.find("norm_op = \"torch.nn.modules.instancenorm.InstanceNorm2d\""), std::string::npos) << message;
  message = refusal([](json& a) { a["arch_kwargs"]["nonlin"] = "torch.nn.GELU"; });
  EXPECT_NE(message.find("nonlin = \"torch.nn.GELU\""), std::string::npos) << message;
  message = refusal([](json& a) { a["arch_kwargs"]["norm_op_kwargs"]["device"] = "cpu"; });
  EXPECT_NE(message.find("\"device\""), std::string::npos) << message;
  message = refusal([](json& a) { a["arch_kwargs"]["strides"] = json::array({1, 2, 2}); });
  EXPECT_NE(message.find("strides = [1,2,2]"), std::string::npos) << message;
  message = refusal([](json& a) { a["arch_kwargs"].erase("kernel_sizes"); });
  EXPECT_NE(message.find("\"kernel_sizes\""), std::string::npos) << message;
  message = refusal([](json& a) {
    a["arch_kwargs"]["block"] = "dynamic_network_architectures.building_blocks.residual.BottleneckD";
  });
  EXPECT_NE(message.find("bottleneck_channels"), std::string::npos) << message;
}

TEST(NnunetNetwork, LoaderRefusesMissingUnknownMisshapenAndDisagreeingKeysNamingThem) {
  const json& reference = referenceCase("911_plain_f0");
  auto network = networkFor(reference, architectureOf(reference["model"]));
  const NamedTensors weights = checkpointWeights(reference);
  auto refusal = [&](const std::function<void(NamedTensors&)>& edit) {
    NamedTensors edited = weights;
    edit(edited);
    return test::inputErrorMessageOf([&] { loadNnunetWeights(*network, edited); });
  };
  auto drop = [](NamedTensors& w, const std::string& key) {
    w.erase(std::remove_if(w.begin(), w.end(), [&](const auto& item) { return item.first == key; }), w.end());
  };
  auto find = [](NamedTensors& w, const std::string& key) -> torch::Tensor& {
    return std::find_if(w.begin(), w.end(), [&](const auto& item) { return item.first == key; })->second;
  };
  std::string message = refusal([&](NamedTensors& w) { drop(w, "decoder.seg_layers.2.weight"); });
  EXPECT_NE(message.find("missing key \"decoder.seg_layers.2.weight\""), std::string::npos) << message;
  message = refusal([&](NamedTensors& w) {
    w.emplace_back("decoder.seg_layers.3.weight", torch::zeros({3, 4, 1, 1, 1}));
  });
  EXPECT_NE(message.find("unknown key \"decoder.seg_layers.3.weight\""), std::string::npos) << message;
  message = refusal([&](NamedTensors& w) {
    find(w, "encoder.stages.1.0.convs.0.conv.weight") = torch::zeros({8, 4, 3, 3});
  });
  EXPECT_NE(message.find("\"encoder.stages.1.0.convs.0.conv.weight\" has shape [8, 4, 3, 3]"), std::string::npos)
      << message;
  message = refusal([&](NamedTensors& w) {
    auto& alias = find(w, "decoder.encoder.stages.0.0.convs.0.norm.bias");
    alias = alias + 1;
  });
  EXPECT_NE(message.find("decoder.encoder.stages.0.0.convs.0.norm.bias"), std::string::npos) << message;
  EXPECT_NE(message.find("different values"), std::string::npos) << message;
  // Aliases may be left out as long as one key of each tensor is there.
  NamedTensors primaryOnly;
  for (const auto& item : weights)
    if (item.first.find("all_modules") == std::string::npos && item.first.rfind("decoder.encoder.", 0) != 0)
      primaryOnly.push_back(item);
  EXPECT_LT(primaryOnly.size(), weights.size());
  EXPECT_NO_THROW(loadNnunetWeights(*network, primaryOnly));
}

TEST(NnunetNetwork, ForwardRefusesInputsTheNetworkCannotTake) {
  const json& reference = referenceCase("911_plain_f0");
  auto network = networkFor(reference, architectureOf(reference["model"]));
  torch::NoGradGuard noGrad;
  EXPECT_THROW(network->forward(torch::zeros({1, 3, 16, 16, 16})), InputError);
  const std::string message = test::inputErrorMessageOf([&] { network->forward(torch::zeros({1, 4, 16, 12, 16})); });
  EXPECT_NE(message.find("multiples of [8, 8, 8]"), std::string::npos) << message;
  EXPECT_EQ(network->forward(torch::zeros({2, 4, 8, 16, 24})).sizes(), (c10::IntArrayRef{2, 3, 8, 16, 24}));
}

}  // namespace
}  // namespace medseg::nnunet
