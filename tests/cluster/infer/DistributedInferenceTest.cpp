// `medseg submit --mode infer`: a data set segmented by 2 MPI ranks with a tiny trained model. Every
// returned mask is byte-identical to what `medseg infer` writes for that case alone, metrics.csv is
// what `medseg evaluate` writes, each rank logged its device, and a run killed mid-way and resumed
// segments only the cases still missing.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "cluster/parallel/MpiTestSupport.h"
#include "cluster/submit/Process.h"
#include "cluster/submit/RunDirectory.h"
#include "core/io/ImageIO.h"
#include "core/util/AtomicFile.h"
#include "support/SharedSuite.h"
#include "support/ProcessTable.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using test::tinyTestConfig;

// The CPU threads a worker rank uses when 2 ranks share this machine (medseg-worker's default).
std::string workerThreads() { return std::to_string(std::max(1u, std::thread::hardware_concurrency() / 2)); }

std::vector<json> lines(const fs::path& file) {
  std::vector<json> out;
  std::istringstream in(readTextFile(file));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

// The masks (<case>.nii.gz; the label tables written beside them are not counted), temporaries left out.
std::set<std::string> maskNames(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) {
    const std::string name = e.path().filename().string();
    if (name.front() != '.' && name.size() > 7 && name.compare(name.size() - 7, 7, ".nii.gz") == 0) names.insert(name);
  }
  return names;
}

// Set up in the first test that runs, not in SetUpTestSuite (whose failure ctest would count as a
// skip): tests/support/SharedSuite.h.
test::SharedSuite<> distributedInferenceSuite;

class DistributedInference : public ::testing::Test {
 protected:
  static void prepare() {
    scratch_ = new test::ScratchDir("distributed-infer");
    test_support::allowMpiAsRoot();
    const auto data = *scratch_ / "train-data";
    ASSERT_EQ(test::runMedseg({"dataset", "synth", "--out", data.string(), "--cases", "3", "--seed", "1", "--size", "32"}).exitCode, 0);
    const auto trained = test::runMedseg({"train", "--config", tinyTestConfig(), "--data", data.string(), "--out", (*scratch_ / "model").string()});
    ASSERT_EQ(trained.exitCode, 0) << trained.output;
    model_ = *scratch_ / "model" / "best.pt";
    ASSERT_TRUE(fs::exists(model_)) << trained.output;
  }
  void SetUp() override { ASSERT_TRUE(distributedInferenceSuite.prepareOnce(prepare)) << distributedInferenceSuite.failure(); }
  static void TearDownTestSuite() {
    distributedInferenceSuite.reset();
    delete scratch_;
    scratch_ = nullptr;
  }
  static test::ScratchDir* scratch_;
  static fs::path model_;
};
test::ScratchDir* DistributedInference::scratch_ = nullptr;
fs::path DistributedInference::model_;

