// Round trips through every supported format keep geometry and voxels; DICOM series; real anatomy.
#include "core/io/ImageIO.h"

#include <gtest/gtest.h>

#include <set>

#include "support/TestSupport.h"
#include "tests/core/io/IoTestImages.h"
#include "support/MissingComponent.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;
using test::ScratchDir;

void expectSameGeometry(const Geometry& expected, const Geometry& actual, double tolerance) {
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(expected.spacing[i], actual.spacing[i], tolerance) << "spacing " << i;
    EXPECT_NEAR(expected.origin[i], actual.origin[i], tolerance) << "origin " << i;
  }
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(expected.direction[i], actual.direction[i], tolerance) << "direction " << i;
}

class FormatRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(FormatRoundTrip, KeepsObliqueGeometryAndValues) {
  ScratchDir dir("io-roundtrip");
  const fs::path file = dir / ("case" + GetParam());
  const ImageVolume original = test::rampImage({7, 6, 5}, 1);
  writeImage(original, file);

  const ImageHeader header = readImageHeader(file);
  EXPECT_EQ(header.size, original.size);
  EXPECT_EQ(header.channels, 1);
  EXPECT_EQ(header.componentType, "float32");
  expectSameGeometry(original.geometry, header.geometry, 1e-4);

  const ImageVolume back = readImage(file);
  ASSERT_EQ(back.size, original.size);
  ASSERT_EQ(back.channels, 1);
  EXPECT_EQ(back.data, original.data);
  expectSameGeometry(original.geometry, back.geometry, 1e-4);
  EXPECT_TRUE(back.geometry.sameAs(original.geometry, 1e-4));
  for (const auto& name : test::folderContents(dir.path())) EXPECT_EQ(name.find(".tmp-"), std::string::npos) << name;
}

