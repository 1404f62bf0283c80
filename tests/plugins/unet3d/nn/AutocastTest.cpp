#include <gtest/gtest.h>

#include "core/nn/Autocast.h"
#include "plugins/unet3d/nn/UNet3d.h"
#include "plugins/unet3d/train/DataLoader.h"
#include "plugins/unet3d/train/TrainingEngine.h"
#include "core/util/Interrupt.h"
#include "support/TinyTrainingCases.h"

namespace medseg {
namespace {

TEST(Autocast, PrecisionNames) {
  EXPECT_FALSE(parseBf16Precision("fp32", torch::kCPU));
  EXPECT_FALSE(parseBf16Precision("float32", torch::kCPU));
  EXPECT_THROW(parseBf16Precision("fp16", torch::kCPU), InputError);
}

// Inference's default: bf16 exactly where this CPU computes it natively (the suite's
// ONEDNN_MAX_CPU_ISA=AVX2 run takes the other branch), float32 on GPUs; named choices as asked.
TEST(Autocast, AutoPrecisionIsBf16ExactlyWhereTheCpuHasIt) {
  const PrecisionChoice automatic = choosePrecision("auto", torch::kCPU);
  EXPECT_EQ(automatic.bf16, cpuHasNativeBf16());
  EXPECT_EQ(automatic.description.rfind(cpuHasNativeBf16() ? "bf16 (auto: " : "fp32 (auto: ", 0), 0u) << automatic.description;
  const PrecisionChoice gpu = choosePrecision("auto", torch::Device(torch::kCUDA, 0));
  EXPECT_FALSE(gpu.bf16);
  EXPECT_EQ(gpu.description.rfind("fp32 (auto: ", 0), 0u) << gpu.description;
  const PrecisionChoice fp32 = choosePrecision("fp32", torch::kCPU);
  EXPECT_FALSE(fp32.bf16);
  EXPECT_EQ(fp32.description, "fp32");
  EXPECT_THROW(choosePrecision("fp16", torch::kCPU), InputError);
  if (cpuHasNativeBf16()) {
    EXPECT_EQ(choosePrecision("bf16", torch::kCPU).description, "bf16");
  } else {
    EXPECT_THROW(choosePrecision("bf16", torch::kCPU), InputError);
  }
}

// On a CPU with native bf16 the network's convolutions run in bf16 inside the scope (and only
// there); elsewhere bf16 is refused with the reason, for inference and training alike.
TEST(Autocast, Bf16OnTheCpuRunsWhereNativeAndIsRefusedElsewhere) {
  auto config = test::tinyTrainConfig();
  config.cpuBf16 = true;
  if (!cpuHasNativeBf16()) {
    EXPECT_THROW(parseBf16Precision("bf16", torch::kCPU), InputError);
    EXPECT_THROW(TrainingEngine(config, torch::kCPU), InputError);
    return;
  }
  EXPECT_TRUE(parseBf16Precision("bf16", torch::kCPU));
  torch::NoGradGuard noGrad;
  UNet3d network(config.network);
  const auto x = torch::randn({1, config.network.inChannels, 16, 16, 16});
  {
    Bf16Autocast autocast(torch::kCPU, true);
    EXPECT_EQ(network->forward(x).scalar_type(), torch::kBFloat16);
  }
  EXPECT_EQ(network->forward(x).scalar_type(), torch::kFloat);
}

TEST(Autocast, Bf16TrainingStepStaysCloseToFloat32) {
  auto config = test::tinyTrainConfig();
  config.batchShards = 1;
  TrainConfig bf16 = config;
  bf16.cpuBf16 = true;
  if (!cpuHasNativeBf16()) {  // this CPU's answer: the bf16 engine is refused, never emulated
    EXPECT_THROW(TrainingEngine(bf16, torch::kCPU), InputError);
    return;
  }
  TrainingEngine a(config, torch::kCPU), b(bf16, torch::kCPU);
  ASSERT_TRUE(b.mixedPrecision());
  BatchFactory batches(test::tinyTrainingCases(1), config);
  for (int step = 0; step < 3; ++step) {
    const Batch batch = batches.make(step);
    const double fp32 = a.step(batch).loss, low = b.step(batch).loss;
    EXPECT_TRUE(std::isfinite(low));
    EXPECT_NEAR(low, fp32, 0.05 * fp32) << "step " << step;  // bf16 keeps 8 bits of mantissa
  }
}

}  // namespace
}  // namespace medseg
