// Malformed input, one row each, through the real `medseg` program: every row must end with a
// non-zero exit code (1 when `dataset check` reports findings, 3 for unusable input), a message
// naming the problem, and no output left behind: the scratch folder holds exactly the same files
// before and after the command (no --out file or folder, no temporary file, no empty run folder).
#include <gtest/gtest.h>

#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "core/dataset/TinyDatasets.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"
#include "support/ModelFileChecks.h"
#include "support/TinyModels.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

// ---- building blocks ---------------------------------------------------------------------------

// A NIfTI-1 file by hand, so a header can say what no writer would (zero, negative or huge sizes).
std::string niftiBytes(std::array<int16_t, 4> size, int16_t datatype, int16_t bitsPerVoxel,
                       std::array<float, 3> spacing, const std::string& payload) {
  std::string bytes(352, '\0');
  const int32_t headerSize = 348;
  std::memcpy(&bytes[0], &headerSize, 4);
  const int16_t rank = size[3] > 1 ? 4 : 3;
  const int16_t dims[8] = {rank, size[0], size[1], size[2], size[3], 1, 1, 1};
  std::memcpy(&bytes[40], dims, sizeof dims);
  std::memcpy(&bytes[70], &datatype, 2);
  std::memcpy(&bytes[72], &bitsPerVoxel, 2);
  const float pixdim[8] = {1, spacing[0], spacing[1], spacing[2], 1, 1, 1, 1};
  std::memcpy(&bytes[76], pixdim, sizeof pixdim);
  const float offset = 352, slope = 1;
  std::memcpy(&bytes[108], &offset, 4);
  std::memcpy(&bytes[112], &slope, 4);
  std::memcpy(&bytes[344], "n+1\0", 4);
  return bytes + payload;
}

