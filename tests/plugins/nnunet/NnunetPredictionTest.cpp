// The nnunet plugin against nnU-Net v2.5.2's own predictions (tests/data/nnunet, made by nnUNetPredictor
// on these model folders and cases): probabilities within 1e-3 and the same segmentation wherever nnU-Net's
// decision is not a near tie, with and without mirroring, region- and label-based, PlainConvUNet and
// ResidualEncoderUNet, a case on the plans' grid (caseA), one resampled in and out (caseB) and an
// anisotropic one resampled separately along z (caseC), and the two-fold ensemble. Then the same through
// `medseg infer` as a user types it, a five-fold folder, and the model's refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/io/ImageIO.h"
#include "core/io/LabelTable.h"
#include "core/plugin/RunContext.h"
#include "core/util/Interrupt.h"
#include "core/util/Progress.h"
#include "plugins/nnunet/NnunetModelFolder.h"
#include "plugins/nnunet/NnunetSegmenter.h"
#include "support/TestSupport.h"

namespace medseg::nnunet {
namespace {

namespace fs = std::filesystem;

fs::path fixture(const std::string& relative) { return fs::path(MEDSEG_SOURCE_DIR) / "tests/data/nnunet" / relative; }

const std::string kRegionsPlain = "models/Dataset911_SynthBraTSRegions/nnUNetTrainer__nnUNetPlansSmall__3d_fullres";
const std::string kRegionsResEnc = "models/Dataset911_SynthBraTSRegions/nnUNetTrainer__nnUNetResEncSmall__3d_fullres";
const std::string kLabelsPlain = "models/Dataset912_SynthBraTSLabels/nnUNetTrainer__nnUNetPlansSmall__3d_fullres";

struct Run {
  std::string model;
  std::vector<int> folds;
  std::string predictions;  // predictions/<name>/
  bool mirror = true;
};

// How far nnU-Net's decision at a voxel is from changing: the gap between the two largest label
// probabilities, or for regions twice the closest region probability's distance to 0.5 (so that both
// read "differ by more than 1e-3").
float decisionMargin(const ImageVolume& p, size_t voxel, bool regions) {
  const size_t n = static_cast<size_t>(p.voxelsPerChannel());
  if (regions) {
    float closest = 1.0f;
    for (int64_t c = 0; c < p.channels; ++c) closest = std::min(closest, std::abs(p.data[c * n + voxel] - 0.5f));
    return 2 * closest;
  }
  float first = -1, second = -1;
  for (int64_t c = 0; c < p.channels; ++c) {
    const float v = p.data[c * n + voxel];
    if (v > first) second = std::exchange(first, v);
    else if (v > second) second = v;
  }
  return first - second;
}

struct Comparison {
  float maxProbabilityDifference = 0;
  int64_t differingLabels = 0;         // all voxels whose label differs from nnU-Net's
  int64_t differingDecisively = 0;     // of those, where the decision margin is over 1e-3
};

Comparison compare(const plugin::Segmentation& mine, const fs::path& folder, const std::string& id, bool regions) {
  Comparison result;
  const LabelVolume theirs = readLabels(folder / (id + ".nii.gz"));
  EXPECT_EQ(mine.labels.size, theirs.size) << id;
  EXPECT_TRUE(mine.labels.geometry.sameAs(theirs.geometry)) << id;
  const fs::path probabilityFile = folder / (id + "_probabilities.nii.gz");
  const bool haveTheirs = fs::exists(probabilityFile);
  // Where nnU-Net's probabilities were not kept, the margin is read from ours (within 1e-3 of theirs,
  // as the kept ones show), with that 1e-3 added.
  const ImageVolume reference = haveTheirs ? readImage(probabilityFile) : mine.probabilities;
  const float slack = haveTheirs ? 0.0f : 1e-3f;
  if (haveTheirs) {
    EXPECT_EQ(reference.channels, mine.probabilities.channels) << id;
    for (size_t i = 0; i < reference.data.size(); ++i)
      result.maxProbabilityDifference = std::max(result.maxProbabilityDifference, std::abs(reference.data[i] - mine.probabilities.data[i]));
  }
  for (size_t v = 0; v < theirs.data.size(); ++v) {
    if (theirs.data[v] == mine.labels.data[v]) continue;
    ++result.differingLabels;
    if (decisionMargin(reference, v, regions) > 1e-3f + slack) ++result.differingDecisively;
  }
  return result;
}

void expectMatchesNnunet(const Run& run) {
  plugin::InferenceSetup setup;
  setup.model = fixture(run.model);
  setup.parameters = {{"mirror", run.mirror}, {"folds", run.folds}};
  setup.probabilities = true;
  setup.threads = 2;
  NnunetSegmenter segmenter(setup);
  const bool regions = segmenter.describe()["targets"] == "regions";
  Reporter reporter;
  plugin::RunContext context(reporter);
  const fs::path folder = fixture("predictions/" + run.predictions + (run.mirror ? "/mirror" : "/nomirror"));
  for (const std::string id : {"caseA", "caseB", "caseC"}) {
    const ImageVolume image = readImage(fixture("cases/msd/" + id + ".nii.gz"));
    const plugin::Segmentation mine = segmenter.segment(image, {}, context);
    const Comparison c = compare(mine, folder, id, regions);
    EXPECT_LE(c.maxProbabilityDifference, 1e-3f) << run.predictions << " " << id;
    EXPECT_EQ(c.differingDecisively, 0) << run.predictions << " " << id << ": " << c.differingLabels << " labels differ";
    // nnU-Net's crop, from its own properties file.
    std::ifstream propertiesFile(folder / (id + "_properties.json"));
    const nlohmann::json properties = nlohmann::json::parse(propertiesFile);
    EXPECT_EQ(mine.details["bbox_used_for_cropping"], properties["bbox_used_for_cropping"]) << id;
    std::cout << run.predictions << (run.mirror ? " mirror " : " nomirror ") << id << ": max |p - p_nnU-Net| "
              << c.maxProbabilityDifference << ", labels differing " << c.differingLabels << " (near ties), "
              << mine.details["predict_seconds"].get<double>() << " s\n";
  }
}

TEST(NnunetPrediction, RegionModelWithoutMirroringGivesNnunetsProbabilities) {
  expectMatchesNnunet({kRegionsPlain, {0}, "911_plain_f0", false});
}

TEST(NnunetPrediction, RegionModelWithMirroringGivesNnunetsProbabilities) {
  expectMatchesNnunet({kRegionsPlain, {0}, "911_plain_f0", true});
}

TEST(NnunetPrediction, ResidualEncoderModelGivesNnunetsProbabilities) {
  expectMatchesNnunet({kRegionsResEnc, {0}, "911_resenc_f0", false});
  expectMatchesNnunet({kRegionsResEnc, {0}, "911_resenc_f0", true});
}

TEST(NnunetPrediction, LabelModelGivesNnunetsProbabilities) {
  expectMatchesNnunet({kLabelsPlain, {0}, "912_plain_f0", false});
  expectMatchesNnunet({kLabelsPlain, {0}, "912_plain_f0", true});
}

TEST(NnunetPrediction, TwoFoldEnsembleGivesNnunetsProbabilities) {
  expectMatchesNnunet({kLabelsPlain, {0, 1}, "912_plain_f0f1", false});
  expectMatchesNnunet({kLabelsPlain, {0, 1}, "912_plain_f0f1", true});
}

// The acceptance command, as a user types it: probabilities and mask written beside each other.
TEST(NnunetPrediction, MedsegInferWritesNnunetsMaskAndProbabilities) {
  test::ScratchDir dir("nnunet-infer-cli");
  const fs::path out = dir.path() / "m.nii.gz";
  const auto run = test::runMedseg({"infer", "--model", fixture(kRegionsPlain).string(), "--input",
                                    fixture("cases/msd/caseB.nii.gz").string(), "--out", out.string(), "--set",
                                    "mirror=false", "--probabilities"});
  ASSERT_EQ(run.exitCode, 0) << run.output;
  const ImageVolume mine = readImage(dir.path() / "m_probabilities.nii.gz");
  const ImageVolume theirs = readImage(fixture("predictions/911_plain_f0/nomirror/caseB_probabilities.nii.gz"));
  ASSERT_EQ(mine.data.size(), theirs.data.size());
  float worst = 0;
  for (size_t i = 0; i < mine.data.size(); ++i) worst = std::max(worst, std::abs(mine.data[i] - theirs.data[i]));
  EXPECT_LE(worst, 1e-3f);
  const LabelVolume mask = readLabels(out);
  EXPECT_TRUE(mask.geometry.sameAs(readLabels(fixture("predictions/911_plain_f0/nomirror/caseB.nii.gz")).geometry));
  // The region model's written labels are the BraTS parts, named so beside the mask.
  const auto table = findLabelTableFor(out);
  ASSERT_TRUE(table.has_value());
  EXPECT_EQ(table->entries.at(1).name, "edema");
  EXPECT_EQ(table->entries.at(3).name, "enhancing tumour");
  EXPECT_NE(run.output.find("1 of 1 case(s) segmented"), std::string::npos) << run.output;
}

// nnU-Net's raw layout (caseX_0000 .. _0003 in a folder) is grouped into cases, and all folds found.
TEST(NnunetPrediction, MedsegInferSegmentsAFolderOfRawCasesWithEveryFold) {
  test::ScratchDir dir("nnunet-infer-raw");
  const auto run = test::runMedseg({"--json", "infer", "--model", fixture(kLabelsPlain).string(), "--input",
                                    fixture("cases/raw").string(), "--out", (dir.path() / "masks").string(), "--set",
                                    "mirror=false"});
  ASSERT_EQ(run.exitCode, 0) << run.output;
  for (const std::string id : {"caseA", "caseB", "caseC"}) {
    const LabelVolume mine = readLabels(dir.path() / "masks" / (id + ".nii.gz"));
    const LabelVolume theirs = readLabels(fixture("predictions/912_plain_f0f1/nomirror/" + id + ".nii.gz"));
    int64_t differing = 0;
    for (size_t v = 0; v < mine.data.size(); ++v) differing += mine.data[v] != theirs.data[v];
    EXPECT_LE(differing, 5) << id;  // near ties only (the fixture counts at most 5 per case)
  }
  const nlohmann::json result = test::jsonLines(run.output).back();
  EXPECT_EQ(result["plugin"], "nnunet");
  EXPECT_EQ(result["model_details"]["nnunet"]["folds"], nlohmann::json({0, 1})) << result.dump();
}

// Five folds are ensembled as nnU-Net does (logits averaged): five copies of one fold give that fold.
TEST(NnunetPrediction, FiveFoldsOfOneNetworkGiveThatNetworksPrediction) {
  test::ScratchDir dir("nnunet-five-folds");
  const fs::path model = dir.path() / "model";
  fs::create_directories(model);
  for (const char* file : {"plans.json", "dataset.json"}) fs::copy_file(fixture(kLabelsPlain) / file, model / file);
  for (int fold = 0; fold < 5; ++fold) {
    fs::create_directories(model / ("fold_" + std::to_string(fold)));
    fs::copy_file(fixture(kLabelsPlain) / "fold_0/checkpoint_final.pth", model / ("fold_" + std::to_string(fold)) / "checkpoint_final.pth");
  }
  plugin::InferenceSetup setup;
  setup.model = model;
  setup.parameters = {{"mirror", false}};
  setup.probabilities = true;
  NnunetSegmenter five(setup);
  EXPECT_EQ(five.describe()["nnunet"]["folds"], nlohmann::json({0, 1, 2, 3, 4}));
  setup.parameters["folds"] = {0};
  NnunetSegmenter one(setup);
  Reporter reporter;
  plugin::RunContext context(reporter);
  const ImageVolume image = readImage(fixture("cases/msd/caseB.nii.gz"));
  const auto a = five.segment(image, {}, context), b = one.segment(image, {}, context);
  float worst = 0;
  for (size_t i = 0; i < a.probabilities.data.size(); ++i) worst = std::max(worst, std::abs(a.probabilities.data[i] - b.probabilities.data[i]));
  EXPECT_LE(worst, 2e-3f);  // float16 sums of five, as nnU-Net's
  const Comparison c = compare(a, fixture("predictions/912_plain_f0/nomirror"), "caseB", false);
  EXPECT_EQ(c.differingDecisively, 0);
}

TEST(NnunetModel, RefusesWhatItCannotRunByName) {
  test::ScratchDir dir("nnunet-refusals");
  const fs::path model = dir.path() / "model";
  fs::create_directories(model / "fold_0");
  fs::copy_file(fixture(kRegionsPlain) / "dataset.json", model / "dataset.json");
  fs::copy_file(fixture(kRegionsPlain) / "fold_0/checkpoint_final.pth", model / "fold_0/checkpoint_final.pth");
  std::ifstream in(fixture(kRegionsPlain) / "plans.json");
  nlohmann::json plans = nlohmann::json::parse(in);
  const auto write = [&](const nlohmann::json& p) { std::ofstream(model / "plans.json") << p.dump(1); };
  const auto refusal = [&](const nlohmann::json& parameters) -> std::string {
    plugin::InferenceSetup setup;
    setup.model = model;
    setup.parameters = parameters;
    try {
      NnunetSegmenter segmenter(setup);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  nlohmann::json cascade = plans;
  cascade["configurations"]["3d_cascade_fullres"] = {{"inherits_from", "3d_fullres"}, {"previous_stage", "3d_lowres"}};
  write(cascade);
  EXPECT_NE(refusal({{"configuration", "3d_cascade_fullres"}}).find("cascade"), std::string::npos);
  EXPECT_NE(refusal({{"configuration", "3d_nowhere"}}).find("3d_fullres"), std::string::npos);  // lists what there is
  EXPECT_NE(refusal({{"checkpoint", "best"}}).find("checkpoint_best.pth"), std::string::npos);
  nlohmann::json otherNetwork = plans;
  otherNetwork["configurations"]["3d_fullres"]["architecture"]["network_class_name"] = "my_lab.networks.FancyUNet";
  write(otherNetwork);
  EXPECT_NE(refusal({}).find("my_lab.networks.FancyUNet"), std::string::npos);
  nlohmann::json otherNorm = plans;
  otherNorm["configurations"]["3d_fullres"]["normalization_schemes"][1] = "MyNormalization";
  write(otherNorm);
  EXPECT_NE(refusal({}).find("MyNormalization"), std::string::npos);
  nlohmann::json reoriented = plans;
  reoriented["image_reader_writer"] = "NibabelIOWithReorient";
  write(reoriented);
  EXPECT_NE(refusal({}).find("NibabelIOWithReorient"), std::string::npos);
  // A configuration that inherits another runs as its parent does.
  nlohmann::json inherited = plans;
  inherited["configurations"]["3d_child"] = {{"inherits_from", "3d_fullres"}, {"patch_size", {32, 32, 32}}};
  write(inherited);
  EXPECT_EQ(readNnunetModelFolder(model).configuration("3d_child").patchSize, (std::vector<int64_t>{32, 32, 32}));
  EXPECT_EQ(readNnunetModelFolder(model).configuration("3d_child").spacing, (std::vector<double>{1, 1, 1}));
  // nnU-Net runs a checkpoint with the configuration it was trained for.
  EXPECT_NE(refusal({{"configuration", "3d_child"}}).find("trained for configuration \"3d_fullres\""), std::string::npos);
}

}  // namespace
}  // namespace medseg::nnunet
