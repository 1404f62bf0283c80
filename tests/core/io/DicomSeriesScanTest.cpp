// A DICOM folder holding two series is not read by guessing (the error names both UIDs, and
// ReadOptions::dicomSeries picks one); a missing slice and uneven spacing are named; series in
// compressed transfer syntaxes made with DCMTK/GDCM tools read back voxel for voxel; oblique and
// gantry-tilted stacks (positions and orientations set with dcmodify) keep every voxel's world position.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>

#include "core/io/DicomSeriesScan.h"
#include "core/io/ImageIO.h"
#include "support/DicomTools.h"
#include "support/TestSupport.h"
#include "support/MissingComponent.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;

ImageVolume ramp(double zSpacing = 2.0) {
  Geometry g;
  g.spacing = {1.0, 1.0, zSpacing};
  ImageVolume image({32, 24, 7}, 1, g);  // GDCM's JPEG 2000 encoder fails on some 8x6 slices
  for (size_t i = 0; i < image.data.size(); ++i) image.data[i] = float((i * 37) % 1000);
  return image;
}

std::string errorOf(const fs::path& folder, const ReadOptions& options = {}) {
  try {
    readImage(folder, options);
  } catch (const ImageIOError& e) {
    return e.what();
  }
  return "(read without error)";
}

TEST(DicomSeriesScan, TwoSeriesInOneFolderAreNamedAndOneCanBeChosen) {
  test::ScratchDir dir("scan-two");
  writeDicomSeries(ramp(), dir / "a");
  writeDicomSeries(ramp(3.0), dir / "b");
  fs::create_directories(dir / "mixed");
  for (const char* part : {"a", "b"})
    for (const auto& f : fs::directory_iterator(dir / part))
      fs::copy_file(f.path(), dir / "mixed" / (std::string(part) + f.path().filename().string()));
  const auto series = listDicomSeries(dir / "mixed");
  ASSERT_EQ(series.size(), 2u);
  const std::string message = errorOf(dir / "mixed");
  EXPECT_NE(message.find("holds 2 DICOM series; choose one with --series UID"), std::string::npos) << message;
  EXPECT_NE(message.find(series[0].uid), std::string::npos) << message;
  EXPECT_NE(message.find(series[1].uid), std::string::npos) << message;
  ReadOptions pick;
  pick.dicomSeries = listDicomSeries(dir / "b").front().uid;
  const ImageVolume b = readImage(dir / "mixed", pick);
  EXPECT_NEAR(b.geometry.spacing[2], 3.0, 1e-6);
  pick.dicomSeries = "1.2.3.4";
  EXPECT_NE(errorOf(dir / "mixed", pick).find("holds no DICOM series 1.2.3.4"), std::string::npos);
}

TEST(DicomSeriesScan, MissingSliceAndUnevenSpacingAreNamed) {
  test::ScratchDir dir("scan-gap");
  writeDicomSeries(ramp(), dir / "gap");
  auto files = test::filesIn(dir / "gap");
  fs::remove(files[3]);
  const std::string gap = errorOf(dir / "gap");
  EXPECT_NE(gap.find("missing slice between"), std::string::npos) << gap;
  EXPECT_NE(gap.find("the gap is 4 mm, the spacing elsewhere 2 mm"), std::string::npos) << gap;
  EXPECT_NE(gap.find("about 1 slice(s) missing of 7"), std::string::npos) << gap;

  writeDicomSeries(ramp(), dir / "uneven");
  files = test::filesIn(dir / "uneven");
  // Move one slice 0.7 mm along z (and its slice location), as a broken export would.
  ASSERT_EQ(test::runProgram({"dcmodify", "-nb", "-m", "(0020,0032)=0\\0\\8.7", "-m", "(0020,1041)=8.7", files[4].string()}).exitCode, 0);
  const std::string uneven = errorOf(dir / "uneven");
  EXPECT_NE(uneven.find("uneven slice spacing"), std::string::npos) << uneven;
}

// A volume whose every voxel tells where it was written: 1 + x + 40 y + 1000 z.
ImageVolume indexed() {
  Geometry g;
  g.spacing = {1.0, 1.0, 2.0};
  ImageVolume image({32, 24, 7}, 1, g);
  for (int64_t z = 0; z < 7; ++z)
    for (int64_t y = 0; y < 24; ++y)
      for (int64_t x = 0; x < 32; ++x) image.data[image.offset(0, x, y, z)] = float(1 + x + 40 * y + 1000 * z);
  return image;
}

std::string ds(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.8g", std::abs(v) < 1e-12 ? 0.0 : v);
  return text;
}

// Rewrites slice z's position (and, when given, every slice's orientation) as a scanner would have
// written them. writeDicomSeries names the slices IM000001.dcm... in z order.
void placeSlices(const fs::path& folder, const std::function<std::array<double, 3>(int)>& position,
                 const std::string& orientation = {}) {
  const auto files = test::filesIn(folder);
  for (size_t z = 0; z < files.size(); ++z) {
    const auto p = position(int(z));
    std::vector<std::string> argv{"dcmodify", "-nb", "-m", "(0020,0032)=" + ds(p[0]) + "\\" + ds(p[1]) + "\\" + ds(p[2])};
    if (!orientation.empty()) argv.insert(argv.end(), {"-m", "(0020,0037)=" + orientation});
    argv.push_back(files[z].string());
    const auto result = test::runProgram(argv);
    ASSERT_EQ(result.exitCode, 0) << result.output;
  }
}

