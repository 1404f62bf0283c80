// The raw NaN/Inf scan reads NIfTI headers itself: absurd sizes and offsets must end in "not
// understood" (nullopt) or an ImageIOError for a short payload, never in a huge allocation or an
// undefined cast.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <limits>

#include "core/io/NonFiniteVoxels.h"
#include "core/io/ImageIO.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

std::string header(const int16_t (&dims)[8], float offset) {
  std::string bytes(352, '\0');
  const int32_t size = 348;
  std::memcpy(&bytes[0], &size, 4);
  std::memcpy(&bytes[40], dims, sizeof dims);
  const int16_t datatype = 16, bitpix = 32;  // float32
  std::memcpy(&bytes[70], &datatype, 2);
  std::memcpy(&bytes[72], &bitpix, 2);
  std::memcpy(&bytes[108], &offset, 4);
  std::memcpy(&bytes[344], "n+1\0", 4);
  return bytes;
}

TEST(NonFiniteVoxelsRobustness, AbsurdHeadersNeverAllocateForWhatTheyDeclare) {
  test::ScratchDir dir("nonfinite-robust");
  const auto file = dir / "x.nii";
  // 32767^3 voxels in 32767 channels over 16 bytes of data: the first missing block ends it.
  const int16_t huge[8] = {4, 32767, 32767, 32767, 32767, 1, 1, 1};
  std::ofstream(file, std::ios::binary) << header(huge, 352) << std::string(16, '\0');
  EXPECT_THROW(countNonFiniteNifti(file), ImageIOError);
  // Seven axes of 32767: the byte count overflows 64 bits, so the header describes no real file.
  const int16_t impossible[8] = {7, 32767, 32767, 32767, 32767, 32767, 32767, 32767};
  std::ofstream(file, std::ios::binary | std::ios::trunc) << header(impossible, 352) << std::string(16, '\0');
  EXPECT_FALSE(countNonFiniteNifti(file).has_value());
  // vox_offset beyond any file (and a float no integer holds) is "not understood".
  const int16_t small[8] = {3, 2, 2, 2, 1, 1, 1, 1};
  for (const float offset : {1e30f, 3e38f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << header(small, offset) << std::string(32, '\0');
    EXPECT_FALSE(countNonFiniteNifti(file).has_value()) << offset;
  }
  std::ofstream(file, std::ios::binary | std::ios::trunc) << header(small, 352) << std::string(32, '\0');
  const auto counts = countNonFiniteNifti(file);
  ASSERT_TRUE(counts.has_value());
  EXPECT_EQ(counts->size(), 1u);
}

}  // namespace
}  // namespace medseg
