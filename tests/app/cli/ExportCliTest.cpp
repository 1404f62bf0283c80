// `medseg export`: a model `medseg train` just made, exported to TorchScript, segments a data set with
// `medseg infer` exactly as the checkpoint does; ONNX is refused with the Python way to get it; bad
// inputs are exit 3 and write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/io/ImageIO.h"
#include "support/TestSupport.h"
#include "support/TinyData.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json eventOfKind(const std::string& output, const std::string& event) {
  for (const auto& line : test::jsonLines(output))
    if (line.value("event", "") == event) return line;
  return json();
}

using test::tinyTestConfig;

// Sliding-window inference of every training case with probabilities, into `out`, in float32 (the
// default picks bf16 on CPUs that have it, whose rounding is far coarser than the 1e-5 compared here).
json inferTrainingCases(const fs::path& model, const fs::path& data, const fs::path& out,
                        std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--json", "infer", "--model", model.string(), "--input", data.string(), "--subset",
                                "training", "--out", out.string(), "--probabilities", "--precision", "fp32"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto run = test::runMedseg(args);
  EXPECT_EQ(run.exitCode, 0) << run.output;
  return eventOfKind(run.output, "result");
}

// Every mask in `expected` has a twin in `actual` with the same labels; probabilities within 1e-5.
void expectSameMasks(const fs::path& expected, const fs::path& actual) {
  int masks = 0;
  int64_t labelled = 0;  // identical all-background maps would show nothing
  for (const auto& entry : fs::directory_iterator(expected)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 7 || name.compare(name.size() - 7, 7, ".nii.gz") != 0) continue;
    const fs::path twin = actual / name;
    ASSERT_TRUE(fs::exists(twin)) << name;
    if (name.find("_probabilities") != std::string::npos) {
      const auto a = readImage(entry.path()), b = readImage(twin);
      ASSERT_EQ(a.data.size(), b.data.size()) << name;
      float largest = 0.0f;
      for (size_t i = 0; i < a.data.size(); ++i) largest = std::max(largest, std::abs(a.data[i] - b.data[i]));
      EXPECT_LE(largest, 1e-5f) << name;
    } else {
      const auto labels = readLabels(entry.path());
      EXPECT_EQ(labels.data, readLabels(twin).data) << name;
      labelled += std::count_if(labels.data.begin(), labels.data.end(), [](uint8_t v) { return v != 0; });
      ++masks;
    }
  }
  EXPECT_EQ(masks, 5);
  EXPECT_GT(labelled, 0);
}

TEST(ExportCli, ExportedTorchScriptSegmentsLikeTheCheckpoint) {
  test::ScratchDir dir("export-cli");
  test::writeTinyDataset(dir / "data", 5, 20);
  const auto train = test::runMedseg({"--json", "train", "--config", tinyTestConfig(), "--data", (dir / "data").string(),
                                      "--out", (dir / "run").string()});
  ASSERT_EQ(train.exitCode, 0) << train.output;
  const fs::path best = dir / "run" / "best.pt";
  ASSERT_TRUE(fs::exists(best));

  const auto exported = test::runMedseg({"--json", "export", "--model", best.string(), "--out", (dir / "model.pt").string()});
  ASSERT_EQ(exported.exitCode, 0) << exported.output;
  const json result = eventOfKind(exported.output, "result");
  EXPECT_EQ(result["kind"], "export");
  EXPECT_EQ(result["model"], (dir / "model.pt").string());
  EXPECT_EQ(result["sidecar"], (dir / "model.pt.json").string());
  EXPECT_LE(result["max_abs_difference"].get<double>(), 1e-5);
  EXPECT_TRUE(fs::exists(dir / "model.pt.json"));

  const json fromCheckpoint = inferTrainingCases(best, dir / "data", dir / "masks-checkpoint");
  const json fromExport = inferTrainingCases(dir / "model.pt", dir / "data", dir / "masks-torchscript");
  EXPECT_EQ(fromCheckpoint["model_kind"], "medseg");
  EXPECT_EQ(fromExport["model_kind"], "torchscript");
  EXPECT_EQ(fromExport["succeeded"], 5);
  // Frozen and optimised at load by default (the up-samplings of the tiny depth-2 U-Net on all
  // cores); --no-graph-optimisation runs the saved graph itself.
  EXPECT_EQ(fromCheckpoint["model_preparation"], "frozen and optimised for inference; 1 up-sampling on all cores");
  EXPECT_EQ(fromExport["model_preparation"], "frozen and optimised for inference; 1 up-sampling on all cores");
  const json asSaved = inferTrainingCases(dir / "model.pt", dir / "data", dir / "masks-as-loaded", {"--no-graph-optimisation"});
  EXPECT_EQ(asSaved["model_preparation"], "as saved (asked for)");
  EXPECT_EQ(asSaved["succeeded"], 5);
  for (const char* folder : {"masks-torchscript", "masks-as-loaded"}) {
    SCOPED_TRACE(folder);
    expectSameMasks(dir / "masks-checkpoint", dir / folder);
  }
}

TEST(ExportCli, OnnxIsRefusedWithThePythonWayToGetIt) {
  test::ScratchDir dir("export-cli-onnx");
  test::writeTinyDataset(dir / "data", 1, 16);  // only for a file that exists; never read as a model
  const auto human = test::runMedseg({"export", "--model", (dir / "best.pt").string(), "--out",
                                      (dir / "model.pt").string(), "--format", "onnx"});
  EXPECT_EQ(human.exitCode, 2) << human.output;
  EXPECT_NE(human.output.find("only in Python"), std::string::npos) << human.output;
  EXPECT_NE(human.output.find("torch.onnx.export(torch.jit.load("), std::string::npos) << human.output;
  const auto machine = test::runMedseg({"--json", "export", "--model", (dir / "best.pt").string(), "--out",
                                        (dir / "model.pt").string(), "--format", "onnx"});
  EXPECT_EQ(machine.exitCode, 2);
  EXPECT_EQ(eventOfKind(machine.output, "error")["exit_code"], 2) << machine.output;
  EXPECT_FALSE(fs::exists(dir / "model.pt"));
  // Bad input: not a checkpoint, a missing file; nothing is written.
  const fs::path image = dir / "data" / "imagesTr" / "TINY_100.nii.gz";
  EXPECT_EQ(test::runMedseg({"export", "--model", image.string(), "--out", (dir / "model.pt").string()}).exitCode, 3);
  EXPECT_EQ(test::runMedseg({"export", "--model", (dir / "none.pt").string(), "--out", (dir / "model.pt").string()})
                .exitCode, 3);
  EXPECT_EQ(test::runMedseg({"export", "--model", image.string()}).exitCode, 2);  // --out missing
  EXPECT_FALSE(fs::exists(dir / "model.pt"));
  EXPECT_FALSE(fs::exists(dir / "model.pt.json"));
}

}  // namespace
}  // namespace medseg
