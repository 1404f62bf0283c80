#include "core/io/NonFiniteVoxels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/dataset/TinyDatasets.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

// Channel 0: +Inf at (1,1,1); channel 2: NaN at (2,1,1) and -Inf at (3,1,1).
ImageVolume imageWithNonFinite() {
  ImageVolume image = test::tinyImage(0, 3);
  image.at(1, 1, 1, 0) = std::numeric_limits<float>::infinity();
  image.at(2, 1, 1, 2) = std::numeric_limits<float>::quiet_NaN();
  image.at(3, 1, 1, 2) = -std::numeric_limits<float>::infinity();
  return image;
}

TEST(NonFiniteVoxels, CountsNanAndInfPerChannelInStoredNiftiPayload) {
  test::ScratchDir dir("nifti-nonfinite");
  const ImageVolume image = imageWithNonFinite();
  for (const char* name : {"x.nii.gz", "x.nii"}) {
    writeImage(image, dir / name);
    const auto counts = countNonFiniteNifti(dir / name);
    ASSERT_TRUE(counts.has_value()) << name;
    ASSERT_EQ(counts->size(), 3u);
    EXPECT_EQ((*counts)[0].inf, 1);
    EXPECT_EQ((*counts)[0].nan, 0);
    EXPECT_EQ((*counts)[0].firstVoxel, image.offset(0, 1, 1, 1));
    EXPECT_EQ((*counts)[1].total(), 0);
    EXPECT_EQ((*counts)[1].firstVoxel, -1);
    EXPECT_EQ((*counts)[2].nan, 1);
    EXPECT_EQ((*counts)[2].inf, 1);
  }
  writeLabels(test::tinyLabels(), dir / "labels.nii.gz");
  EXPECT_FALSE(countNonFiniteNifti(dir / "labels.nii.gz").has_value()) << "integer voxels cannot be NaN";
  writeImage(image, dir / "x.nrrd");
  EXPECT_FALSE(countNonFiniteNifti(dir / "x.nrrd").has_value());
}

// The rule of every read: refused by default in every float format, with the count, the first voxel
// and its channel in the message.
TEST(NonFiniteVoxels, EveryFormatRefusesThemByDefault) {
  test::ScratchDir dir("nonfinite-refused");
  const ImageVolume image = imageWithNonFinite();
  for (const char* name : {"x.nii.gz", "x.nii", "x.nrrd", "x.mha"}) {
    writeImage(image, dir / name);
    try {
      (void)readImage(dir / name);
      ADD_FAILURE() << name << " was read without an error";
    } catch (const NonFiniteVoxelsError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("3 non-finite voxels (1 NaN, 2 Inf)"), std::string::npos) << message;
      EXPECT_NE(message.find("the first at voxel (1, 1, 1) of channel 0"), std::string::npos) << message;
      EXPECT_NE(message.find("--allow-non-finite"), std::string::npos) << message;
      EXPECT_NE(message.find(name), std::string::npos) << message;
    }
  }
}

TEST(NonFiniteVoxels, AllowedTheyBecomeZeroAndAreReported) {
  test::ScratchDir dir("nonfinite-replaced");
  const ImageVolume image = imageWithNonFinite();
  for (const char* name : {"x.nii.gz", "x.nrrd", "x.mha"}) {
    writeImage(image, dir / name);
    int64_t reported = -1;
    const ImageVolume read = readImage(dir / name, nonFiniteReadOptions(true, [&](const auto&, const NonFiniteVoxels& found) {
                                         reported = found.total();
                                       }));
    EXPECT_EQ(reported, 3) << name;
    EXPECT_EQ(read.at(1, 1, 1, 0), 0.0f) << name;
    EXPECT_EQ(read.at(2, 1, 1, 2), 0.0f) << name;
    EXPECT_EQ(read.at(3, 1, 1, 2), 0.0f) << name;
    EXPECT_EQ(read.at(4, 1, 1, 2), image.at(4, 1, 1, 2)) << name;
    for (const NonFiniteCount& count : countNonFiniteLoaded(read)) EXPECT_EQ(count.total(), 0) << name;
  }
  // A clean image is never reported.
  writeImage(test::tinyImage(1, 2), dir / "clean.nii.gz");
  bool called = false;
  (void)readImage(dir / "clean.nii.gz", nonFiniteReadOptions(true, [&](const auto&, const auto&) { called = true; }));
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace medseg