TEST_P(FormatRoundTrip, FourChannelImagesStayFourDimensional) {
  ScratchDir dir("io-roundtrip-4d");
  const fs::path file = dir / ("multi" + GetParam());
  const ImageVolume original = test::rampImage({5, 4, 3}, 4);
  writeImage(original, file);
  const ImageHeader header = readImageHeader(file);
  EXPECT_EQ(header.size, original.size);
  EXPECT_EQ(header.channels, 4);
  const ImageVolume back = readImage(file);
  ASSERT_EQ(back.channels, 4);
  EXPECT_EQ(back.data, original.data);
  EXPECT_FLOAT_EQ(back.at(2, 1, 2, 3), original.at(2, 1, 2, 3));
  expectSameGeometry(original.geometry, back.geometry, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, FormatRoundTrip,
                         ::testing::Values(".nii", ".nii.gz", ".nrrd", ".nhdr", ".mha", ".mhd"),
                         [](const auto& info) {
                           std::string name = info.param.substr(1);
                           for (auto& c : name) if (c == '.') c = '_';
                           return name;
                         });

TEST(ImageIO, DetachedHeaderFormatsLeaveHeaderAndDataFileOnly) {
  ScratchDir dir("io-detached");
  writeImage(test::rampImage({4, 4, 4}, 1), dir / "scan.mhd");
  EXPECT_EQ(test::folderContents(dir.path()), (std::set<std::string>{"scan.mhd", "scan.raw"}));
  writeImage(test::rampImage({4, 4, 4}, 1), dir / "scan.mhd");  // overwrite in place
  EXPECT_EQ(test::folderContents(dir.path()), (std::set<std::string>{"scan.mhd", "scan.raw"}));
  EXPECT_EQ(readImage(dir / "scan.mhd").data, test::rampImage({4, 4, 4}, 1).data);
}

TEST(ImageIO, LabelsRoundTripAsUint8) {
  ScratchDir dir("io-labels");
  LabelVolume labels({6, 5, 4}, 1, test::obliqueGeometry());
  for (size_t i = 0; i < labels.data.size(); ++i) labels.data[i] = static_cast<uint8_t>(i % 4);
  labels.data[7] = 255;
  for (const char* ext : {".nii.gz", ".nrrd", ".mha"}) {
    const fs::path file = dir / (std::string("seg") + ext);
    writeLabels(labels, file);
    EXPECT_EQ(readImageHeader(file).componentType, "uint8") << ext;
    const LabelVolume back = readLabels(file);
    EXPECT_EQ(back.size, labels.size);
    EXPECT_EQ(back.data, labels.data) << ext;
    EXPECT_TRUE(back.geometry.sameAs(labels.geometry, 1e-4)) << ext;
  }
}

TEST(ImageIO, DicomSeriesRoundTripKeepsGeometryAndInt16Values) {
  ScratchDir dir("io-dicom");
  ImageVolume image = test::rampImage({8, 7, 6}, 1);
  for (size_t i = 0; i < image.data.size(); ++i) image.data[i] = static_cast<float>(i) * 3.3f - 400.2f;
  const fs::path series = dir / "series";
  writeDicomSeries(image, series);
  EXPECT_EQ(test::folderContents(series).size(), 6u);
  EXPECT_EQ(test::folderContents(dir.path()), (std::set<std::string>{"series"}));  // no staging folder left

  const ImageHeader header = readImageHeader(series);
  EXPECT_EQ(header.format, "DICOM");
  EXPECT_EQ(header.componentType, "int16");
  EXPECT_EQ(header.size, image.size);
  expectSameGeometry(image.geometry, header.geometry, 1e-3);

  const ImageVolume back = readImage(series);
  ASSERT_EQ(back.size, image.size);
  expectSameGeometry(image.geometry, back.geometry, 1e-3);
  for (size_t i = 0; i < image.data.size(); ++i)
    ASSERT_FLOAT_EQ(back.data[i], std::round(image.data[i])) << "voxel " << i;

  EXPECT_THROW(writeDicomSeries(image, series), ImageIOError);  // never mixes two series
  EXPECT_THROW(writeDicomSeries(test::rampImage({3, 3, 3}, 2), dir / "multi"), ImageIOError);
}

TEST(ImageIO, ReadsRealAnatomyColin27) {
  const fs::path file = test::templateDir() / "ch2.nii.gz";
  if (!fs::exists(file)) MEDSEG_MISSING_COMPONENT(file.string() + " is missing (Debian package mricron-data)");
  const ImageHeader header = readImageHeader(file);
  EXPECT_EQ(header.size, (Size3{181, 217, 181}));
  EXPECT_EQ(header.channels, 1);
  EXPECT_EQ(header.format, "NIfTI");
  for (double s : header.geometry.spacing) EXPECT_NEAR(s, 1.0, 1e-6);

  const ImageVolume image = readImage(file);
  EXPECT_EQ(image.size, header.size);
  const auto [minIt, maxIt] = std::minmax_element(image.data.begin(), image.data.end());
  EXPECT_LT(*minIt, *maxIt);  // real intensities, not a zero-filled buffer
  EXPECT_GT(image.at(90, 108, 90), 0.0f);  // the brain centre is tissue
}

TEST(ImageIO, TwoDimensionalImagesBecomeOneSlice) {
  ScratchDir dir("io-2d");
  // A 2-D MetaImage written by hand, the way other tools produce them.
  test::writeBytes(dir / "slice.mha",
                   "ObjectType = Image\nNDims = 2\nDimSize = 3 2\nElementSpacing = 0.5 0.25\n"
                   "ElementType = MET_UCHAR\nElementDataFile = LOCAL\n" + std::string("\x01\x02\x03\x04\x05\x06", 6));
  const ImageVolume image = readImage(dir / "slice.mha");
  EXPECT_EQ(image.size, (Size3{3, 2, 1}));
  EXPECT_FLOAT_EQ(image.at(2, 1, 0), 6.0f);
  EXPECT_DOUBLE_EQ(image.geometry.spacing[1], 0.25);
}

TEST(ImageIO, SupportedPathsByExtensionOrFolder) {
  ScratchDir dir("io-supported");
  for (const char* ok : {"a.nii", "a.nii.gz", "A.NII.GZ", "a.nrrd", "a.nhdr", "a.mha", "a.mhd"})
    EXPECT_TRUE(isSupportedImagePath(ok)) << ok;
  for (const char* bad : {"a.png", "a.gz", "a.txt", "nii", "a.nii.bak"}) EXPECT_FALSE(isSupportedImagePath(bad)) << bad;
  EXPECT_TRUE(isSupportedImagePath(dir.path()));
}

}  // namespace
}  // namespace medseg