TEST_F(DistributedInference, MasksMatchMedsegInferAndMetricsMatchMedsegEvaluate) {
  const auto data = *scratch_ / "train-data";
  const auto root = *scratch_ / "runs";
  const auto submitted = test::runMedseg({"submit", "--backend", "local", "--mode", "infer", "-n", "2", "--model", model_.string(),
                                          "--data", data.string(), "--subset", "training", "--run-dir", root.string(),
                                          "--name", "infer", "--wait"});
  const fs::path run = root / "infer";
  ASSERT_EQ(submitted.exitCode, 0) << submitted.output << readTextFile(run / "logs" / "launcher.err");
  EXPECT_EQ(RunDirectory::open(run).state(), RunState::Finished);
  // The ranks segmented through the plugin road: the checkpoint chose unet3d.
  EXPECT_EQ(json::parse(readTextFile(run / "metrics.json"))["plugin"], "unet3d");

  // One mask per case, each the bytes `medseg infer` writes for that case alone.
  const auto names = maskNames(run / "masks");
  ASSERT_EQ(names, (std::set<std::string>{"BRATS_001.nii.gz", "BRATS_002.nii.gz", "BRATS_003.nii.gz"}));
  for (const auto& name : names) {
    const fs::path alone = *scratch_ / ("alone-" + name);
    const auto infer = test::runMedseg({"infer", "--model", model_.string(), "--input", (data / "imagesTr" / name).string(),
                                        "--out", (alone / name).string(), "--threads", workerThreads()});
    ASSERT_EQ(infer.exitCode, 0) << infer.output;
    // The mask and whatever the writer puts beside it (label tables), byte for byte.
    size_t compared = 0;
    for (const auto& written : fs::directory_iterator(alone)) {
      const fs::path returned = run / "masks" / written.path().filename();
      ASSERT_TRUE(fs::exists(returned)) << returned;
      EXPECT_TRUE(readTextFile(returned) == readTextFile(written.path())) << returned << " differs from medseg infer's";
      ++compared;
    }
    EXPECT_GE(compared, 1u);
  }

  // metrics.csv is `medseg evaluate`'s CSV of the same masks against the data set's labels.
  const fs::path csv = *scratch_ / "evaluate.csv";
  const auto evaluate = test::runMedseg({"evaluate", "--pred", (run / "masks").string(), "--ref", (data / "labelsTr").string(),
                                         "--csv", csv.string()});
  ASSERT_EQ(evaluate.exitCode, 0) << evaluate.output;
  EXPECT_EQ(readTextFile(run / "metrics.csv"), readTextFile(csv));

  // Both ranks logged their device; both segmented; progress has one JSON line per case.
  const auto placement = lines(run / "logs" / "placement.jsonl");
  ASSERT_EQ(placement.size(), 2u);
  std::set<int> ranks;
  for (const auto& p : placement) {
    ranks.insert(p["rank"].get<int>());
    EXPECT_EQ(p["device"], "cpu");
    EXPECT_EQ(p["local_size"], 2);
    EXPECT_NE(p["message"].get<std::string>().find("cpu"), std::string::npos);
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1}));
  const auto progress = lines(run / "progress.jsonl");
  ASSERT_EQ(progress.size(), 3u);
  for (const auto& p : progress) {
    EXPECT_EQ(p["status"], "ok");
    EXPECT_EQ(p["device"], "cpu");
    EXPECT_TRUE(fs::exists(p["output"].get<std::string>()));
  }

  // `medseg runs show` lists the masks with their metrics.
  const auto shown = test::runMedseg({"--json", "runs", "--run-dir", root.string(), "show", "infer"});
  ASSERT_EQ(shown.exitCode, 0) << shown.output;
  const json result = test::jsonLines(shown.output).back();
  ASSERT_EQ(result["masks"].size(), 3u) << shown.output;
  EXPECT_EQ(result["masks"][0]["case"], "BRATS_001");
  EXPECT_EQ(result["masks"][0]["images"][0], (data / "imagesTr" / "BRATS_001.nii.gz").string());
  EXPECT_EQ(result["masks"][0]["metrics"]["regions"].size(), 6u);  // 3 labels + WT, TC, ET
  EXPECT_EQ(result["metrics"]["segmented"], 3);
  EXPECT_EQ(result["metrics"]["scored"], 3);
  const auto human = test::runMedseg({"runs", "--run-dir", root.string(), "show", "infer"});
  EXPECT_NE(human.output.find("masks    3\n  BRATS_001"), std::string::npos) << human.output;
  EXPECT_NE(human.output.find(" WT "), std::string::npos) << human.output;
}

// A cohort segmented on 2 ranks with an nnU-Net trained-model folder (tests/data/nnunet, made by nnU-Net
// v2.5.2): the folder picks the nnunet plugin, and each mask is nnU-Net's own but for near ties.
TEST_F(DistributedInference, NnunetModelFolderSegmentsACohortOnTwoRanks) {
  const fs::path fixtures = fs::path(MEDSEG_SOURCE_DIR) / "tests/data/nnunet";
  const fs::path data = *scratch_ / "nnunet-cohort";
  fs::create_directories(data / "imagesTr");
  fs::create_directories(data / "labelsTr");
  for (const std::string id : {"caseA", "caseB", "caseC"}) {
    for (int c = 0; c < 4; ++c) {
      const std::string file = id + "_000" + std::to_string(c) + ".nii.gz";
      fs::copy_file(fixtures / "cases/raw" / file, data / "imagesTr" / file);
    }
    fs::copy_file(fixtures / "cases/labels" / (id + ".nii.gz"), data / "labelsTr" / (id + ".nii.gz"));
  }
  std::ofstream(data / "dataset.json") << json{{"channel_names", {{"0", "FLAIR"}, {"1", "T1w"}, {"2", "t1gd"}, {"3", "T2w"}}},
                                               {"labels", {{"background", 0}, {"edema", 1}, {"non-enhancing tumor", 2}, {"enhancing tumor", 3}}},
                                               {"numTraining", 3},
                                               {"file_ending", ".nii.gz"}}
                                                  .dump(1);
  const fs::path model = fixtures / "models/Dataset912_SynthBraTSLabels/nnUNetTrainer__nnUNetPlansSmall__3d_fullres";
  const auto root = *scratch_ / "runs";
  const auto submitted = test::runMedseg({"submit", "--backend", "local", "--mode", "infer", "-n", "2", "--model", model.string(),
                                          "--data", data.string(), "--subset", "training", "--run-dir", root.string(),
                                          "--name", "nnunet", "--wait"});
  const fs::path run = root / "nnunet";
  ASSERT_EQ(submitted.exitCode, 0) << submitted.output << readTextFile(run / "logs" / "launcher.err");
  EXPECT_EQ(json::parse(readTextFile(run / "metrics.json"))["plugin"], "nnunet");
  EXPECT_EQ(maskNames(run / "masks"), (std::set<std::string>{"caseA.nii.gz", "caseB.nii.gz", "caseC.nii.gz"}));
  for (const std::string id : {"caseA", "caseB", "caseC"}) {
    const LabelVolume mine = readLabels(run / "masks" / (id + ".nii.gz"));
    const LabelVolume theirs = readLabels(fixtures / "predictions/912_plain_f0f1/mirror" / (id + ".nii.gz"));
    ASSERT_EQ(mine.data.size(), theirs.data.size()) << id;
    int64_t differing = 0;
    for (size_t v = 0; v < mine.data.size(); ++v) differing += mine.data[v] != theirs.data[v];
    EXPECT_LE(differing, 5) << id << ": near ties only";
  }
  const std::set<int> ranks = [&] {
    std::set<int> seen;
    for (const auto& p : lines(run / "progress.jsonl")) seen.insert(p.value("rank", -1));
    return seen;
  }();
  EXPECT_EQ(ranks.size(), 2u) << "both ranks segmented";
}

