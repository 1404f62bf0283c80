// Tumour parts told by what label names mean, for the studio's region rows and label colours.
#include <gtest/gtest.h>

#include "core/io/LabelTable.h"
#include "core/io/TumourLabels.h"

using namespace medseg;

TEST(TumourLabels, MsdBrats2021AndBrats2023NamesGiveTheSameParts) {
  EXPECT_EQ(tumourPartNamed("edema"), TumourPart::Edema);
  EXPECT_EQ(tumourPartNamed("Peritumoral Oedema"), TumourPart::Edema);
  EXPECT_EQ(tumourPartNamed("ED"), TumourPart::Edema);
  EXPECT_EQ(tumourPartNamed("SNFH"), TumourPart::Edema);
  EXPECT_EQ(tumourPartNamed("surrounding non-enhancing FLAIR hyperintensity"), TumourPart::Edema);
  EXPECT_EQ(tumourPartNamed("non-enhancing tumor"), TumourPart::NonEnhancingCore);
  EXPECT_EQ(tumourPartNamed("Non-enhancing tumour (2)"), TumourPart::NonEnhancingCore);
  EXPECT_EQ(tumourPartNamed("NCR/NET"), TumourPart::NonEnhancingCore);
  EXPECT_EQ(tumourPartNamed("NETC"), TumourPart::NonEnhancingCore);
  EXPECT_EQ(tumourPartNamed("necrotic tumor core"), TumourPart::NonEnhancingCore);
  EXPECT_EQ(tumourPartNamed("enhancing tumour"), TumourPart::Enhancing);
  EXPECT_EQ(tumourPartNamed("ET"), TumourPart::Enhancing);
  EXPECT_EQ(tumourPartNamed("GD-enhancing tumor"), TumourPart::Enhancing);
  for (const char* other : {"background", "label 3", "left hippocampus", "whole brain", ""})
    EXPECT_FALSE(tumourPartNamed(other).has_value()) << other;
}

TEST(TumourLabels, RegionsAreMadeOfTheValuesThePartsHave) {
  const auto brats2021 = tumourLabelsOf({{0, "background"}, {1, "NCR/NET"}, {2, "ED"}, {4, "ET"}});
  ASSERT_TRUE(brats2021.has_value());
  EXPECT_EQ(brats2021->wholeTumour(), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(brats2021->tumourCore(), (std::vector<int>{1, 4}));
  EXPECT_EQ(brats2021->enhancingTumour(), (std::vector<int>{4}));
  const auto msd = tumourLabelsOf({{1, "edema"}, {2, "non-enhancing tumor"}, {3, "enhancing tumour"}});
  ASSERT_TRUE(msd.has_value());
  EXPECT_EQ(msd->tumourCore(), (std::vector<int>{2, 3}));
  // Not every part present: no regions.
  EXPECT_FALSE(tumourLabelsOf({{1, "edema"}, {3, "enhancing tumour"}}).has_value());
  EXPECT_FALSE(tumourLabelsOf({{1, "hippocampus"}, {2, "amygdala"}, {3, "putamen"}}).has_value());
}

TEST(TumourLabels, TablesFromNamesGiveEachPartItsBratsColourWhateverTheSpelling) {
  const LabelTable brats = bratsLabelTable();
  const LabelTable table = labelTableFromNames({{1, "NCR/NET"}, {2, "ED"}, {4, "ET"}, {5, "vessel"}});
  EXPECT_EQ(table.entries.at(1).rgb, brats.entries.at(2).rgb);
  EXPECT_EQ(table.entries.at(2).rgb, brats.entries.at(1).rgb);
  EXPECT_EQ(table.entries.at(4).rgb, brats.entries.at(3).rgb);
  EXPECT_EQ(table.entries.at(4).name, "ET");
  EXPECT_EQ(table.entries.at(5).rgb, neutralLabel(5).rgb);
}
