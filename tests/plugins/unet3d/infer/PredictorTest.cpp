#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

#include <torch/script.h>

#include "plugins/unet3d/infer/Predictor.h"
#include "core/nn/Autocast.h"
#include "plugins/unet3d/nn/ModelCheckpoint.h"
#include "core/util/Interrupt.h"
#include "support/TestSupport.h"

using namespace medseg;

namespace {

Geometry sourceGeometry() {
  Geometry g;
  g.spacing = {1.1, 0.9, 1.4};
  g.origin = {90.0, -120.0, -60.0};
  g.direction = {-1, 0, 0, 0, -1, 0, 0, 0, 1};
  return g;
}

// Four channels, a spherical "brain" of random intensities in a zero background.
ImageVolume brainImage(Size3 size = {27, 22, 19}, int64_t channels = 4) {
  ImageVolume image(size, channels, sourceGeometry());
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> intensity(10.0f, 200.0f);
  for (int64_t z = 0; z < size[2]; ++z)
    for (int64_t y = 0; y < size[1]; ++y)
      for (int64_t x = 0; x < size[0]; ++x) {
        const double r2 = std::pow((x - 13.0) / 10.0, 2) + std::pow((y - 11.0) / 9.0, 2) + std::pow((z - 9.0) / 8.0, 2);
        if (r2 <= 1.0)
          for (int64_t c = 0; c < channels; ++c) image.at(x, y, z, c) = intensity(rng);
      }
  return image;
}

ModelDescription tinyDescription() {
  ModelDescription d;
  d.network.inChannels = 4;
  d.network.outChannels = 4;
  d.network.depth = 2;
  d.network.baseFilters = 4;
  d.network.maxFilters = 8;
  d.classNames = {"background", "edema", "non-enhancing", "enhancing"};
  d.modalities = {"FLAIR", "T1w", "T1gd", "T2w"};
  d.patchSize = {8, 8, 8};
  return d;
}

std::filesystem::path saveTinyModel(const std::filesystem::path& file, const ModelDescription& d) {
  torch::manual_seed(1);
  UNet3d model(d.network);
  saveModel(file, model, d);
  return file;
}

void expectOnSourceGrid(const Prediction& p, const ImageVolume& image) {
  EXPECT_EQ(p.labels.size, image.size);
  EXPECT_EQ(p.labels.channels, 1);
  EXPECT_TRUE(p.labels.geometry.sameAs(image.geometry));
  for (uint8_t v : p.labels.data) ASSERT_LE(v, 3);
}

}  // namespace

TEST(Predictor, CheckpointEndToEndKeepsSourceGeometry) {
  test::ScratchDir dir("predictor-ckpt");
  const auto d = tinyDescription();
  const auto file = saveTinyModel(dir / "best.pt", d);
  const auto predictor = Predictor::load(file, "cpu");
  EXPECT_EQ(predictor.sizeDivisor(), 2);
  const auto image = brainImage();
  PredictionOptions options;
  options.probabilities = true;
  int64_t lastDone = 0, lastTotal = 0;
  const auto p = predictor.predict(image, options, [&](int64_t done, int64_t total) {
    lastDone = done;
    lastTotal = total;
  });
  expectOnSourceGrid(p, image);
  EXPECT_GT(p.windows, 1);
  EXPECT_EQ(lastDone, p.windows);
  EXPECT_EQ(lastTotal, p.windows);
  ASSERT_EQ(p.probabilities.channels, 4);
  EXPECT_EQ(p.probabilities.size, image.size);
  // Softmax: channels sum to 1 everywhere; outside the brain crop the background is certain.
  for (int64_t i = 0; i < image.voxelsPerChannel(); i += 37) {
    float sum = 0;
    for (int64_t c = 0; c < 4; ++c) sum += p.probabilities.channel(c)[i];
    EXPECT_NEAR(sum, 1.0f, 1e-4f);
  }
  EXPECT_EQ(p.probabilities.at(0, 0, 0, 0), 1.0f);
  EXPECT_EQ(p.labels.at(0, 0, 0), 0);
  // Labels are the argmax of the probabilities.
  for (int64_t i = 0; i < image.voxelsPerChannel(); i += 11) {
    int64_t best = 0;
    for (int64_t c = 1; c < 4; ++c)
      if (p.probabilities.channel(c)[i] > p.probabilities.channel(best)[i]) best = c;
    EXPECT_EQ(p.labels.data[i], best);
  }
}