TEST_F(DistributedInference, KilledRunResumedSegmentsOnlyTheMissingCases) {
  const auto data = *scratch_ / "cohort";
  ASSERT_EQ(test::runMedseg({"dataset", "synth", "--out", data.string(), "--cases", "6", "--test-cases", "1", "--seed", "2",
                             "--size", "48"}).exitCode, 0);
  const auto root = *scratch_ / "resume-runs";
  const fs::path run = root / "cohort";
  const auto started = test::runMedseg({"submit", "--backend", "local", "--mode", "infer", "-n", "2", "--model", model_.string(),
                                        "--data", data.string(), "--subset", "all", "--run-dir", root.string(), "--name",
                                        "cohort"});
  ASSERT_EQ(started.exitCode, 0) << started.output;
  const pid_t launcher = RunDirectory::open(run).stateDocument().value("pid", 0);
  ASSERT_GT(launcher, 0);
  // Kill mpirun and both ranks as soon as the first mask has arrived.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  while (maskNames(run / "masks").empty() && std::chrono::steady_clock::now() < deadline && isProcessAlive(launcher))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(-launcher, SIGKILL);
  while (isProcessAlive(launcher)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // A rank outlives mpirun for a moment (it notices the lost launcher at its next message) and may
  // still finish the mask in hand: count the masks once no process of this run is left.
  const auto rankOfThisRun = [&] {
    for (const auto& process : test::listProcesses())
      if (process.hasArgument(run.string())) return true;
    return false;
  };
  while (rankOfThisRun() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_FALSE(rankOfThisRun()) << "a rank of the killed run is still running";
  const auto before = maskNames(run / "masks");
  ASSERT_GE(before.size(), 1u) << readTextFile(run / "logs" / "launcher.err");
  ASSERT_LT(before.size(), 7u) << "the run ended before it could be killed mid-way";
  std::map<std::string, ino_t> inodes;
  for (const auto& name : before) {
    struct stat info{};
    ASSERT_EQ(::stat((run / "masks" / name).c_str(), &info), 0);
    inodes[name] = info.st_ino;
  }
  const size_t recordedBefore = fs::exists(run / "progress.jsonl") ? lines(run / "progress.jsonl").size() : 0;

  // `medseg runs` notices the dead launcher; --resume submits the run again in its folder.
  ASSERT_EQ(test::runMedseg({"runs", "--run-dir", root.string()}).exitCode, 0);
  EXPECT_EQ(RunDirectory::open(run).state(), RunState::Failed);
  const auto resumed = test::runMedseg({"submit", "--run-dir", root.string(), "--resume", "cohort", "--wait"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output << readTextFile(run / "logs" / "launcher.err");

  EXPECT_EQ(maskNames(run / "masks").size(), 7u);  // 6 training + 1 test case
  for (const auto& [name, inode] : inodes) {       // the earlier masks were not written again
    struct stat info{};
    ASSERT_EQ(::stat((run / "masks" / name).c_str(), &info), 0);
    EXPECT_EQ(info.st_ino, inode) << name << " was segmented again";
  }
  const auto progress = lines(run / "progress.jsonl");
  std::set<std::string> again;
  for (size_t i = recordedBefore; i < progress.size(); ++i) {
    EXPECT_EQ(progress[i]["status"], "ok");
    again.insert(progress[i]["case"].get<std::string>() + ".nii.gz");
  }
  EXPECT_EQ(again.size() + before.size(), 7u);
  for (const auto& name : before) EXPECT_EQ(again.count(name), 0u) << name << " was segmented again";
  const auto metrics = json::parse(readTextFile(run / "metrics.json"));
  EXPECT_EQ(metrics["present"], before.size());
  EXPECT_EQ(metrics["segmented"], 7 - before.size());
  EXPECT_EQ(metrics["scored"], 6);  // the test case has no reference
  EXPECT_FALSE(readTextFile(run / "metrics.csv").empty());
}

}  // namespace
}  // namespace medseg::cluster
