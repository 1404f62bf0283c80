// MONAI's config language as MedSeg reads it (issue #39): "$" expressions of the forms the zoo's inference
// configs use and the refusal of the others, references and relative ids, "%" macros, several files merged
// as monai.bundle merges them, YAML read as PyYAML reads it, string booleans; then the zoo's transforms
// that are not spatial, each against MONAI 1.4's definition worked out by hand: KeepLargestConnectedComponent
// (its docstring's examples), the published lambda, CastToTyped, and what is refused by name.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "plugins/torchscript/BundleConfigFiles.h"
#include "plugins/torchscript/BundleLambdas.h"
#include "plugins/torchscript/BundlePostprocessing.h"
#include "plugins/torchscript/ConfigExpression.h"
#include "plugins/torchscript/ConfigReferences.h"
#include "plugins/torchscript/ConnectedComponents.h"
#include "plugins/torchscript/MonaiBundle.h"
#include "plugins/torchscript/PyYaml.h"
#include "support/TestSupport.h"

namespace medseg::torchscript {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json valueOf(const std::string& expression, const json& config = json::object()) {
  return resolveReferences(expression, config, "test");
}

TEST(BundleExpressions, ZooFormsAreEvaluatedAsPython) {
  const json config = {{"displayable_configs", {{"highres", true}, {"sw_overlap", 0.25}}},
                       {"spatial_size", {96, 96, 96}},
                       {"roi", {64, 64, 32}},
                       {"labels", {{"liver", 1}}},
                       {"n", 7}};
  EXPECT_EQ(valueOf("$[1.5, 1.5, 1.5] if @displayable_configs#highres else [3.0, 3.0, 3.0]", config), json({1.5, 1.5, 1.5}));
  EXPECT_EQ(valueOf("$'model.pt' if not @displayable_configs::highres else 'model_lowres.pt'", config), "model_lowres.pt");
  EXPECT_EQ(valueOf("$len(@spatial_size)", config), 3);
  EXPECT_EQ(valueOf("$@n // 2", config), 3);
  EXPECT_EQ(valueOf("$-7 // 2"), -4);  // floor, as Python
  EXPECT_EQ(valueOf("$-7 % 3"), 2);
  EXPECT_EQ(valueOf("$@n / 2", config), 3.5);
  EXPECT_EQ(valueOf("$2 ** 3 + True"), 9);
  EXPECT_EQ(valueOf("$(1.5,) * 3"), json({1.5, 1.5, 1.5}));
  EXPECT_EQ(valueOf("$@roi[-1]", config), 32);
  EXPECT_EQ(valueOf("$@roi[:2]", config), json({64, 64}));
  EXPECT_EQ(valueOf("$@labels['liver']", config), 1);
  EXPECT_EQ(valueOf("$[max(@roi), min(4, 2, 9), abs(-2.5), int(2.9), float(3), round(2.5)]", config),
            json({64, 2, 2.5, 2, 3.0, 2}));
  EXPECT_EQ(valueOf("$@n > 5 and @n < 10 or False", config), true);
  EXPECT_EQ(valueOf("$0 < @n <= 7 != 8", config), true);
  EXPECT_EQ(valueOf("$'liver' in @labels and 2 not in @roi and None is None", config), true);
  EXPECT_EQ(valueOf("$@bundle_root + '/models'", json{{"bundle_root", "."}}), "./models");
  EXPECT_EQ(valueOf("$torch.float16 if False else np.float32"), "$np.float32");
  EXPECT_EQ(valueOf("$@nothing"), "$@nothing");  // a reference to no item: left as text
}

TEST(BundleExpressions, OtherFormsStayTextAndSayWhat) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"lambda x: x + 1", "a lambda"},
      {"torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "the call torch.device(...)"},
      {"@network_def.to(@device)", "the attribute .to of a value"},
      {"[s * 2 for s in @spacing]", "a comprehension"},
      {"import glob", "an import statement"},
      {"{'a': 1}", "a dict"},
      {"os.path.join('a', 'b')", "the call os.path.join(...)"},
      {"sorted(@x, key=len)", "the keyword argument key="},
      {"f'{x}'", "f-, r- and b-strings"},
      {"glob", "the name glob"},
      {"1 / 0", "a division by zero"},
      {"'a' + 1", "'+' between a str and an int"}};
  for (const auto& [expression, why] : cases) {
    const Evaluated e = evaluateExpression(expression, [](const std::string&) { return std::optional<json>(json(1)); });
    EXPECT_FALSE(e.value) << expression;
    EXPECT_NE(e.why.find(why), std::string::npos) << expression << ": " << e.why;
    EXPECT_EQ(valueOf("$" + expression, {{"x", 1}, {"spacing", 1}, {"network_def", 1}, {"device", 1}}), "$" + expression);
  }
}