TEST(DicomSeriesScan, ObliqueSeriesMadeWithDcmodifyKeepsItsGeometry) {
  if (!test::haveProgram("dcmodify")) MEDSEG_MISSING_COMPONENT("dcmodify is not installed (Debian package dcmtk)");
  test::ScratchDir dir("scan-oblique");
  writeDicomSeries(indexed(), dir / "oblique");
  // Rows along x, columns turned 30 degrees about x: the normal is (0, -sin, cos); slices 2 mm apart on it.
  const double c = std::cos(M_PI / 6), s = std::sin(M_PI / 6);
  const std::array<double, 3> origin{-10.0, 20.0, 5.0};
  placeSlices(dir / "oblique", [&](int z) {
    return std::array<double, 3>{origin[0], origin[1] - 2.0 * z * s, origin[2] + 2.0 * z * c};
  }, "1\\0\\0\\0\\" + ds(c) + "\\" + ds(s));
  const ImageVolume read = readImage(dir / "oblique");
  EXPECT_EQ(read.data, indexed().data);
  Geometry expected;
  expected.spacing = {1.0, 1.0, 2.0};
  expected.origin = origin;
  expected.direction = {1, 0, 0, 0, c, -s, 0, s, c};
  EXPECT_TRUE(read.geometry.sameAs(expected, 1e-5));
  EXPECT_EQ(readImageHeader(dir / "oblique").gantryTiltDegrees, 0.0);
}

TEST(DicomSeriesScan, GantryTiltedStackKeepsEveryVoxelAtItsWorldPosition) {
  if (!test::haveProgram("dcmodify")) MEDSEG_MISSING_COMPONENT("dcmodify is not installed (Debian package dcmtk)");
  test::ScratchDir dir("scan-tilt");
  writeDicomSeries(indexed(), dir / "tilted");
  // A 15 degree tilt: each slice 2 mm along the normal and 2 tan(15) mm along y (the columns).
  const double sideways = 2.0 * std::tan(15.0 * M_PI / 180.0);
  placeSlices(dir / "tilted", [&](int z) { return std::array<double, 3>{0.0, z * sideways, 2.0 * z}; });

  const ImageHeader header = readImageHeader(dir / "tilted");
  EXPECT_NEAR(header.gantryTiltDegrees, 15.0, 1e-3);
  // 6 steps of 0.536 voxel: 3.2 voxels of travel, 4 rows added; the grid's spacing is along the normal.
  EXPECT_EQ(header.size, (Size3{32, 28, 7}));
  Geometry expected;
  expected.spacing = {1.0, 1.0, 2.0};
  EXPECT_TRUE(header.geometry.sameAs(expected, 1e-5));

  const ImageVolume read = readImage(dir / "tilted");
  ASSERT_EQ(read.size, header.size);
  EXPECT_TRUE(read.geometry.sameAs(header.geometry));
  // Grid voxel (i, j, k) is where slice k's voxel (i, j - k * 0.536) was acquired; the value is
  // linear in y, so bilinear interpolation restores it exactly. Outside the slice: the background (1).
  int64_t inside = 0;
  for (int64_t k = 0; k < 7; ++k)
    for (int64_t j = 0; j < 28; ++j)
      for (int64_t i = 0; i < 32; ++i) {
        const double y = double(j) - k * sideways;
        const bool acquired = y >= -1e-6 && y <= 23 + 1e-6;
        const double want = acquired ? 1 + i + 40 * y + 1000 * k : 1.0;
        inside += acquired;
        ASSERT_NEAR(read.data[read.offset(0, i, j, k)], want, 1e-3) << i << "," << j << "," << k;
      }
  EXPECT_EQ(inside, 32 * (24 + 6 * 23));  // slices 1-6 fall between grid rows: one row fewer each
}

TEST(DicomSeriesScan, SlicesOffTheLineThroughTheStackAreNamed) {
  if (!test::haveProgram("dcmodify")) MEDSEG_MISSING_COMPONENT("dcmodify is not installed (Debian package dcmtk)");
  test::ScratchDir dir("scan-off-line");
  writeDicomSeries(indexed(), dir / "bent");
  placeSlices(dir / "bent", [](int z) { return std::array<double, 3>{z == 3 ? 1.5 : 0.0, 0.0, 2.0 * z}; });
  const std::string message = errorOf(dir / "bent");
  EXPECT_NE(message.find("IM000004.dcm"), std::string::npos) << message;
  EXPECT_NE(message.find("lies 1.5 mm sideways of the line through the first and the last slice"), std::string::npos)
      << message;
}

TEST(DicomSeriesScan, CompressedTransferSyntaxesReadBackVoxelForVoxel) {
  if (const std::string missing = test::missingDicomTools(); !missing.empty()) MEDSEG_MISSING_COMPONENT("missing: " + missing);
  test::ScratchDir dir("scan-codecs");
  writeDicomSeries(ramp(), dir / "plain");
  const ImageVolume plain = readImage(dir / "plain");
  for (auto ts : {test::TransferSyntax::JpegLossless, test::TransferSyntax::JpegLs, test::TransferSyntax::Jpeg2000,
                  test::TransferSyntax::Rle, test::TransferSyntax::Deflate}) {
    const fs::path folder = dir / test::transferSyntaxUid(ts);
    fs::create_directories(folder);
    for (const auto& f : test::filesIn(dir / "plain")) fs::copy_file(f, folder / f.filename());
    test::transcodeSeries(folder, ts);
    ASSERT_EQ(test::fileTransferSyntax(test::filesIn(folder).front()), test::transferSyntaxUid(ts));
    const ImageVolume read = readImage(folder);
    EXPECT_EQ(read.data, plain.data) << test::transferSyntaxUid(ts);
    EXPECT_TRUE(read.geometry.sameAs(plain.geometry)) << test::transferSyntaxUid(ts);
  }
}

}  // namespace
}  // namespace medseg
