// Label tables as the tools people use write them: mricron's AAL atlas (index-name list + binary
// .lut) beside aal.nii.gz, ITK-SNAP label descriptions and Slicer colour tables, and MedSeg's own
// tables read back.
#include "core/io/LabelTable.h"

#include <gtest/gtest.h>

#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;

TEST(LabelTable, AalAtlasNamesAndColoursAreFoundBesideTheLabelMap) {
  const fs::path atlas = test::templateDir() / "aal.nii.gz";
  const auto table = findLabelTableFor(atlas);
  ASSERT_TRUE(table.has_value());
  EXPECT_EQ(table->entries.size(), 116u);
  EXPECT_EQ(table->entries.at(1).name, "Precentral_L");
  EXPECT_EQ(table->entries.at(116).name, "Vermis_10");
  // Colours from aal.nii.lut: 256 reds, 256 greens, 256 blues.
  const std::string lut = readTextFile(test::templateDir() / "aal.nii.lut");
  ASSERT_EQ(lut.size(), 768u);
  const LabelEntry& first = table->entries.at(1);
  EXPECT_EQ(first.rgb[0], static_cast<uint8_t>(lut[1]));
  EXPECT_EQ(first.rgb[1], static_cast<uint8_t>(lut[256 + 1]));
  EXPECT_EQ(first.rgb[2], static_cast<uint8_t>(lut[512 + 1]));
  EXPECT_FALSE(findLabelTableFor(test::templateDir() / "ch2.nii.gz").has_value());
}

TEST(LabelTable, ItkSnapAndSlicerFilesAsTheToolsWriteThem) {
  test::ScratchDir dir("label-table-formats");
  writeFileAtomically(dir / "snap.txt",
                      "################################################\n"
                      "# ITK-SnAP Label Description File\n"
                      "################################################\n"
                      "    0     0    0    0        0  0  0    \"Clear Label\"\n"
                      "    1   255    0    0        1  1  1    \"Left hippocampus\"\n"
                      "    7     0  128  255      0.5  0  1    \"Label 7\"\n");
  const LabelTable snap = readLabelTable(dir / "snap.txt");
  ASSERT_EQ(snap.entries.size(), 2u);
  EXPECT_EQ(snap.entries.at(1).name, "Left hippocampus");
  EXPECT_EQ(snap.entries.at(1).rgb, (std::array<uint8_t, 3>{255, 0, 0}));
  EXPECT_DOUBLE_EQ(snap.entries.at(7).opacity, 0.5);
  EXPECT_FALSE(snap.entries.at(7).visible);

  writeFileAtomically(dir / "slicer.ctbl", "# Color table file\n0 Background 0 0 0 0\n4 Tumor 10 20 30 255\n");
  const LabelTable slicer = readLabelTable(dir / "slicer.ctbl");
  ASSERT_EQ(slicer.entries.size(), 1u);
  EXPECT_EQ(slicer.entries.at(4).name, "Tumor");
  EXPECT_EQ(slicer.entries.at(4).rgb, (std::array<uint8_t, 3>{10, 20, 30}));

  writeFileAtomically(dir / "bad.txt", "1 fine 2001\nx broken\n");
  try {
    (void)readLabelTable(dir / "bad.txt");
    ADD_FAILURE() << "a broken table was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.txt:2"), std::string::npos) << e.what();
  }
}

TEST(LabelTable, WrittenTablesReadBackAndAreFoundBesideTheMask) {
  test::ScratchDir dir("label-table-write");
  LabelTable table = bratsLabelTable();
  table.entries[9] = {"resection cavity", {1, 2, 3}, 0.25, true};
  const fs::path mask = dir / "case_001.nii.gz";
  writeLabelTablesBeside(table, mask);
  EXPECT_EQ(itkSnapLabelPath(mask), dir / "case_001.label.txt");
  EXPECT_TRUE(fs::exists(dir / "case_001.ctbl"));
  for (const fs::path& written : {dir / "case_001.label.txt", dir / "case_001.ctbl"}) {
    const LabelTable back = readLabelTable(written);
    ASSERT_EQ(back.entries.size(), 4u) << written;
    EXPECT_EQ(back.entries.at(1).rgb, table.entries.at(1).rgb) << written;
    EXPECT_NEAR(back.entries.at(9).opacity, 0.25, 0.01) << written;
  }
  EXPECT_EQ(readLabelTable(dir / "case_001.label.txt").entries.at(9).name, "resection cavity");
  EXPECT_EQ(readLabelTable(dir / "case_001.ctbl").entries.at(9).name, "resection_cavity");  // Slicer names have no spaces
  const auto found = findLabelTableFor(mask);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->entries.at(2).name, "non-enhancing");
  // No table: neutral names, never BraTS ones.
  EXPECT_EQ(LabelTable{}.entryFor(1).name, "label 1");
}

}  // namespace
}  // namespace medseg
