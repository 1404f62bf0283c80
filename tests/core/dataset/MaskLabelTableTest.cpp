// The names a mask opens with: a table beside it first, else its data set's dataset.json.
#include "core/dataset/MaskLabelTable.h"

#include <gtest/gtest.h>

#include "TinyDatasets.h"
#include "support/TestSupport.h"

using namespace medseg;
using test::ScratchDir;

TEST(MaskLabelTable, AMaskInLabelsTrIsNamedByItsDatasetJson) {
  ScratchDir msd("mask-table-msd");
  test::makeMsdDataset(msd.path(), 2, 0);
  const auto table = labelTableForMask(msd.path() / "labelsTr" / (test::caseName(0) + ".nii.gz"));
  ASSERT_TRUE(table.has_value());
  EXPECT_EQ(table->entries.at(1).name, "edema");
  EXPECT_EQ(table->entries.at(2).name, "non-enhancing tumour");
  EXPECT_EQ(table->entries.at(3).name, "enhancing tumour");

  ScratchDir nnunet("mask-table-nnunet");
  test::makeNnUNetDataset(nnunet.path(), 1, 0);
  const auto named = labelTableForMask(nnunet.path() / "labelsTr" / (test::caseName(0) + ".nii.gz"));
  ASSERT_TRUE(named.has_value());
  EXPECT_EQ(named->entries.at(2).name, "non_enhancing");
}

TEST(MaskLabelTable, ATableBesideTheMaskWinsAndAMaskElsewhereIsUnnamed) {
  ScratchDir msd("mask-table-beside");
  test::makeMsdDataset(msd.path(), 1, 0);
  const auto mask = msd.path() / "labelsTr" / (test::caseName(0) + ".nii.gz");
  LabelTable own;
  own.entries[1] = {"oedema (corrected)", {1, 2, 3}, 1.0, true};
  writeItkSnapLabels(own, itkSnapLabelPath(mask));
  EXPECT_EQ(labelTableForMask(mask)->entries.at(1).name, "oedema (corrected)");

  ScratchDir loose("mask-table-loose");
  writeLabels(test::tinyLabels(), loose.path() / "mask.nii.gz");
  EXPECT_FALSE(labelTableForMask(loose.path() / "mask.nii.gz").has_value());
  // A broken dataset.json names nothing, and the mask still has no table rather than an error.
  std::filesystem::create_directories(loose.path() / "labelsTr");
  writeLabels(test::tinyLabels(), loose.path() / "labelsTr" / "x.nii.gz");
  test::writeText(loose.path() / "dataset.json", "{ not json");
  EXPECT_FALSE(labelTableForMask(loose.path() / "labelsTr" / "x.nii.gz").has_value());
}
