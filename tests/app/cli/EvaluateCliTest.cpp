// `medseg evaluate` end to end: files written to a scratch folder, the real binary run on them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/io/ImageIO.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;

LabelVolume cubeLabels(Size3 size, int64_t shiftX, std::array<double, 3> spacing = {2.0, 1.0, 1.0}) {
  Geometry g;
  g.spacing = spacing;
  LabelVolume v(size, 1, g, 0);
  for (int64_t z = 4; z < 12; ++z)
    for (int64_t y = 4; y < 12; ++y)
      for (int64_t x = 4 + shiftX; x < 12 + shiftX; ++x) v.at(x, y, z) = 3;
  return v;
}

const nlohmann::json* findRegion(const nlohmann::json& event, const std::string& name) {
  for (const auto& r : event["regions"])
    if (r["region"] == name) return &r;
  return nullptr;
}

TEST(EvaluateCli, ScoresTwoFilesAsJson) {
  test::ScratchDir dir("cli-evaluate");
  writeLabels(cubeLabels({20, 16, 16}, 2), dir / "pred.nii.gz");
  writeLabels(cubeLabels({20, 16, 16}, 0), dir / "ref.nii.gz");
  const auto result = test::runMedseg({"--json", "evaluate", "--pred", (dir / "pred.nii.gz").string(), "--ref",
                                       (dir / "ref.nii.gz").string(), "--csv", (dir / "m.csv").string()});
  ASSERT_EQ(result.exitCode, 0) << result.output;
  const auto events = test::jsonLines(result.output);
  const nlohmann::json* caseEvent = nullptr;
  const nlohmann::json* summary = nullptr;
  for (const auto& e : events) {
    if (e.value("kind", "") == "evaluate-case") caseEvent = &e;
    if (e.value("kind", "") == "evaluate-summary") summary = &e;
  }
  ASSERT_NE(caseEvent, nullptr) << result.output;
  ASSERT_NE(summary, nullptr) << result.output;
  EXPECT_EQ((*caseEvent)["case"], "ref");
  const auto* et = findRegion(*caseEvent, "ET");
  ASSERT_NE(et, nullptr);
  EXPECT_NEAR((*et)["dice"].get<double>(), 0.75, 1e-9);
  EXPECT_NEAR((*et)["hd95_mm"].get<double>(), 4.0, 1e-9);  // 2 voxels x 2 mm
  EXPECT_NEAR((*et)["reference_ml"].get<double>(), 512 * 2.0 / 1000, 1e-9);
  EXPECT_TRUE((*findRegion(*caseEvent, "edema"))["hd95_mm"].is_number());  // both empty: 0
  EXPECT_EQ((*summary)["cases"], 1);
  EXPECT_EQ((*summary)["failed"], 0);
  const std::string csv = readTextFile(dir / "m.csv");
  EXPECT_NE(csv.find("ref,ET,0.750000,4.0000"), std::string::npos) << csv;
}

TEST(EvaluateCli, GridMismatchIsBadInput) {
  test::ScratchDir dir("cli-evaluate-mismatch");
  writeLabels(cubeLabels({20, 16, 16}, 0), dir / "pred.nii.gz");
  writeLabels(cubeLabels({20, 16, 17}, 0), dir / "ref.nii.gz");
  const auto result = test::runMedseg({"evaluate", "--pred", (dir / "pred.nii.gz").string(), "--ref",
                                       (dir / "ref.nii.gz").string()});
  EXPECT_EQ(result.exitCode, 3) << result.output;
  EXPECT_NE(result.output.find("differs from reference grid"), std::string::npos) << result.output;
  const auto missing = test::runMedseg({"evaluate", "--pred", (dir / "absent.nii.gz").string(), "--ref",
                                        (dir / "ref.nii.gz").string()});
  EXPECT_EQ(missing.exitCode, 3) << missing.output;
}

TEST(EvaluateCli, FoldersAreMatchedByCaseNameAndUnmatchedReported) {
  test::ScratchDir dir("cli-evaluate-folders");
  for (const char* id : {"case_a", "case_b"}) {
    writeLabels(cubeLabels({20, 16, 16}, 1), dir / "pred" / (std::string(id) + ".nii.gz"));
    writeLabels(cubeLabels({20, 16, 16}, 0), dir / "ref" / (std::string(id) + ".nii.gz"));
  }
  const auto ok = test::runMedseg({"evaluate", "--pred", (dir / "pred").string(), "--ref", (dir / "ref").string()});
  EXPECT_EQ(ok.exitCode, 0) << ok.output;
  EXPECT_NE(ok.output.find("Case case_b"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("Mean ± sd over 2 cases"), std::string::npos) << ok.output;

  writeLabels(cubeLabels({20, 16, 16}, 0), dir / "ref" / "case_c.nii.gz");
  const auto partial =
      test::runMedseg({"--json", "evaluate", "--pred", (dir / "pred").string(), "--ref", (dir / "ref").string()});
  EXPECT_EQ(partial.exitCode, 3) << partial.output;
  int cases = 0, errors = 0;
  for (const auto& e : test::jsonLines(partial.output)) {
    cases += e.value("kind", "") == "evaluate-case";
    errors += e.value("event", "") == "error" && e.value("case", "") == "case_c";
  }
  EXPECT_EQ(cases, 2);
  EXPECT_EQ(errors, 1);
}

}  // namespace
}  // namespace medseg
