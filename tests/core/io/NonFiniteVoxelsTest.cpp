#include "core/dataset/NiftiNonFinite.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "TinyDatasets.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

TEST(NiftiNonFinite, CountsNanAndInfPerChannelInStoredPayload) {
  test::ScratchDir dir("nifti-nonfinite");
  ImageVolume image = test::tinyImage(0, 3);
  image.at(1, 1, 1, 0) = std::numeric_limits<float>::infinity();
  image.at(2, 1, 1, 2) = std::numeric_limits<float>::quiet_NaN();
  image.at(3, 1, 1, 2) = -std::numeric_limits<float>::infinity();
  for (const char* name : {"x.nii.gz", "x.nii"}) {
    writeImage(image, dir / name);
    const auto counts = countNonFiniteNifti(dir / name);
    ASSERT_TRUE(counts.has_value()) << name;
    ASSERT_EQ(counts->size(), 3u);
    EXPECT_EQ((*counts)[0].inf, 1);
    EXPECT_EQ((*counts)[0].nan, 0);
    EXPECT_EQ((*counts)[1].total(), 0);
    EXPECT_EQ((*counts)[2].nan, 1);
    EXPECT_EQ((*counts)[2].inf, 1);
  }
  writeLabels(test::tinyLabels(), dir / "labels.nii.gz");
  EXPECT_FALSE(countNonFiniteNifti(dir / "labels.nii.gz").has_value()) << "integer voxels cannot be NaN";
  writeImage(image, dir / "x.nrrd");
  EXPECT_FALSE(countNonFiniteNifti(dir / "x.nrrd").has_value());
  // NRRD keeps NaN when loaded, so the checker sees it in memory.
  EXPECT_TRUE(std::isnan(readImage(dir / "x.nrrd").at(2, 1, 1, 2)));
}

}  // namespace
}  // namespace medseg
