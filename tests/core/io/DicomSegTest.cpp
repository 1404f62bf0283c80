// DICOM SEG written over a DICOM series and read back as a label map: same labels and geometry
// (also on an oblique grid), segments named and coded, the source series referenced; readLabels
// reads SEG files; a mask on another grid is refused.
#include <gtest/gtest.h>

#include "core/io/DicomSeg.h"
#include "core/io/ImageIO.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;

struct Series {
  ImageVolume image;
  LabelVolume labels;
};

Series makeSeries(const fs::path& folder, bool oblique) {
  Geometry g;
  g.spacing = {0.9, 1.1, 2.5};
  g.origin = {-20.0, 15.0, -7.5};
  if (oblique) {
    const double a = 0.3, c = std::cos(a), s = std::sin(a);
    g.direction = {c, 0, s, 0, 1, 0, -s, 0, c};
  }
  Series out{ImageVolume({12, 10, 6}, 1, g), LabelVolume({12, 10, 6}, 1, g)};
  for (int64_t z = 0; z < 6; ++z)
    for (int64_t y = 0; y < 10; ++y)
      for (int64_t x = 0; x < 12; ++x) {
        out.image.at(x, y, z) = float(x * 10 + y + z * 100);
        out.labels.at(x, y, z) = uint8_t((x + y + z) % 4);
      }
  writeDicomSeries(out.image, folder);
  out.image = readImage(folder);  // the grid as a DICOM reader sees it
  out.labels.geometry = out.image.geometry;
  return out;
}

LabelTable brats() {
  LabelTable t;
  t.entries[1] = {"edema", {255, 255, 0}};
  t.entries[2] = {"non-enhancing tumour", {255, 0, 0}};
  t.entries[3] = {"enhancing tumour", {0, 0, 255}};
  return t;
}

TEST(DicomSeg, WrittenOverASeriesReadsBackWithTheSameLabelsAndGeometry) {
  for (bool oblique : {false, true}) {
    test::ScratchDir dir(oblique ? "seg-oblique" : "seg-axial");
    const Series series = makeSeries(dir / "series", oblique);
    writeDicomSeg(series.labels, brats(), dir / "series", dir / "mask.dcm");
    ASSERT_TRUE(isDicomSegFile(dir / "mask.dcm"));
    EXPECT_FALSE(isDicomSegFile(fs::directory_iterator(dir / "series")->path()));
    const DicomSegImage read = readDicomSeg(dir / "mask.dcm");
    EXPECT_EQ(read.labels.size, series.labels.size);
    EXPECT_EQ(read.labels.data, series.labels.data);
    EXPECT_TRUE(read.labels.geometry.sameAs(series.labels.geometry, 1e-5)) << (oblique ? "oblique" : "axial");
    ASSERT_EQ(read.segments.size(), 3u);
    EXPECT_EQ(read.segments[0].label, "edema");
    EXPECT_EQ(read.segments[0].typeCode, "79654002");
    EXPECT_EQ(read.segments[1].typeCode, "6574001");
    EXPECT_EQ(read.segments[2].typeCode, "108369006");
    EXPECT_NEAR(read.segments[2].rgb[2], 255, 2);
    EXPECT_FALSE(read.referencedSeriesUid.empty());
    EXPECT_FALSE(read.frameOfReferenceUid.empty());
    EXPECT_EQ(readLabels(dir / "mask.dcm").data, series.labels.data);
  }
}

TEST(DicomSeg, AMaskOnAnotherGridIsRefusedAndNothingIsWritten) {
  test::ScratchDir dir("seg-grid");
  Series series = makeSeries(dir / "series", false);
  series.labels.geometry.origin[2] += 1.0;  // between the source slices
  try {
    writeDicomSeg(series.labels, brats(), dir / "series", dir / "mask.dcm");
    FAIL() << "a mask off the series' grid was written";
  } catch (const ImageIOError& e) {
    EXPECT_NE(std::string(e.what()).find("is no slice of the series"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "mask.dcm"));
}

}  // namespace
}  // namespace medseg