void writeGzip(const fs::path& file, const std::string& bytes) {
  fs::create_directories(file.parent_path());
  gzFile out = gzopen(file.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(out);
}

std::string floats(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

// Case 1 of a two-case tiny MSD data set (8x8x6 voxels, 2 channels) is where rows plant their fault.
fs::path tinyDataset(const fs::path& dir, int cases = 2) {
  const fs::path root = dir / "data";
  test::makeMsdDataset(root, cases, 0);
  return root;
}

fs::path image1(const fs::path& root) { return root / "imagesTr" / "case_001.nii.gz"; }
fs::path label1(const fs::path& root) { return root / "labelsTr" / "case_001.nii.gz"; }

void editDatasetJson(const fs::path& root, const std::function<void(json&)>& edit) {
  json doc = test::msdDatasetJson(2, 0);
  edit(doc);
  test::writeText(root / "dataset.json", doc.dump(2));
}

fs::path writeConfig(const fs::path& dir, const std::string& text, const std::string& name = "train.yaml") {
  writeFileAtomically(dir / name, text);
  return dir / name;
}

// A real (untrained) MedSeg model for two-channel input: what `medseg train` would write as best.pt.
fs::path tinyModel(const fs::path& dir) {
  const ModelDescription d = test::tinyRegionsDescription({"FLAIR", "T1w"}, 8);
  test::writeUntrainedModel(dir / "best.pt", d);
  return dir / "best.pt";
}

std::vector<std::string> check(const fs::path& root) { return {"dataset", "check", root.string()}; }

std::vector<std::string> train(const fs::path& dir, const fs::path& config, const fs::path& data) {
  return {"train", "--config", config.string(), "--data", data.string(), "--out", (dir / "run").string()};
}

std::vector<std::string> infer(const fs::path& dir, const fs::path& model, const fs::path& input) {
  return {"infer", "--model", model.string(), "--input", input.string(), "--out", (dir / "out" / "mask.nii.gz").string()};
}

std::vector<std::string> evaluate(const fs::path& dir, const fs::path& pred, const fs::path& ref) {
  return {"evaluate", "--pred", pred.string(), "--ref", ref.string(), "--csv", (dir / "scores.csv").string()};
}

// ---- the table -----------------------------------------------------------------------------------

struct Row {
  std::string name;
  std::function<std::vector<std::string>(const fs::path& dir)> setUp;  // plants the fault, returns argv
  int exitCode;
  std::string phrase;        // the message must contain this
  bool unprivileged = false;  // permission rows run as "nobody" under root, who reads everything
};

const std::vector<Row>& rows() {
  static const std::vector<Row> table{
      // dataset.json itself: unusable, exit 3
      {"InvalidJson", [](const fs::path& d) { auto r = tinyDataset(d); test::writeText(r / "dataset.json", "{\"name\": \"x\",, }"); return check(r); },
       3, "is not valid JSON: line 1"},
      {"EmptyDatasetJson", [](const fs::path& d) { auto r = tinyDataset(d); test::writeText(r / "dataset.json", ""); return check(r); },
       3, "is not valid JSON"},
      {"DatasetJsonIsAFolder", [](const fs::path& d) { auto r = tinyDataset(d); fs::remove(r / "dataset.json"); fs::create_directory(r / "dataset.json"); return check(r); },
       3, "is a directory"},
      {"DatasetJsonNeverEnds", [](const fs::path& d) { auto r = tinyDataset(d); fs::remove(r / "dataset.json"); fs::create_symlink("/dev/zero", r / "dataset.json"); return check(r); },
       3, "holds more than"},
      {"NoDatasetJson", [](const fs::path& d) { auto r = tinyDataset(d); fs::remove(r / "dataset.json"); return check(r); },
       3, "no dataset.json"},
      {"DatasetFolderIsAFile", [](const fs::path& d) { test::writeText(d / "data", "x"); return check(d / "data"); },
       3, "not a folder"},
      {"PathClimbsOutWithDotDot", [](const fs::path& d) { auto r = tinyDataset(d); editDatasetJson(r, [](json& j) { j["training"][1]["image"] = "./imagesTr/../../../etc/passwd"; }); return check(r); },
       3, "climbs above the data-set folder"},
      {"AbsolutePath", [](const fs::path& d) { auto r = tinyDataset(d); editDatasetJson(r, [](json& j) { j["training"][0]["label"] = "/etc/passwd"; }); return check(r); },
       3, "is absolute"},
      {"SymlinkEscapesTheDataset", [](const fs::path& d) {
         auto r = tinyDataset(d);
         fs::create_directories(d / "elsewhere");
         fs::copy_file(image1(r), d / "elsewhere" / "case_001.nii.gz");
         fs::remove_all(r / "imagesTr");
         fs::create_directory_symlink(d / "elsewhere", r / "imagesTr");
         return check(r); },
       3, "through a symbolic link"},
      {"WrongTypeInDatasetJson", [](const fs::path& d) { auto r = tinyDataset(d); editDatasetJson(r, [](json& j) { j["numTraining"] = "two"; }); return check(r); },
       3, "numTraining must be an integer"},
      {"UnknownModalityKey", [](const fs::path& d) { auto r = tinyDataset(d); editDatasetJson(r, [](json& j) { j["modality"] = {{"FLAIR", "0"}}; }); return check(r); },
       3, "is not a channel number"},
      {"ModalityMapSkipsAChannel", [](const fs::path& d) { auto r = tinyDataset(d); editDatasetJson(r, [](json& j) { j["modality"] = {{"0", "FLAIR"}, {"2", "T1w"}}; }); return check(r); },
       3, "channel 1 is missing"},
      {"LabelsWithoutBackground", [](const fs::path& d) { auto r = tinyDataset(d); editDatasetJson(r, [](json& j) { j["labels"].erase("0"); }); return check(r); },
       3, "must include the background value 0"},
      {"DuplicateCase", [](const fs::path& d) { auto r = tinyDataset(d); editDatasetJson(r, [](json& j) { j["training"][1] = j["training"][0]; }); return check(r); },
       3, "more than once"},
      {"DatasetInfoOnBrokenJson", [](const fs::path& d) { auto r = tinyDataset(d); test::writeText(r / "dataset.json", "[1, 2"); return std::vector<std::string>{"dataset", "info", r.string()}; },
       3, "is not valid JSON"},
      // the files a valid dataset.json names: findings, exit 1
      {"EmptyDataset", [](const fs::path& d) { auto r = tinyDataset(d); editDatasetJson(r, [](json& j) { j["training"] = json::array(); j["numTraining"] = 0; }); return check(r); },
       1, "no-training-cases"},
      {"TruncatedGzip", [](const fs::path& d) { auto r = tinyDataset(d); const auto bytes = readTextFile(image1(r)); fs::resize_file(image1(r), bytes.size() / 2); return check(r); },
       1, "truncated"},
      {"GarbageBytesNamedNiiGz", [](const fs::path& d) { auto r = tinyDataset(d); test::writeText(image1(r), std::string(4096, '\x5a') + "garbage"); return check(r); },
       1, "not a NIfTI file"},
      {"EmptyImageFile", [](const fs::path& d) { auto r = tinyDataset(d); test::writeText(image1(r), ""); return check(r); },
       1, "file is empty"},
      {"FolderInsteadOfImage", [](const fs::path& d) { auto r = tinyDataset(d); fs::remove(image1(r)); fs::create_directory(image1(r)); return check(r); },
       1, "is a folder without a DICOM series"},
      {"ZeroSizedAxis", [](const fs::path& d) { auto r = tinyDataset(d); writeGzip(image1(r), niftiBytes({8, 0, 6, 2}, 16, 32, {1, 1, 1}, "")); return check(r); },
       1, "size 0 along y"},
      {"NegativeSize", [](const fs::path& d) { auto r = tinyDataset(d); writeGzip(image1(r), niftiBytes({8, -8, 6, 2}, 16, 32, {1, 1, 1}, floats(std::vector<float>(768, 1.f)))); return check(r); },
       1, "negative size (-8) along y"},
      {"HeaderDeclaresTeraVoxels", [](const fs::path& d) { auto r = tinyDataset(d); writeGzip(image1(r), niftiBytes({10000, 10000, 10000, 1}, 16, 32, {1, 1, 1}, "")); return check(r); },
       1, "memory budget"},
      {"ZeroSpacing", [](const fs::path& d) { auto r = tinyDataset(d); writeGzip(image1(r), niftiBytes({8, 8, 6, 2}, 16, 32, {1, 0, 1}, floats(std::vector<float>(768, 1.f)))); return check(r); },
       1, "spacing"},
      {"NanVoxels", [](const fs::path& d) {
         auto r = tinyDataset(d);
         ImageVolume image = test::tinyImage(1);
         image.at(2, 2, 2, 1) = std::numeric_limits<float>::quiet_NaN();
         writeImage(image, image1(r));
         return check(r); },
       1, "non-finite"},
      {"LabelGeometryDiffers", [](const fs::path& d) { auto r = tinyDataset(d); writeLabels(test::tinyLabels({8, 8, 5}), label1(r)); return check(r); },
       1, "shape-mismatch"},
      {"LabelSpacingDiffers", [](const fs::path& d) {
         auto r = tinyDataset(d);
         Geometry g = test::tinyGeometry();
         g.spacing = {1.5, 1.5, 3.0};
         writeLabels(test::tinyLabels(test::kTinySize, g), label1(r));
         return check(r); },
       1, "geometry-mismatch"},
      {"NonIntegerLabels", [](const fs::path& d) {
         auto r = tinyDataset(d);
         ImageVolume labels(test::kTinySize, 1, test::tinyGeometry());
         labels.at(1, 1, 1) = 1.5f;
         writeImage(labels, label1(r));
         return check(r); },
       1, "are not labels (integers 0..255)"},
      {"LabelOutOfDeclaredRange", [](const fs::path& d) { auto r = tinyDataset(d); LabelVolume l = test::tinyLabels(); l.at(0, 0, 0) = 7; writeLabels(l, label1(r)); return check(r); },
       1, "not declared in dataset.json"},
      {"ThreeDImageWhereFourDExpected", [](const fs::path& d) { auto r = tinyDataset(d); writeImage(test::tinyImage(1, 1), image1(r)); return check(r); },
       1, "channel-count"},
      {"MissingChannelFile", [](const fs::path& d) {
         test::makeNnUNetDataset(d / "data", 2, 0);
         fs::remove(test::nnunetChannelFile(d / "data", "imagesTr", 1, 1));
         return check(d / "data"); },
       1, "missing-file"},
      {"UnreadableImage", [](const fs::path& d) { auto r = tinyDataset(d); fs::permissions(image1(r), fs::perms::none); return check(r); },
       1, "Permission denied", true},
      // training configs and data: exit 3, no run folder
      {"InvalidYaml", [](const fs::path& d) { return train(d, writeConfig(d, "epochs: [1, 2\nseed: {"), tinyDataset(d)); },
       3, "YAML syntax error"},
      {"InvalidJsonConfig", [](const fs::path& d) { return train(d, writeConfig(d, "{\"epochs\": 1,}", "train.json"), tinyDataset(d)); },
       3, "JSON syntax error"},
      {"WrongTypeInConfig", [](const fs::path& d) { return train(d, writeConfig(d, "batch_size: two\n"), tinyDataset(d)); },
       3, "batch_size must be a whole number"},
      {"UnknownConfigKey", [](const fs::path& d) { return train(d, writeConfig(d, "optimizer:\n  lrate: 0.1\n"), tinyDataset(d)); },
       3, "unknown key \"optimizer.lrate\""},
      {"NegativeEpochs", [](const fs::path& d) { auto a = train(d, writeConfig(d, "epochs: 2\n"), tinyDataset(d)); a.insert(a.end(), {"--set", "epochs=-3"}); return a; },
       3, "epochs must be >= 1"},
      {"NotANumberInConfig", [](const fs::path& d) { return train(d, writeConfig(d, "optimizer:\n  lr: nan\n"), tinyDataset(d)); },
       3, "optimizer.lr must be a finite number"},
      {"YamlAliasBomb", [](const fs::path& d) {
         std::string text = "a0: &a0 [x, x, x, x, x, x, x, x]\n";
         for (int i = 1; i < 8; ++i)
           text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) + ", *a" +
                   std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
                   std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
                   std::to_string(i - 1) + "]\n";
         return train(d, writeConfig(d, text), tinyDataset(d)); },
       3, "after expanding YAML aliases"},
      {"PatchEdgeNotAMultipleOfTheNetDivisor", [](const fs::path& d) { return train(d, writeConfig(d, "patch_size: [15, 16, 16]\nnetwork: {depth: 3}\n"), tinyDataset(d)); },
       3, "multiples of"},
      {"PatchLargerThanAnyImage", [](const fs::path& d) { return train(d, writeConfig(d, "patch_size: [2048, 2048, 2048]\n"), tinyDataset(d)); },
       3, "patch_size values must be in [1, 1024]"},
      {"ConfigIsAFolder", [](const fs::path& d) { fs::create_directory(d / "train.yaml"); return train(d, d / "train.yaml", tinyDataset(d)); },
       3, "does not exist or is not a file"},
      {"TrainOnMissingDataset", [](const fs::path& d) { return train(d, writeConfig(d, "epochs: 1\n"), d / "no-such-data"); },
       3, "does not exist or is not a folder"},
      {"TrainOnEmptyDataset", [](const fs::path& d) {
         auto r = tinyDataset(d);
         editDatasetJson(r, [](json& j) { j["training"] = json::array(); j["numTraining"] = 0; });
         return train(d, writeConfig(d, "epochs: 1\n"), r); },
       3, "lists no labelled training cases"},
      {"ResumeFromAForeignCheckpoint", [](const fs::path& d) {
         fs::create_directories(d / "run");
         writeFileAtomically(d / "run" / "checkpoint.pt", "{\"step\": 3}");
         return std::vector<std::string>{"train", "--resume", "--out", (d / "run").string()}; },
       3, "is not a MedSeg checkpoint"},
      // inference: exit 3, no output file or folder
      {"InferWithAFileThatIsNotACheckpoint", [](const fs::path& d) {
         auto r = tinyDataset(d);
         writeFileAtomically(d / "model.pt", "weights? no, text");
         return infer(d, d / "model.pt", image1(r)); },
       3, "no plugin recognises the model"},  // each model plugin (unet3d, torchscript) was asked
      {"InferWithATruncatedCheckpoint", [](const fs::path& d) {
         auto r = tinyDataset(d);
         const auto model = tinyModel(d);
         fs::resize_file(model, fs::file_size(model) / 2);
         return infer(d, model, image1(r)); },
       3, "best.pt"},
      {"InferOnGarbageImage", [](const fs::path& d) {
         const auto model = tinyModel(d);
         test::writeText(d / "scan.nii.gz", "MZ this is no image at all");
         return infer(d, model, d / "scan.nii.gz"); },
       3, "not a NIfTI file"},
      {"InferOnTeraVoxelHeader", [](const fs::path& d) {
         const auto model = tinyModel(d);
         writeGzip(d / "scan.nii.gz", niftiBytes({10000, 10000, 10000, 2}, 16, 32, {1, 1, 1}, ""));
         return infer(d, model, d / "scan.nii.gz"); },
       3, "memory budget"},
      {"InferOnImageWithTooFewChannels", [](const fs::path& d) {
         const auto model = tinyModel(d);
         writeImage(test::tinyImage(0, 1), d / "scan.nii.gz");
         return infer(d, model, d / "scan.nii.gz"); },
       3, "channel"},
      // evaluation: exit 3, no CSV
      {"EvaluateMismatchedGrids", [](const fs::path& d) {
         writeLabels(test::tinyLabels(), d / "pred.nii.gz");
         writeLabels(test::tinyLabels({8, 8, 5}), d / "ref.nii.gz");
         return evaluate(d, d / "pred.nii.gz", d / "ref.nii.gz"); },
       3, "differs from reference grid"},
      {"EvaluateNonIntegerPrediction", [](const fs::path& d) {
         ImageVolume soft(test::kTinySize, 1, test::tinyGeometry());
         soft.at(3, 3, 3) = 0.5f;
         writeImage(soft, d / "pred.nii.gz");
         writeLabels(test::tinyLabels(), d / "ref.nii.gz");
         return evaluate(d, d / "pred.nii.gz", d / "ref.nii.gz"); },
       3, "are not labels"},
      {"EvaluateFileAgainstFolder", [](const fs::path& d) {
         writeLabels(test::tinyLabels(), d / "pred.nii.gz");
         fs::create_directories(d / "refs");
         return evaluate(d, d / "pred.nii.gz", d / "refs"); },
       3, "must both be files or both be folders"},
  };
  return table;
}

// Every entry under `folder` (links not followed) with its type and, for files, its size.
std::map<std::string, std::string> snapshot(const fs::path& folder) {
  std::map<std::string, std::string> entries;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const auto status = it->symlink_status(ec);
    std::string what = fs::is_symlink(status) ? "link" : fs::is_directory(status) ? "folder" : "file";
    if (fs::is_regular_file(status)) what += " " + std::to_string(fs::file_size(it->path(), ec));
    entries[fs::relative(it->path(), folder).string()] = what;
  }
  return entries;
}

