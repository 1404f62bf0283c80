// Volume layout and geometry helpers: the contract between readers, the network and the viewer.
#include "core/io/Volume.h"

#include <gtest/gtest.h>

#include <cmath>

namespace medseg {
namespace {

TEST(Volume, LayoutIsChannelThenZThenYThenX) {
  ImageVolume v({4, 3, 2}, 2);
  EXPECT_EQ(v.data.size(), 48u);
  EXPECT_EQ(v.offset(0, 1, 0, 0), 1u);
  EXPECT_EQ(v.offset(0, 0, 1, 0), 4u);
  EXPECT_EQ(v.offset(0, 0, 0, 1), 12u);
  EXPECT_EQ(v.offset(1, 0, 0, 0), 24u);
  v.at(3, 2, 1, 1) = 7.f;
  EXPECT_EQ(v.data.back(), 7.f);
  EXPECT_EQ(v.channel(1), v.data.data() + 24);
  EXPECT_TRUE(v.contains(3, 2, 1));
  EXPECT_FALSE(v.contains(4, 0, 0));
  EXPECT_FALSE(v.contains(0, -1, 0));
}

TEST(Volume, ExtractAndStackChannelsAreInverse) {
  ImageVolume multi({3, 2, 2}, 3);
  for (size_t i = 0; i < multi.data.size(); ++i) multi.data[i] = static_cast<float>(i);
  multi.geometry.spacing = {0.5, 1.0, 2.0};
  std::vector<ImageVolume> channels;
  for (int64_t c = 0; c < 3; ++c) channels.push_back(extractChannel(multi, c));
  EXPECT_EQ(channels[2].channels, 1);
  EXPECT_EQ(channels[2].data.front(), 24.f);
  EXPECT_TRUE(channels[1].geometry.sameAs(multi.geometry));
  const ImageVolume stacked = stackChannels(channels);
  EXPECT_EQ(stacked.channels, 3);
  EXPECT_EQ(stacked.data, multi.data);
  EXPECT_THROW(extractChannel(multi, 3), std::out_of_range);
  EXPECT_THROW(extractChannel(multi, -1), std::out_of_range);
}

TEST(Volume, StackRefusesMismatchedGridsAndNothing) {
  EXPECT_THROW(stackChannels({}), std::invalid_argument);
  EXPECT_THROW(stackChannels({ImageVolume({2, 2, 2}, 1), ImageVolume({2, 2, 3}, 1)}), std::invalid_argument);
}

TEST(Geometry, SameAsUsesTolerance) {
  Geometry a;
  a.spacing = {1.0, 1.0, 3.0};
  a.origin = {-100.0, 20.0, 5.0};
  Geometry b = a;
  EXPECT_TRUE(a.sameAs(b));
  b.origin[0] += 1e-6;
  EXPECT_TRUE(a.sameAs(b));
  b.origin[0] += 0.5;
  EXPECT_FALSE(a.sameAs(b));
  b = a;
  b.spacing[2] = 3.1;
  EXPECT_FALSE(a.sameAs(b));
  b = a;
  b.direction = {-1, 0, 0, 0, -1, 0, 0, 0, 1};
  EXPECT_FALSE(a.sameAs(b));
}

TEST(Geometry, IndexToWorldAppliesSpacingDirectionAndOrigin) {
  Geometry g;
  g.spacing = {2.0, 3.0, 4.0};
  g.origin = {10.0, 20.0, 30.0};
  auto p = g.indexToWorld({1, 1, 1});
  EXPECT_DOUBLE_EQ(p[0], 12.0);
  EXPECT_DOUBLE_EQ(p[1], 23.0);
  EXPECT_DOUBLE_EQ(p[2], 34.0);
  // 90 degrees about z: the x axis points along world +y, the y axis along world -x.
  g.direction = {0, -1, 0, 1, 0, 0, 0, 0, 1};
  p = g.indexToWorld({1, 2, 0.5});
  EXPECT_NEAR(p[0], 10.0 - 6.0, 1e-12);
  EXPECT_NEAR(p[1], 20.0 + 2.0, 1e-12);
  EXPECT_NEAR(p[2], 32.0, 1e-12);
}

TEST(Volume, DescribeSizeShowsChannelsOnlyWhenMany) {
  EXPECT_EQ(describeSize({240, 240, 155}), "240x240x155");
  EXPECT_EQ(describeSize({240, 240, 155}, 4), "240x240x155x4");
}

}  // namespace
}  // namespace medseg