TEST(BundleReferences, FollowMonaisPatternAndDropDisabledComponents) {
  const json config = {{"a", {{"b", {10, 20}}}},
                       {"off", {{"_target_", "RandFlipd"}, {"_disabled_", " TRUE "}}},
                       {"list", {{{"_target_", "RandFlipd"}, {"_disabled_", "True"}}, {{"_target_", "X"}, {"_disabled_", "no"}}, 1}}};
  EXPECT_EQ(valueOf("@a#b#1", config), 20);
  EXPECT_EQ(valueOf("@a::b::0", config), 10);
  EXPECT_EQ(valueOf("@a#b x", config), "@a#b x");  // not MONAI's reference pattern: text
  EXPECT_EQ(valueOf("@off", config), nullptr);
  EXPECT_EQ(valueOf("@list", config).size(), 2u);  // "no" is not "true": kept
  EXPECT_NE(test::inputErrorMessageOf([] { valueOf("@a", {{"a", "@b"}, {"b", "$@a + 1"}}); }).find("leads back to itself"),
            std::string::npos);
}

class BundleConfigFiles : public ::testing::Test {
 protected:
  void SetUp() override { scratch_ = std::make_unique<test::ScratchDir>("bundle-config-files"); }
  fs::path write(const std::string& name, const std::string& text) {
    const fs::path file = scratch_->path() / name;
    fs::create_directories(file.parent_path());
    writeFileAtomically(file, text);
    return file;
  }
  std::unique_ptr<test::ScratchDir> scratch_;
};

// monai.bundle run --config_file "['a.json', 'b.yaml']": id keys set nested items, "+" merges.
TEST_F(BundleConfigFiles, LaterFilesOverrideByIdAndPlusMerges) {
  const auto a = write("a.json", R"({"evaluator": {"amp": true, "x": 1}, "list": [1, 2], "map": {"k": 1},
                                   "transforms": [{"_target_": "A", "v": 1}, {"_target_": "B"}]})");
  const auto b = write("b.yaml", "evaluator#amp: false\n+list: [3]\n+map: {j: 2}\ntransforms::0::v: 5\nnew: yes\n");
  const json merged = mergedBundleConfig({a, b}, scratch_->path());
  EXPECT_EQ(merged["evaluator"], json({{"amp", false}, {"x", 1}}));
  EXPECT_EQ(merged["list"], json({1, 2, 3}));
  EXPECT_EQ(merged["map"], json({{"k", 1}, {"j", 2}}));
  EXPECT_EQ(merged["transforms"][0]["v"], 5);
  EXPECT_EQ(merged["new"], true);
  const auto c = write("c.json", R"({"missing#amp": false})");
  const std::string message = test::inputErrorMessageOf([&] { mergedBundleConfig({a, c}, scratch_->path()); });
  for (const char* part : {"c.json", "missing#amp", "\"missing\"", "set the whole item"})
    EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
}

TEST_F(BundleConfigFiles, RelativeIdsAndMacrosAreReplaced) {
  write("configs/common.yaml", "net:\n  channels: [16, 32]\n  act: prelu\n");
  const auto main = write("configs/inference.json", R"({
    "A": 1,
    "B": {"key": "@##A", "value1": 2, "value2": "%#value1", "value3": [3, 4, "@#1"]},
    "net": "%configs/common.yaml#net",
    "acts": "%configs/common.yaml::net::act",
    "copy": "%B#value3"})");
  const json merged = mergedBundleConfig({main}, scratch_->path());
  EXPECT_EQ(merged["B"]["key"], "@A");
  EXPECT_EQ(merged["B"]["value2"], 2);
  EXPECT_EQ(merged["B"]["value3"][2], "@B::value3::1");
  EXPECT_EQ(merged["net"], json({{"channels", {16, 32}}, {"act", "prelu"}}));
  EXPECT_EQ(merged["acts"], "prelu");
  EXPECT_EQ(merged["copy"][2], "@B::value3::1");
  EXPECT_EQ(resolveReferences("@B#key", merged, "x"), 1);
  const auto bad = write("configs/bad.json", R"({"net": "%configs/common.yaml#nothing"})");
  const std::string message = test::inputErrorMessageOf([&] { mergedBundleConfig({bad}, scratch_->path()); });
  for (const char* part : {"bad.json", "net", "%configs/common.yaml::nothing", "\"nothing\" is not in"})
    EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
}

