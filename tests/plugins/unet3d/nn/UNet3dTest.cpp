#include <gtest/gtest.h>

#include "plugins/unet3d/nn/UNet3d.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

UNetConfig tinyConfig(int64_t depth) {
  UNetConfig c;
  c.inChannels = 2;
  c.outChannels = 3;
  c.depth = depth;
  c.baseFilters = 4;
  c.maxFilters = 16;
  return c;
}

TEST(UNet3d, OutputShapeMatchesInputForDepthsOneToFour) {
  torch::manual_seed(0);
  for (int64_t depth = 1; depth <= 4; ++depth) {
    UNet3d net(tinyConfig(depth));
    const auto input = torch::randn({2, 2, 16, 8, 16});
    const auto output = net->forward(input);
    EXPECT_EQ(output.sizes(), (std::vector<int64_t>{2, 3, 16, 8, 16})) << "depth " << depth;
    EXPECT_TRUE(torch::isfinite(output).all().item<bool>());
  }
}

TEST(UNet3d, ResidualBlocksAndEveryNormWork) {
  for (const std::string norm : {"instance", "batch", "group"}) {
    auto c = tinyConfig(3);
    c.residual = true;
    c.norm = norm;
    c.baseFilters = 6;  // group norm: 6 channels -> 6 groups, 12 -> 6 groups
    UNet3d net(c);
    const auto output = net->forward(torch::randn({2, 2, 8, 8, 8}));
    EXPECT_EQ(output.sizes(), (std::vector<int64_t>{2, 3, 8, 8, 8})) << norm;
  }
}

TEST(UNet3d, DeepSupervisionHeadsAreCoarser) {
  auto c = tinyConfig(4);
  c.deepSupervision = true;
  UNet3d net(c);
  const auto outputs = net->forwardAllHeads(torch::randn({1, 2, 16, 16, 16}));
  ASSERT_EQ(outputs.size(), 3u);  // full resolution + decoder levels 1 and 2
  EXPECT_EQ(outputs[0].sizes(), (std::vector<int64_t>{1, 3, 16, 16, 16}));
  EXPECT_EQ(outputs[1].sizes(), (std::vector<int64_t>{1, 3, 8, 8, 8}));
  EXPECT_EQ(outputs[2].sizes(), (std::vector<int64_t>{1, 3, 4, 4, 4}));
  EXPECT_EQ(net->forward(torch::randn({1, 2, 16, 16, 16})).sizes(), outputs[0].sizes());
}

TEST(UNet3d, ParameterCountMatchesHandCount) {
  UNetConfig c;
  c.inChannels = 1;
  c.outChannels = 2;
  c.depth = 2;
  c.baseFilters = 2;
  c.maxFilters = 4;
  UNet3d net(c);
  // encoder0: conv 1->2 (54) + IN affine (4) + conv 2->2 (108) + IN (4)        = 170
  // down:     conv k2 2->4 (64) + IN (8)                                      =  72
  // encoder1: conv 4->4 (432) + IN (8), twice                                 = 880
  // up:       transposed conv k2 4->2 (64) + bias (2)                         =  66
  // decoder0: conv 4->2 (216) + IN (4) + conv 2->2 (108) + IN (4)             = 332
  // head:     1x1 conv 2->2 (4) + bias (2)                                    =   6
  EXPECT_EQ(net->parameterCount(), 1526);
  c.residual = true;  // adds a 1x1 projection 1->2 (2) and 4->2 in the decoder (8)
  EXPECT_EQ(UNet3d(c)->parameterCount(), 1526 + 2 + 8);
}

TEST(UNet3d, FlopsArePositiveAndScaleWithFiltersSquared) {
  auto c = tinyConfig(4);
  c.maxFilters = 4096;
  c.baseFilters = 16;
  const double small = UNet3d(c)->forwardFlopsPerVoxel();
  c.baseFilters = 32;
  const double large = UNet3d(c)->forwardFlopsPerVoxel();
  EXPECT_GT(small, 0.0);
  EXPECT_GT(large / small, 3.6);  // -> 4 as the input and output layers become negligible
  EXPECT_LE(large / small, 4.0);
  // Level 0 alone of a depth-1 net: 2 * 27 * (2*4 + 4*4) + head 2 * 4 * 3.
  EXPECT_DOUBLE_EQ(UNet3d(tinyConfig(1))->forwardFlopsPerVoxel(), 2.0 * 27 * (8 + 16) + 24);
}

TEST(UNet3d, ConfigJsonRoundTrip) {
  auto c = tinyConfig(3);
  c.norm = "group";
  c.residual = true;
  c.deepSupervision = true;
  c.leakySlope = 0.02;
  const auto back = UNetConfig::fromJson(c.toJson());
  EXPECT_EQ(back.toJson(), c.toJson());
}

TEST(UNet3d, InvalidConfigsAreRejected) {
  EXPECT_THROW(UNetConfig::fromJson({{"depth", 0}}), InputError);
  EXPECT_THROW(UNetConfig::fromJson({{"norm", "layer"}}), InputError);
  EXPECT_THROW(UNetConfig::fromJson({{"base_filters", 64}, {"max_filters", 32}}), InputError);
  EXPECT_THROW(UNetConfig::fromJson(nlohmann::json::array()), InputError);
  UNet3d net(tinyConfig(3));
  EXPECT_THROW(net->forward(torch::randn({1, 2, 10, 12, 12})), InputError);  // 10 is not a multiple of 4
  EXPECT_THROW(net->forward(torch::randn({1, 3, 8, 8, 8})), InputError);     // wrong channel count
}

}  // namespace
}  // namespace medseg