TEST(Predictor, WholeVolumeAndTtaAndResamplingRun) {
  auto d = tinyDescription();
  d.preprocessing.targetSpacing = std::array<double, 3>{1.5, 1.5, 1.5};
  torch::manual_seed(2);
  const Predictor predictor(UNet3d(d.network), d);
  const auto image = brainImage();
  PredictionOptions whole;
  whole.wholeVolume = true;
  whole.mirrorTta = true;
  const auto p = predictor.predict(image, whole);
  EXPECT_EQ(p.windows, 1);
  EXPECT_NE(p.record.resampledSize, p.record.croppedSize);
  expectOnSourceGrid(p, image);
  PredictionOptions sliding;
  sliding.roi = std::array<int64_t, 3>{6, 6, 6};
  sliding.overlap = 0.25;
  sliding.windowBatch = 3;
  const auto q = predictor.predict(image, sliding);
  expectOnSourceGrid(q, image);
  sliding.roi = std::array<int64_t, 3>{5, 6, 6};  // not a multiple of the network's divisor 2
  EXPECT_THROW(predictor.predict(image, sliding), InputError);
}

// bf16 inference (where the CPU has native bf16): concurrent windows each open their own autocast,
// and the probabilities stay within bf16's rounding of float32's.
TEST(Predictor, Bf16ProbabilitiesStayCloseToFloat32) {
  if (!cpuHasNativeBf16()) {  // this CPU's answer: bf16 is refused with the reason, never emulated
    EXPECT_THROW(parseBf16Precision("bf16", torch::kCPU), InputError);
    return;
  }
  auto d = tinyDescription();
  torch::manual_seed(2);
  const Predictor predictor(UNet3d(d.network), d);
  const auto image = brainImage();
  PredictionOptions fp32;
  fp32.roi = std::array<int64_t, 3>{6, 6, 6};
  fp32.probabilities = true;
  fp32.windowWorkers = 2;
  fp32.threads = 2;
  PredictionOptions bf16 = fp32;
  bf16.bf16 = true;
  const auto a = predictor.predict(image, fp32), b = predictor.predict(image, bf16);
  expectOnSourceGrid(b, image);
  double worst = 0.0;
  for (size_t i = 0; i < a.probabilities.data.size(); ++i)
    worst = std::max(worst, double(std::abs(a.probabilities.data[i] - b.probabilities.data[i])));
  EXPECT_GT(worst, 0.0) << "bf16 changed nothing: was autocast on?";
  EXPECT_LT(worst, 0.05);
}

TEST(Predictor, WrongChannelCountNamesModalities) {
  torch::manual_seed(2);
  const auto d = tinyDescription();
  const Predictor predictor(UNet3d(d.network), d);
  try {
    predictor.predict(brainImage({10, 10, 10}, 1));
    FAIL() << "one channel accepted by a four-channel model";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("FLAIR, T1w, T1gd, T2w"), std::string::npos) << message;
    EXPECT_NE(message.find("has 1"), std::string::npos) << message;
  }
}