// Test logs name the row, not its bytes.
void PrintTo(const Row& row, std::ostream* out) { *out << row.name; }

class MalformedInput : public ::testing::TestWithParam<Row> {};

TEST_P(MalformedInput, FailsClearlyAndLeavesNoOutput) {
  const Row& row = GetParam();
  test::ScratchDir dir("malformed-" + row.name);
  const std::vector<std::string> arguments = row.setUp(dir.path());
  const auto before = snapshot(dir.path());
  const auto result =
      test::runMedseg(arguments, row.unprivileged ? test::Privileges::DropRoot : test::Privileges::Inherit);
  EXPECT_NE(result.exitCode, 0) << result.output;
  EXPECT_EQ(result.exitCode, row.exitCode) << result.output;
  EXPECT_NE(result.output.find(row.phrase), std::string::npos) << "expected \"" << row.phrase << "\" in:\n" << result.output;
  EXPECT_EQ(snapshot(dir.path()), before) << "the command left files behind or changed its inputs";
  for (const char* output : {"run", "out", "scores.csv"})  // the --out of train and infer, evaluate's --csv
    if (!before.count(output)) EXPECT_FALSE(fs::exists(fs::symlink_status(dir / output))) << output << " was created";
}

TEST(MalformedInputTable, CoversAtLeastThirtyDistinctCases) {
  std::set<std::string> names;
  for (const Row& row : rows()) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    EXPECT_FALSE(row.phrase.empty()) << row.name;
  }
  EXPECT_GE(names.size(), 30u);
}

INSTANTIATE_TEST_SUITE_P(Rows, MalformedInput, ::testing::ValuesIn(rows()),
                         [](const ::testing::TestParamInfo<Row>& info) { return info.param.name; });

}  // namespace
}  // namespace medseg
