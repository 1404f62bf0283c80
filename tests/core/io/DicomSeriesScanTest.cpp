// A DICOM folder holding two series is not read by guessing (the error names both UIDs, and
// ReadOptions::dicomSeries picks one); a missing slice and uneven spacing are named; series in
// compressed transfer syntaxes made with DCMTK/GDCM tools read back voxel for voxel.
#include <gtest/gtest.h>

#include "core/io/DicomSeriesScan.h"
#include "core/io/ImageIO.h"
#include "support/DicomTools.h"
#include "support/TestSupport.h"

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

TEST(DicomSeriesScan, CompressedTransferSyntaxesReadBackVoxelForVoxel) {
  if (const std::string missing = test::missingDicomTools(); !missing.empty()) GTEST_SKIP() << "missing: " << missing;
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
