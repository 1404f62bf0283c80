// Corrections back into training (issue #29): a model trained on synthetic cases segments two new
// cases; their masks are corrected by scripted edits (core/edit, as the studio's tools make them),
// the corrected cases join a training set (core/dataset/AddTrainingCase), and `medseg train --init`
// fine-tunes the model on them: its whole-tumour Dice on those two cases rises. The numbers are printed.
#include <gtest/gtest.h>

#include <iostream>

#include <nlohmann/json.hpp>

#include "core/dataset/AddTrainingCase.h"
#include "core/edit/EditRules.h"
#include "core/io/ImageIO.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

double wholeTumourDice(const fs::path& predicted, const fs::path& reference) {
  const auto run = test::runMedseg({"--json", "evaluate", "--pred", predicted.string(), "--ref", reference.string()});
  EXPECT_EQ(run.exitCode, 0) << run.output;
  for (const json& event : test::jsonLines(run.output))
    if (event.value("kind", "") == "evaluate-case")
      for (const json& region : event.at("regions"))
        if (region.at("region") == "WT") return region.at("dice").get<double>();
  ADD_FAILURE() << "no WT Dice in " << run.output;
  return -1.0;
}

// The edits a person would make: every voxel the prediction got wrong painted with the reference's
// label or erased, under the editing rules (nothing locked).
LabelVolume correctedByScriptedEdits(LabelVolume predicted, const LabelVolume& reference) {
  LabelEditBuilder edit(predicted, {});
  for (int64_t z = 0; z < predicted.size[2]; ++z)
    for (int64_t y = 0; y < predicted.size[1]; ++y)
      for (int64_t x = 0; x < predicted.size[0]; ++x) {
        const uint8_t want = reference.at(x, y, z);
        if (predicted.at(x, y, z) == want) continue;
        if (want) edit.set(x, y, z, want);
        else edit.clear(x, y, z, 0);
      }
  const LabelEdit done = edit.finish("scripted correction");
  EXPECT_GT(done.voxels(), 0u) << "the prediction was already perfect: nothing to correct";
  return predicted;
}

TEST(FineTuneCli, DiceOnCorrectedCasesRisesAfterTrainInit) {
  test::ScratchDir dir("fine-tune");
  const fs::path data = dir / "data", fresh = dir / "fresh", corrected = dir / "corrected";
  for (const auto& [out, seed, cases] : {std::tuple{data, "3", "6"}, std::tuple{fresh, "11", "2"}})
    ASSERT_EQ(test::runMedseg({"dataset", "synth", "--out", out.string(), "--cases", cases, "--seed", seed, "--size", "32"}).exitCode, 0);
  json config = {{"seed", 1},        {"threads", 2},     {"targets", "regions"}, {"patch_size", {32, 32, 32}},
                 {"batch_size", 2},  {"epochs", 2},      {"steps_per_epoch", 10},
                 {"network", {{"depth", 3}, {"base_filters", 8}, {"deep_supervision", false}}},
                 {"optimizer", {{"name", "adam"}, {"lr", 3e-3}}},
                 {"validation", {{"cases", 1}}},
                 {"loader", {{"workers", 0}}}};
  writeFileAtomically(dir / "train.json", config.dump(2));
  const auto trained = test::runMedseg({"train", "--config", (dir / "train.json").string(), "--data", data.string(), "--out",
                                        (dir / "base").string()});
  ASSERT_EQ(trained.exitCode, 0) << trained.output;

  // The base model on the two new cases, their corrected masks into a training set of their own.
  std::vector<std::string> ids{"BRATS_001", "BRATS_002"};
  double before = 0.0;
  for (const auto& id : ids) {
    const fs::path image = fresh / "imagesTr" / (id + ".nii.gz"), reference = fresh / "labelsTr" / (id + ".nii.gz");
    const fs::path mask = dir / (id + "-base.nii.gz");
    const auto infer = test::runMedseg({"infer", "--model", (dir / "base" / "best.pt").string(), "--input", image.string(),
                                        "--out", mask.string(), "--precision", "fp32"});
    ASSERT_EQ(infer.exitCode, 0) << infer.output;
    before += wholeTumourDice(mask, reference) / ids.size();
    const ImageVolume volume = readImage(image);
    const LabelVolume fixedMask = correctedByScriptedEdits(readLabels(mask), readLabels(reference));
    NewTrainingCase c;
    c.id = id;
    c.image = &volume;
    c.labels = &fixedMask;
    c.modalities = {"FLAIR", "T1w", "T1gd", "T2w"};
    c.labelNames = {{1, "edema"}, {2, "non-enhancing tumour"}, {3, "enhancing tumour"}};
    c.provenance = {{"corrected", true}, {"source", {{"model", (dir / "base" / "best.pt").string()}}}};
    addTrainingCase(corrected, c);
  }

  // Fine-tuning from the base model's weights on the corrected cases.
  json fineTune = config;
  fineTune["epochs"] = 3;
  fineTune["validation"] = {{"cases", 1}};
  writeFileAtomically(dir / "fine-tune.json", fineTune.dump(2));
  const auto tuned = test::runMedseg({"--json", "train", "--config", (dir / "fine-tune.json").string(), "--data",
                                      corrected.string(), "--out", (dir / "tuned").string(), "--init",
                                      (dir / "base" / "best.pt").string()});
  ASSERT_EQ(tuned.exitCode, 0) << tuned.output;
  EXPECT_NE(test::runMedseg({"train", "--config", (dir / "fine-tune.json").string(), "--data", corrected.string(), "--out",
                             (dir / "wrong").string(), "--init", (dir / "base" / "best.pt").string(), "--set",
                             "network.base_filters=4"})
                .output.find("holds a network"),
            std::string::npos)
      << "a model of another network is refused";
  double after = 0.0;
  for (const auto& id : ids) {
    const fs::path mask = dir / (id + "-tuned.nii.gz");
    const auto infer = test::runMedseg({"infer", "--model", (dir / "tuned" / "model.pt").string(), "--input",
                                        (fresh / "imagesTr" / (id + ".nii.gz")).string(), "--out", mask.string(),
                                        "--precision", "fp32"});
    ASSERT_EQ(infer.exitCode, 0) << infer.output;
    after += wholeTumourDice(mask, fresh / "labelsTr" / (id + ".nii.gz")) / ids.size();
  }
  std::cout << "whole-tumour Dice on the two corrected cases: " << before << " before fine-tuning, " << after
            << " after `medseg train --init`\n";
  EXPECT_GT(after, before);
}

}  // namespace
}  // namespace medseg
