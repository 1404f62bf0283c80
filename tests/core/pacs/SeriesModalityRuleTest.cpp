// The series-to-modality rule: BraTS' four MR sequences by their series descriptions, the model's
// own series_patterns taking over for the modalities they name, and the errors (none or several
// matches, a bad pattern) that list the study's series and ask for --series.
#include <gtest/gtest.h>

#include "core/pacs/SeriesModalityRule.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

PacsStudy study(const std::vector<std::string>& descriptions) {
  PacsStudy s;
  s.studyUid = "1.2.3";
  int n = 0;
  for (const auto& d : descriptions) {
    PacsSeries series;
    series.seriesUid = "1.2.3." + std::to_string(++n);
    series.modality = "MR";
    series.description = d;
    s.series.push_back(series);
  }
  return s;
}

TEST(SeriesModalityRule, MatchesTheFourBratsSequencesInTheModelsOrder) {
  const auto chosen = matchSeriesToModalities(study({"AX T2 FSE", "Sag T1 MPRAGE post Gd", "AX FLAIR", "Sag T1 MPRAGE"}),
                                              {"FLAIR", "T1w", "T1gd", "T2w"});
  ASSERT_EQ(chosen.size(), 4u);
  EXPECT_EQ(chosen[0].description, "AX FLAIR");
  EXPECT_EQ(chosen[1].description, "Sag T1 MPRAGE");
  EXPECT_EQ(chosen[2].description, "Sag T1 MPRAGE post Gd");
  EXPECT_EQ(chosen[3].description, "AX T2 FSE");
  EXPECT_TRUE(seriesMatchesModality("t1_mprage_CE", "T1gd"));
  EXPECT_FALSE(seriesMatchesModality("t1_mprage_CE", "T1w"));
  EXPECT_FALSE(seriesMatchesModality("T2 FLAIR", "T2w"));
}

TEST(SeriesModalityRule, NoOrSeveralMatchesListTheSeriesAndAskForSeries) {
  try {
    matchSeriesToModalities(study({"AX FLAIR", "AX T2", "COR T2"}), {"FLAIR", "T2w"});
    FAIL() << "two T2 series were accepted";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("2 series descriptions match the model's modality T2w"), std::string::npos) << m;
    EXPECT_NE(m.find("1.2.3.3  MR  'COR T2'"), std::string::npos) << m;
    EXPECT_NE(m.find("--series UID once per modality"), std::string::npos) << m;
  }
  EXPECT_THROW(matchSeriesToModalities(study({"AX FLAIR"}), {"FLAIR", "T1gd"}), InputError);
}

TEST(SeriesModalityRule, TheModelsSeriesPatternsReplaceTheBuiltInRuleForTheirModalities) {
  // A site that names its sequences in its own way: "SAG 3D DARK FLUID" is the FLAIR, "MPR CE" the
  // T1 with contrast, "MPR NATIVE" the one without. The built-in rule finds none of these.
  const PacsStudy site = study({"SAG 3D DARK FLUID", "MPR NATIVE", "MPR CE", "AX T2 TSE"});
  EXPECT_THROW(matchSeriesToModalities(site, {"FLAIR", "T1w", "T1gd", "T2w"}), InputError);
  const SeriesPatterns patterns{{"flair", {"dark.?fluid", "flair"}}, {"T1w", {"^mpr native$"}}, {"T1gd", {"mpr.*\\bce\\b"}}};
  const auto chosen = matchSeriesToModalities(site, {"FLAIR", "T1w", "T1gd", "T2w"}, patterns);
  ASSERT_EQ(chosen.size(), 4u);
  EXPECT_EQ(chosen[0].description, "SAG 3D DARK FLUID");  // "flair" key, case-insensitive
  EXPECT_EQ(chosen[1].description, "MPR NATIVE");
  EXPECT_EQ(chosen[2].description, "MPR CE");
  EXPECT_EQ(chosen[3].description, "AX T2 TSE");  // no pattern: the built-in rule
  EXPECT_TRUE(seriesMatchesModality("Sag 3D Dark-Fluid", "FLAIR", patterns));
  // A modality with patterns uses only them: the built-in rule would take this one as T1gd.
  EXPECT_FALSE(seriesMatchesModality("AX T1 post Gd", "T1gd", patterns));

  try {
    matchSeriesToModalities(study({"MPR CE", "MPR CE REPEAT"}), {"T1gd"}, patterns);
    FAIL() << "two series matched one modality's pattern";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("2 series descriptions match the model's modality T1gd (by the model's series_patterns "
                     "'mpr.*\\bce\\b')"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("'MPR CE REPEAT'"), std::string::npos) << m;
  }
  EXPECT_THROW(seriesMatchesModality("AX FLAIR", "FLAIR", {{"FLAIR", {"(unclosed"}}}), InputError);
}

}  // namespace
}  // namespace medseg