// PyYAML's safe loader (YAML 1.1), which MONAI reads YAML configs with.
TEST(BundleYaml, ScalarsAreReadAsPyYamlReadsThem) {
  EXPECT_EQ(pyYamlScalar("yes"), true);
  EXPECT_EQ(pyYamlScalar("Off"), false);
  EXPECT_EQ(pyYamlScalar("True"), true);
  EXPECT_EQ(pyYamlScalar("1e-3"), "1e-3");  // no dot: a string in YAML 1.1
  EXPECT_EQ(pyYamlScalar("1.0e-3"), 1.0e-3);
  EXPECT_EQ(pyYamlScalar("010"), 8);
  EXPECT_EQ(pyYamlScalar("0x1F"), 31);
  EXPECT_EQ(pyYamlScalar("1_000"), 1000);
  EXPECT_EQ(pyYamlScalar("1:30"), 90);
  EXPECT_EQ(pyYamlScalar("~"), nullptr);
  EXPECT_EQ(pyYamlScalar("-.5"), "-.5");  // PyYAML's float needs a digit before a signed dot
  EXPECT_EQ(pyYamlScalar("RAS"), "RAS");
  const json doc = pyYamlToJson("base: &b {a: 1, b: 2}\nderived:\n  <<: *b\n  b: 3\nquoted: 'yes'\nempty:\n", "x.yaml");
  EXPECT_EQ(doc["derived"], json({{"a", 1}, {"b", 3}}));
  EXPECT_EQ(doc["quoted"], "yes");
  EXPECT_EQ(doc["empty"], nullptr);
}

BundleTransform transformOf(const json& args) { return BundleTransform(args, "test", "image"); }

// MONAI's transforms test a string's truth: "True" is true; "False" would be true too, so it is refused.
TEST(BundleFlags, StringBooleansAreReadAsMonaiTakesThem) {
  EXPECT_TRUE(transformOf({{"_target_", "NormalizeIntensityd"}, {"keys", "image"}, {"nonzero", "True"}}).flag("nonzero"));
  EXPECT_TRUE(transformOf({{"_target_", "NormalizeIntensityd"}, {"keys", "image"}, {"nonzero", " yes"}}).flag("nonzero"));
  EXPECT_FALSE(transformOf({{"_target_", "NormalizeIntensityd"}, {"keys", "image"}, {"nonzero", ""}}).flag("nonzero"));
  const std::string message = test::inputErrorMessageOf(
      [] { transformOf({{"_target_", "NormalizeIntensityd"}, {"keys", "image"}, {"channel_wise", "false"}}); });
  EXPECT_NE(message.find("channel_wise = \"false\""), std::string::npos) << message;
  EXPECT_NE(message.find("MONAI takes as true"), std::string::npos) << message;
  EXPECT_NE(test::inputErrorMessageOf([] {
              transformOf({{"_target_", "Spacingd"}, {"keys", "image"}, {"pixdim", 1}, {"align_corners", "True"}});
            }).find("torch, which refuses a string"),
            std::string::npos);
}

torch::Tensor volume(const std::vector<std::vector<int>>& rows) {
  auto t = torch::zeros({1, int64_t(rows.size()), int64_t(rows[0].size()), 1});
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < rows[r].size(); ++c) t[0][int64_t(r)][int64_t(c)][0] = rows[r][c];
  return t;
}