TEST(Predictor, RegionsDecodeToNestedBratsLabels) {
  // Channels WT, TC, ET at four voxels: none, WT only, WT+TC, all three.
  auto probs = torch::zeros({3, 1, 1, 4});
  probs[0][0][0][1] = 0.9;
  probs[0][0][0][2] = 0.9;
  probs[1][0][0][2] = 0.8;
  probs[0][0][0][3] = 0.6;
  probs[1][0][0][3] = 0.7;
  probs[2][0][0][3] = 0.51;
  auto labels = decodeLabels(probs, TargetMode::Regions, bratsRegionLabels());
  EXPECT_TRUE(labels.equal(torch::tensor({0, 1, 2, 3}, torch::kUInt8).view({1, 1, 1, 4})));
  // ET wins even where the (inconsistent) WT/TC are low.
  auto lone = torch::zeros({3, 1, 1, 1});
  lone[2][0][0][0] = 0.9;
  EXPECT_EQ(decodeLabels(lone, TargetMode::Regions, bratsRegionLabels()).item<int>(), 3);
  auto softmax = torch::tensor({0.1f, 0.7f, 0.2f, 0.6f, 0.3f, 0.1f}).view({2, 1, 1, 3});
  EXPECT_TRUE(decodeLabels(softmax, TargetMode::Labels, {}).equal(torch::tensor({1, 0, 0}, torch::kUInt8).view({1, 1, 1, 3})));
}

TEST(Predictor, RegionsModelPredictsLabelsZeroToThree) {
  auto d = tinyDescription();
  d.targets = TargetMode::Regions;
  d.network.outChannels = 3;
  d.classNames = {"WT", "TC", "ET"};
  d.regionLabels = bratsRegionLabels();
  torch::manual_seed(4);
  const Predictor predictor(UNet3d(d.network), d);
  PredictionOptions options;
  options.probabilities = true;
  const auto image = brainImage();
  const auto p = predictor.predict(image, options);
  expectOnSourceGrid(p, image);
  EXPECT_EQ(p.probabilities.channels, 3);
  EXPECT_EQ(p.probabilities.at(0, 0, 0, 0), 0.0f);  // outside the crop no region
}

// A checkpoint's float32 passes run its network as a frozen TorchScript graph optimised for
// inference: labels as the checkpoint's own layers give them (GraphPreparation::AsSaved, which
// training-time validation also runs), probabilities within 1e-5, for every norm and block kind.
TEST(Predictor, CheckpointRunsAnOptimisedGraphWithTheLayersLabels) {
  test::ScratchDir dir("predictor-optimised");
  const auto image = brainImage();
  PredictionOptions options;
  options.probabilities = true;
  for (const char* norm : {"instance", "batch", "group"})
    for (bool residual : {false, true}) {
      SCOPED_TRACE(std::string(norm) + (residual ? " residual" : ""));
      auto d = tinyDescription();
      d.network.norm = norm;
      d.network.residual = residual;
      d.network.deepSupervision = residual;
      const auto file = saveTinyModel(dir / (std::string(norm) + (residual ? "-res.pt" : ".pt")), d);
      const auto fast = Predictor::load(file, "cpu");
      const auto exact = Predictor::load(file, "cpu", GraphPreparation::AsSaved);
      EXPECT_EQ(fast.preparation(), "frozen and optimised for inference; 1 up-sampling on all cores");  // depth 2
      EXPECT_EQ(exact.preparation(), "as saved (asked for)");
      const auto a = fast.predict(image, options), b = exact.predict(image, options);
      EXPECT_EQ(a.labels.data, b.labels.data);
      ASSERT_EQ(a.probabilities.data.size(), b.probabilities.data.size());
      float largest = 0.0f;
      for (size_t i = 0; i < a.probabilities.data.size(); ++i)
        largest = std::max(largest, std::abs(a.probabilities.data[i] - b.probabilities.data[i]));
      EXPECT_LE(largest, 1e-5f);
    }
}

TEST(Predictor, RejectsFilesThatAreNotModels) {
  test::ScratchDir dir("predictor-bad");
  std::ofstream(dir / "notes.pt") << "not a model";
  EXPECT_THROW(Predictor::load(dir / "notes.pt"), InputError);
  EXPECT_THROW(Predictor::load(dir / "missing.pt"), InputError);
  EXPECT_THROW(resolveDevice("tpu"), InputError);
  if (!torch::cuda::is_available()) EXPECT_THROW(resolveDevice("cuda"), InputError);
  EXPECT_EQ(resolveDevice("cpu"), torch::Device(torch::kCPU));
}