// KeepLargestConnectedComponent's docstring examples (monai/transforms/post/array.py), as one slice.
TEST(BundleKeepLargest, FollowsMonaisExamples) {
  const auto img = volume({{0, 0, 1, 0, 0}, {0, 2, 1, 1, 1}, {1, 2, 1, 0, 0}, {1, 2, 0, 1, 0}, {2, 2, 0, 0, 2}});
  KeepLargestComponent keep;
  keep.appliedLabels = std::vector<int64_t>{1, 2};
  keep.independent = false;
  keep.connectivity = 1;
  EXPECT_TRUE(torch::equal(keep.apply(img), volume({{0, 0, 1, 0, 0}, {0, 2, 1, 1, 1}, {1, 2, 1, 0, 0}, {1, 2, 0, 0, 0}, {2, 2, 0, 0, 0}})));
  keep.independent = true;
  EXPECT_TRUE(torch::equal(keep.apply(img), volume({{0, 0, 1, 0, 0}, {0, 2, 1, 1, 1}, {0, 2, 1, 0, 0}, {0, 2, 0, 0, 0}, {2, 2, 0, 0, 0}})));
  keep.independent = false;
  keep.connectivity = 2;
  EXPECT_TRUE(torch::equal(keep.apply(img), img));
  // num_components 2 keeps the two largest; no applied_labels: every label but 0.
  KeepLargestComponent two;
  two.count = 2;
  two.connectivity = 1;
  const auto blobs = volume({{1, 1, 0, 1}, {0, 0, 0, 0}, {1, 0, 1, 1}});
  EXPECT_TRUE(torch::equal(two.apply(blobs), volume({{1, 1, 0, 0}, {0, 0, 0, 0}, {0, 0, 1, 1}})));
}

// One-hot outputs (several channels) keep the largest component per channel.
TEST(BundleKeepLargest, OneHotKeepsPerChannel) {
  auto onehot = torch::zeros({2, 4, 1, 1});
  onehot[1][0][0][0] = 1, onehot[1][2][0][0] = 1, onehot[1][3][0][0] = 1;
  onehot[0] = 1 - onehot[1];
  const auto kept = KeepLargestComponent{}.apply(onehot);
  EXPECT_EQ(kept[1].sum().item<float>(), 2.0f);
  EXPECT_TRUE(torch::equal(kept[0], onehot[0]));  // channel 0 is background: never applied
}

TEST(BundleLambdas, TheBratsLambdaIsRecognisedByItsNormalisedText) {
  for (const char* text : {"$lambda x: torch.where(x[[2]] > 0, 4, torch.where(x[[0]] > 0, 1, torch.where(x[[1]] > 0, 2, 0)))",
                           "$lambda  p :torch.where(p[[2]]>0,4,torch.where(p[[0]]>0,1,torch.where(p[[1]]>0,2,0)))"}) {
    const auto step = publishedLambda(text);
    ASSERT_TRUE(step) << text;
    // Voxels: nothing, whole tumour only, core and whole, all three.
    const auto regions = torch::tensor({0, 0, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1}, torch::kFloat32).reshape({3, 4, 1, 1});
    const auto labels = step->apply(regions);
    EXPECT_TRUE(torch::equal(labels.flatten(), torch::tensor({0, 2, 1, 4}, torch::kFloat32))) << labels;
  }
  EXPECT_FALSE(publishedLambda("$lambda x: torch.where(x[[2]] > 0, 3, 0)"));
  EXPECT_FALSE(publishedLambda("$lambda x, y: torch.where(x[[2]] > 0, 4, torch.where(x[[0]] > 0, 1, torch.where(x[[1]] > 0, 2, 0)))"));
}

// CastToTyped: torch's conversion, whole-number types truncating towards zero.
TEST(BundlePost, CastToTypedConvertsAsTorch) {
  MonaiBundle b;
  b.outputChannels = 1;
  PostStep cast{PostStep::Cast};
  cast.dtype = "int16";
  b.postprocessing = {cast};
  BundlePreprocessing none;
  const auto out = postprocess(b, torch::tensor({-1.7f, 2.9f, 0.2f}).reshape({1, 3, 1, 1}), none, false).output;
  EXPECT_TRUE(torch::equal(out.flatten(), torch::tensor({-1.0f, 2.0f, 0.0f})));
  b.postprocessing[0].dtype = "bool";
  EXPECT_TRUE(torch::equal(postprocess(b, torch::tensor({0.0f, 3.0f}).reshape({1, 2, 1, 1}), none, false).output.flatten(),
                           torch::tensor({0.0f, 1.0f})));
}

}  // namespace
}  // namespace medseg::torchscript
