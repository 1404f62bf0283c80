// Every argument of every MONAI component the torchscript plugin accepts, one row each: a value MedSeg
// runs is accepted, a value it does not is refused when the bundle is read (readBundle, before any
// model is loaded) with the file, the place, the component, the argument and the value in the message.
// Then the arguments MedSeg implements and whose effect is not spatial (the spatial ones and the
// windows are compared with MONAI's reference in MonaiBundleTest): intensity transforms,
// CropForegroundd and the post-processing, each against values worked out from MONAI 1.4's formulas.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "plugins/torchscript/BundlePostprocessing.h"
#include "plugins/torchscript/BundleTransforms.h"
#include "plugins/torchscript/ConfigReferences.h"
#include "plugins/torchscript/MonaiBundle.h"
#include "support/TestSupport.h"

namespace medseg::torchscript {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const json kMetadata = {{"network_data_format",
                         {{"inputs", {{"image", {{"num_channels", 2}}}}},
                          {"outputs",
                           {{"pred", {{"num_channels", 2}, {"channel_def", {{"0", "background"}, {"1", "tumour"}}}}}}}}}};

json baseInference() {
  return {{"roi", {32, 32, 32}},
          {"preprocessing",
           {{"_target_", "Compose"},
            {"transforms",
             {{{"_target_", "LoadImaged"}, {"keys", "image"}},
              {{"_target_", "Orientationd"}, {"keys", "image"}, {"axcodes", "RAS"}},
              {{"_target_", "Spacingd"}, {"keys", "image"}, {"pixdim", {1.5, 1.5, 1.5}}},
              {{"_target_", "ScaleIntensityRanged"}, {"keys", "image"}, {"a_min", 0}, {"a_max", 200}}}}}},
          {"inferer", {{"_target_", "SlidingWindowInferer"}, {"roi_size", "@roi"}}},
          {"postprocessing",
           {{"_target_", "Compose"},
            {"transforms",
             {{{"_target_", "Activationsd"}, {"keys", "pred"}, {"softmax", true}},
              {{"_target_", "Invertd"}, {"keys", "pred"}, {"transform", "@preprocessing"}, {"orig_keys", "image"}},
              {{"_target_", "AsDiscreted"}, {"keys", "pred"}, {"argmax", true}},
              {{"_target_", "SaveImaged"}, {"keys", "pred"}}}}}}};
}

// The arguments a component needs when a row adds it.
json minimalComponent(const std::string& target) {
  json t = {{"_target_", target}, {"keys", "image"}};
  if (target == "CropForegroundd") t["source_key"] = "image";
  return t;
}

struct Row {
  std::string section, target, argument;
  json value;
  std::string refusal;  // "" : accepted; else a part of the message
};

std::ostream& operator<<(std::ostream& out, const Row& r) {
  return out << r.target << "." << r.argument << " = " << r.value.dump();
}

class BundleArguments : public ::testing::TestWithParam<Row> {
 protected:
  static void SetUpTestSuite() { scratch_ = std::make_unique<test::ScratchDir>("bundle-arguments"); }
  static void TearDownTestSuite() { scratch_.reset(); }

  // A bundle folder with `inference` (the model file is not TorchScript: reading never loads it).
  static fs::path write(const json& inference, const std::string& name) {
    const fs::path folder = scratch_->path() / name;
    fs::create_directories(folder / "configs");
    fs::create_directories(folder / "models");
    writeFileAtomically(folder / "configs" / "metadata.json", kMetadata.dump());
    writeFileAtomically(folder / "configs" / "inference.json", inference.dump());
    writeFileAtomically(folder / "models" / "model.ts", "not read");
    return folder;
  }
  static std::unique_ptr<test::ScratchDir> scratch_;
};
std::unique_ptr<test::ScratchDir> BundleArguments::scratch_;

json withRow(const Row& r) {
  json inference = baseInference();
  if (r.section == "inferer") {
    inference["inferer"]["_target_"] = r.target;
    inference["inferer"][r.argument] = r.value;
    return inference;
  }
  if (r.section == "Compose") {
    inference["preprocessing"][r.argument] = r.value;
    return inference;
  }
  auto& list = inference[r.section]["transforms"];
  json* target = nullptr;
  for (auto& t : list)
    if (t["_target_"] == r.target) target = &t;
  if (!target) {
    list.push_back(r.section == "preprocessing" ? minimalComponent(r.target) : json{{"_target_", r.target}, {"keys", "pred"}});
    target = &list.back();
  }
  if (r.value.is_null() && r.refusal == "missing") target->erase(r.argument);
  else (*target)[r.argument] = r.value;
  return inference;
}

TEST_P(BundleArguments, IsRunOrRefusedByName) {
  const Row& row = GetParam();
  static int count = 0;
  const fs::path bundle = write(withRow(row), "row-" + std::to_string(++count));
  const std::string message = test::inputErrorMessageOf([&] { readBundle(bundle); });
  if (row.refusal.empty()) {
    EXPECT_EQ(message, "(no InputError)") << row;
    return;
  }
  for (const std::string& part : {std::string("inference.json"), row.target, row.argument, row.refusal})
    EXPECT_NE(message.find(part), std::string::npos) << row << ": \"" << part << "\" not in: " << message;
}

const std::string kDefaultOnly = "only MONAI's default";
const std::string kExpression = "Python expression";
const std::string kNotRun = "not a value MedSeg runs";
const std::string kUnknown = "not an argument MedSeg knows";
const std::string kTrueString = "which MONAI takes as true";

INSTANTIATE_TEST_SUITE_P(
    EveryArgument, BundleArguments,
    ::testing::Values(
        // LoadImaged
        Row{"preprocessing", "LoadImaged", "reader", "ITKReader", ""},
        Row{"preprocessing", "LoadImaged", "reader", "NibabelReader", ""},
        Row{"preprocessing", "LoadImaged", "reader", "PILReader", kNotRun},
        Row{"preprocessing", "LoadImaged", "dtype", "$np.float32", ""},
        Row{"preprocessing", "LoadImaged", "dtype", "$np.int16", kNotRun},
        Row{"preprocessing", "LoadImaged", "meta_keys", "image_meta", ""},
        Row{"preprocessing", "LoadImaged", "meta_key_postfix", "meta", ""},
        Row{"preprocessing", "LoadImaged", "overwriting", true, ""},
        Row{"preprocessing", "LoadImaged", "image_only", false, ""},
        Row{"preprocessing", "LoadImaged", "ensure_channel_first", true, ""},
        Row{"preprocessing", "LoadImaged", "simple_keys", true, ""},
        Row{"preprocessing", "LoadImaged", "prune_meta_pattern", "^x", ""},
        Row{"preprocessing", "LoadImaged", "prune_meta_sep", ".", ""},
        Row{"preprocessing", "LoadImaged", "expanduser", false, ""},
        Row{"preprocessing", "LoadImaged", "allow_missing_keys", true, ""},
        Row{"preprocessing", "LoadImaged", "as_closest_canonical", true, kUnknown},  // a reader's keyword
        // EnsureChannelFirstd, EnsureTyped, ToTensord
        Row{"preprocessing", "EnsureChannelFirstd", "strict_check", false, ""},
        Row{"preprocessing", "EnsureChannelFirstd", "channel_dim", -1, ""},
        Row{"preprocessing", "EnsureChannelFirstd", "channel_dim", 0, kNotRun},
        Row{"preprocessing", "EnsureTyped", "data_type", "numpy", ""},
        Row{"preprocessing", "EnsureTyped", "dtype", "$torch.float32", ""},
        Row{"preprocessing", "EnsureTyped", "dtype", "$torch.float16", kNotRun},
        Row{"preprocessing", "EnsureTyped", "device", "cuda", ""},
        Row{"preprocessing", "EnsureTyped", "wrap_sequence", false, ""},
        Row{"preprocessing", "EnsureTyped", "track_meta", true, ""},
        Row{"preprocessing", "ToTensord", "dtype", "$torch.float64", kNotRun},
        Row{"preprocessing", "ToTensord", "device", "cpu", ""},
        Row{"preprocessing", "ToTensord", "wrap_sequence", true, ""},
        Row{"preprocessing", "ToTensord", "track_meta", false, ""},
        // Orientationd
        Row{"preprocessing", "Orientationd", "axcodes", "LPI", ""},
        Row{"preprocessing", "Orientationd", "axcodes", "$'RAS'", ""},
        Row{"preprocessing", "Orientationd", "axcodes", "RAX", "axis code 'X'"},
        Row{"preprocessing", "Orientationd", "as_closest_canonical", true, ""},
        Row{"preprocessing", "Orientationd", "labels", json::array({{"R", "L"}, {"A", "P"}, {"S", "I"}}), kDefaultOnly},
        Row{"preprocessing", "Orientationd", "lazy", true, kDefaultOnly},
        // Spacingd
        Row{"preprocessing", "Spacingd", "pixdim", "$@spacing * 2", kExpression},
        Row{"preprocessing", "Spacingd", "pixdim", "$(1.5, 1.5, 2.0)", ""},
        Row{"preprocessing", "Spacingd", "pixdim", json::array({1.5, 0, -1}), ""},
        Row{"preprocessing", "Spacingd", "pixdim", nullptr, "missing"},
        Row{"preprocessing", "Spacingd", "diagonal", true, ""},
        Row{"preprocessing", "Spacingd", "diagonal", "yes", ""},  // MONAI's truth of a string: true
        Row{"preprocessing", "Spacingd", "diagonal", "no", kTrueString},
        Row{"preprocessing", "Spacingd", "mode", "nearest", ""},
        Row{"preprocessing", "Spacingd", "mode", "bicubic", kNotRun},
        Row{"preprocessing", "Spacingd", "mode", 3, "must be a string"},
        Row{"preprocessing", "Spacingd", "padding_mode", "zeros", ""},
        Row{"preprocessing", "Spacingd", "padding_mode", "constant", kNotRun},
        Row{"preprocessing", "Spacingd", "align_corners", true, ""},
        Row{"preprocessing", "Spacingd", "align_corners", "True", "torch, which refuses a string"},
        Row{"preprocessing", "Spacingd", "dtype", "$np.float32", ""},
        Row{"preprocessing", "Spacingd", "dtype", "uint8", kNotRun},
        Row{"preprocessing", "Spacingd", "scale_extent", true, ""},
        Row{"preprocessing", "Spacingd", "recompute_affine", true, kDefaultOnly},
        Row{"preprocessing", "Spacingd", "min_pixdim", 1.0, ""},
        Row{"preprocessing", "Spacingd", "min_pixdim", -1.0, "must be >= 0"},
        Row{"preprocessing", "Spacingd", "max_pixdim", json::array({2, 2, 2}), ""},
        Row{"preprocessing", "Spacingd", "ensure_same_shape", false, ""},
        Row{"preprocessing", "Spacingd", "lazy", true, kDefaultOnly},
        Row{"preprocessing", "Spacingd", "pixdims", 1.5, kUnknown},
        // ScaleIntensityRanged, ScaleIntensityd, NormalizeIntensityd
        Row{"preprocessing", "ScaleIntensityRanged", "a_min", "0", "must be a number"},
        Row{"preprocessing", "ScaleIntensityRanged", "a_max", nullptr, "missing"},
        Row{"preprocessing", "ScaleIntensityRanged", "b_min", nullptr, ""},
        Row{"preprocessing", "ScaleIntensityRanged", "b_max", 1.0, ""},
        Row{"preprocessing", "ScaleIntensityRanged", "clip", "False", kTrueString},
        Row{"preprocessing", "ScaleIntensityRanged", "clip", true, "needs b_min or b_max"},
        Row{"preprocessing", "ScaleIntensityRanged", "dtype", "$np.float32", ""},
        Row{"preprocessing", "ScaleIntensityd", "minv", nullptr, ""},
        Row{"preprocessing", "ScaleIntensityd", "maxv", 2.0, ""},
        Row{"preprocessing", "ScaleIntensityd", "factor", 0.1, ""},
        Row{"preprocessing", "ScaleIntensityd", "channel_wise", true, ""},
        Row{"preprocessing", "ScaleIntensityd", "dtype", "$np.float64", kNotRun},
        Row{"preprocessing", "NormalizeIntensityd", "subtrahend", json::array({1, 2}), "needs channel_wise"},
        Row{"preprocessing", "NormalizeIntensityd", "subtrahend", 10.0, ""},
        Row{"preprocessing", "NormalizeIntensityd", "divisor", "@sd", "refers to no item"},
        Row{"preprocessing", "NormalizeIntensityd", "nonzero", true, ""},
        Row{"preprocessing", "NormalizeIntensityd", "channel_wise", true, ""},
        Row{"preprocessing", "NormalizeIntensityd", "dtype", nullptr, ""},
        // CropForegroundd
        Row{"preprocessing", "CropForegroundd", "source_key", "label", "is not the input"},
        Row{"preprocessing", "CropForegroundd", "select_fn", "$lambda x: x > 1", kDefaultOnly},
        Row{"preprocessing", "CropForegroundd", "channel_indices", json::array({0}), ""},
        Row{"preprocessing", "CropForegroundd", "margin", json::array({1, 2}), "1 or 3 values"},
        Row{"preprocessing", "CropForegroundd", "margin", -1, "must not be negative"},
        Row{"preprocessing", "CropForegroundd", "allow_smaller", false, ""},
        Row{"preprocessing", "CropForegroundd", "k_divisible", 16, ""},
        Row{"preprocessing", "CropForegroundd", "mode", "symmetric", ""},  // nothing padded: allow_smaller, k 1
        Row{"preprocessing", "CropForegroundd", "mode", "median", ""},
        Row{"preprocessing", "CropForegroundd", "mode", "minimum ", kNotRun},
        Row{"preprocessing", "CropForegroundd", "value", 1.0, ""},
        Row{"preprocessing", "CropForegroundd", "start_coord_key", nullptr, ""},
        Row{"preprocessing", "CropForegroundd", "end_coord_key", "end", ""},
        Row{"preprocessing", "CropForegroundd", "lazy", true, kDefaultOnly},
        // Compose and the config's own keys
        Row{"Compose", "Compose", "lazy", true, kDefaultOnly},
        Row{"Compose", "Compose", "map_items", false, ""},
        Row{"Compose", "Compose", "unpack_items", true, ""},
        Row{"Compose", "Compose", "log_stats", true, ""},
        Row{"Compose", "Compose", "overrides", json::object(), kDefaultOnly},
        Row{"preprocessing", "Spacingd", "_mode_", "callable", kDefaultOnly},
        Row{"preprocessing", "Spacingd", "_desc_", "resampling", ""},
        Row{"preprocessing", "Spacingd", "_requires_", "@roi", ""},
        // SlidingWindowInferer
        Row{"inferer", "SlidingWindowInferer", "roi_size", "$@roi", ""},
        Row{"inferer", "SlidingWindowInferer", "roi_size", "$[r // 2 for r in @roi]", kExpression},
        Row{"inferer", "SlidingWindowInferer", "roi_size", json::array({32, 32}), "1 or 3 values"},
        Row{"inferer", "SlidingWindowInferer", "sw_batch_size", 0, "at least 1"},
        Row{"inferer", "SlidingWindowInferer", "sw_batch_size", "2", "must be a whole number"},
        Row{"inferer", "SlidingWindowInferer", "overlap", json::array({0.25, 0.5, 0.25}), "differs between axes"},
        Row{"inferer", "SlidingWindowInferer", "overlap", 1.0, "[0, 1)"},
        Row{"inferer", "SlidingWindowInferer", "mode", "gaussian", ""},
        Row{"inferer", "SlidingWindowInferer", "mode", "flat", kNotRun},
        Row{"inferer", "SlidingWindowInferer", "sigma_scale", json::array({0.1, 0.2, 0.3}), ""},
        Row{"inferer", "SlidingWindowInferer", "sigma_scale", 0, "must be positive"},
        Row{"inferer", "SlidingWindowInferer", "padding_mode", "replicate", ""},
        Row{"inferer", "SlidingWindowInferer", "padding_mode", "edge", kNotRun},
        Row{"inferer", "SlidingWindowInferer", "cval", 1.0, ""},
        Row{"inferer", "SlidingWindowInferer", "sw_device", "cuda", ""},
        Row{"inferer", "SlidingWindowInferer", "device", "cpu", ""},
        Row{"inferer", "SlidingWindowInferer", "progress", true, ""},
        Row{"inferer", "SlidingWindowInferer", "cache_roi_weight_map", true, ""},
        Row{"inferer", "SlidingWindowInferer", "cpu_thresh", 100, ""},
        Row{"inferer", "SlidingWindowInferer", "buffer_steps", 2, ""},
        Row{"inferer", "SlidingWindowInferer", "buffer_dim", 0, ""},
        Row{"inferer", "SlidingWindowInferer", "with_coord", true, kDefaultOnly},
        Row{"inferer", "SimpleInferer", "roi_size", 32, kUnknown},
        // Activationsd, AsDiscreted, Invertd, SaveImaged
        Row{"postprocessing", "Activationsd", "sigmoid", true, "are both true"},
        Row{"postprocessing", "Activationsd", "softmax", json::array({true}), ""},
        Row{"postprocessing", "Activationsd", "other", "$torch.tanh", kDefaultOnly},
        Row{"postprocessing", "Activationsd", "dim", 1, kNotRun},
        Row{"postprocessing", "AsDiscreted", "to_onehot", 2, ""},
        Row{"postprocessing", "AsDiscreted", "threshold", "0.5", "must be a number"},
        Row{"postprocessing", "AsDiscreted", "rounding", "floor", kNotRun},
        Row{"postprocessing", "AsDiscreted", "dim", 1, kNotRun},
        Row{"postprocessing", "AsDiscreted", "keepdim", false, kDefaultOnly},
        Row{"postprocessing", "AsDiscreted", "dtype", "$torch.uint8", ""},
        Row{"postprocessing", "Invertd", "transform", "@roi", "is not the bundle's preprocessing"},
        Row{"postprocessing", "Invertd", "orig_keys", "label", "must name the input"},
        Row{"postprocessing", "Invertd", "meta_keys", "pred_meta_dict", ""},
        Row{"postprocessing", "Invertd", "orig_meta_keys", "image_meta_dict", ""},
        Row{"postprocessing", "Invertd", "meta_key_postfix", "meta_dict", ""},
        Row{"postprocessing", "Invertd", "nearest_interp", "False", kTrueString},
        Row{"postprocessing", "Invertd", "nearest_interp", "True", ""},
        Row{"postprocessing", "Invertd", "nearest_interp", false, ""},
        Row{"postprocessing", "Invertd", "to_tensor", false, ""},
        Row{"postprocessing", "Invertd", "device", "cpu", ""},
        Row{"postprocessing", "Invertd", "post_func", "$lambda x: x", kDefaultOnly},
        Row{"postprocessing", "SaveImaged", "resample", true, kDefaultOnly},
        Row{"postprocessing", "SaveImaged", "output_dir", "$@output_dir", ""},
        Row{"postprocessing", "SaveImaged", "output_postfix", "seg", ""},
        Row{"postprocessing", "SaveImaged", "output_ext", ".nrrd", ""},
        Row{"postprocessing", "SaveImaged", "output_dtype", "$np.uint8", ""},
        Row{"postprocessing", "SaveImaged", "separate_folder", false, ""},
        Row{"postprocessing", "SaveImaged", "print_log", false, ""},
        Row{"postprocessing", "SaveImaged", "writer", "ITKWriter", ""},
        Row{"postprocessing", "SaveImaged", "squeeze_end_dims", false, ""},
        // CastToTyped, KeepLargestConnectedComponentd, SqueezeDimd, Lambdad (issue #39)
        Row{"preprocessing", "CastToTyped", "dtype", "$torch.float32", ""},
        Row{"preprocessing", "CastToTyped", "dtype", "$np.float16", "cast to float32 or remove"},
        Row{"preprocessing", "CastToTyped", "dtype", "$torch.cfloat", "must be a dtype"},
        Row{"postprocessing", "CastToTyped", "dtype", "$np.uint8", ""},  // after the argmax: labels stay
        Row{"postprocessing", "KeepLargestConnectedComponentd", "applied_labels", json::array({1, 2}), ""},
        Row{"postprocessing", "KeepLargestConnectedComponentd", "applied_labels", "1", "whole number"},
        Row{"postprocessing", "KeepLargestConnectedComponentd", "is_onehot", false, ""},
        Row{"postprocessing", "KeepLargestConnectedComponentd", "independent", "True", ""},
        Row{"postprocessing", "KeepLargestConnectedComponentd", "connectivity", 2, ""},
        Row{"postprocessing", "KeepLargestConnectedComponentd", "connectivity", 4, kNotRun},
        Row{"postprocessing", "KeepLargestConnectedComponentd", "num_components", 0, "at least 1"},
        Row{"postprocessing", "SqueezeDimd", "dim", 1, "not the channel axis"},
        Row{"postprocessing", "SqueezeDimd", "dim", -4, ""},
        Row{"postprocessing", "SqueezeDimd", "update_meta", false, ""},
        Row{"postprocessing", "Lambdad", "func", "$lambda x: x.flip(1)", "replace it with transforms MedSeg runs"},
        Row{"preprocessing", "Lambdad", "func", "$lambda x: x * 2", "no lambda the model zoo published runs in preprocessing"},
        Row{"preprocessing", "scripts.transforms.Clip", "_target_", "scripts.transforms.Clip", "own Python class"},
        // SliceInferer
        Row{"inferer", "SliceInferer", "roi_size", json::array({64, 64}), ""},
        Row{"inferer", "SliceInferer", "roi_size", json::array({64, 64, 64}), "must hold 2 values"},
        Row{"inferer", "SliceInferer", "spatial_dim", 3, kNotRun}));

// A bundle without Invertd keeps MONAI's mask on the network's grid: refused when Spacingd made that grid.
TEST(BundleConfig, MissingInvertdAfterSpacingdIsRefused) {
  test::ScratchDir dir("bundle-no-invertd");
  json inference = baseInference();
  inference["postprocessing"]["transforms"].erase(1);
  fs::create_directories(dir / "b" / "configs");
  fs::create_directories(dir / "b" / "models");
  writeFileAtomically(dir / "b" / "configs" / "metadata.json", kMetadata.dump());
  writeFileAtomically(dir / "b" / "configs" / "inference.json", inference.dump());
  writeFileAtomically(dir / "b" / "models" / "model.ts", "not read");
  EXPECT_NE(test::inputErrorMessageOf([&] { readBundle(dir / "b"); }).find("no Invertd"), std::string::npos);
}

// The post-processing steps that need the output discrete, or one channel, say so where it is not.
TEST(BundleConfig, PostprocessingOrderIsChecked) {
  test::ScratchDir dir("bundle-post-order");
  fs::create_directories(dir / "b" / "configs");
  fs::create_directories(dir / "b" / "models");
  writeFileAtomically(dir / "b" / "configs" / "metadata.json", kMetadata.dump());
  writeFileAtomically(dir / "b" / "models" / "model.ts", "not read");
  const std::vector<std::pair<json, std::vector<std::string>>> cases{
      {{{"_target_", "CastToTyped"}, {"keys", "pred"}, {"dtype", "$torch.int16"}}, {"CastToTyped", "dtype", "discretise first"}},
      {{{"_target_", "SqueezeDimd"}, {"keys", "pred"}}, {"SqueezeDimd", "2 channels", "MONAI fails on it too"}},
      {{{"_target_", "Lambdad"}, {"keys", "pred"}, {"func", "$lambda x: torch.where(x[[2]] > 0, 4, torch.where(x[[0]] > 0, 1, "
                                                         "torch.where(x[[1]] > 0, 2, 0)))"}},
       {"Lambdad", "brats_mri_segmentation's lambda, which reads channel 2 of an output with 2 channel(s)"}}};
  for (const auto& [step, parts] : cases) {
    json inference = baseInference();
    inference["postprocessing"]["transforms"].insert(inference["postprocessing"]["transforms"].begin(), step);
    writeFileAtomically(dir / "b" / "configs" / "inference.json", inference.dump());
    const std::string message = test::inputErrorMessageOf([&] { readBundle(dir / "b"); });
    for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
  }
  json squeezeFirst = baseInference();
  auto& list = squeezeFirst["postprocessing"]["transforms"];
  list.insert(list.begin() + 3, json{{"_target_", "SqueezeDimd"}, {"keys", "pred"}});
  list.insert(list.begin() + 4, json{{"_target_", "KeepLargestConnectedComponentd"}, {"keys", "pred"}});
  writeFileAtomically(dir / "b" / "configs" / "inference.json", squeezeFirst.dump());
  EXPECT_NE(test::inputErrorMessageOf([&] { readBundle(dir / "b"); }).find("comes after SqueezeDimd"), std::string::npos);
}

// Disabled components are dropped as MONAI drops them; references follow "#" paths.
TEST(BundleConfig, DisabledComponentsAndPathReferences) {
  const json config = {{"a", {{"b", json::array({10, 20})}}},
                       {"list", json::array({{{"_target_", "RandFlipd"}, {"_disabled_", "True"}}, 1})}};
  EXPECT_EQ(resolveReferences("@a#b#1", config, "x"), json(20));
  EXPECT_EQ(resolveReferences("@a::b", config, "x"), json::array({10, 20}));
  EXPECT_EQ(resolveReferences("@list", config, "x"), json::array({1}));
  EXPECT_EQ(resolveReferences("$(1, 2.5, True, None)", config, "x"), json::array({1, 2.5, true, nullptr}));
  EXPECT_EQ(resolveReferences("$(3)", config, "x"), json(3));
  EXPECT_EQ(resolveReferences("$np.float32", config, "x"), json("$np.float32"));
  EXPECT_EQ(resolveReferences("@nothing", config, "x"), json("@nothing"));
}

// --- what the implemented arguments do ---------------------------------------------------------------

BundleTransform component(const json& args) { return BundleTransform(args, "test", "image"); }

BundleImage imageOf(torch::Tensor data) {
  BundleImage image;
  image.data = data.to(torch::kFloat32);
  image.affine = torch::eye(4, torch::kFloat64);
  return image;
}

torch::Tensor ramp() { return torch::arange(2 * 2 * 2 * 2, torch::kFloat32).reshape({2, 2, 2, 2}); }

TEST(BundleIntensity, ScaleIntensityRangedFollowsMonai) {
  BundlePreprocessing p;
  auto image = imageOf(ramp());
  p.apply(component({{"_target_", "ScaleIntensityRanged"},
                     {"keys", "image"},
                     {"a_min", 4},
                     {"a_max", 4},
                     {"b_min", 1},
                     {"b_max", 2}}),
          image);
  EXPECT_TRUE(torch::allclose(image.data, ramp() - 4 + 1));  // a_min == a_max: shifted only
  image = imageOf(ramp());
  p.apply(component({{"_target_", "ScaleIntensityRanged"},
                     {"keys", "image"},
                     {"a_min", 0},
                     {"a_max", 10},
                     {"b_max", 0.5},
                     {"clip", true}}),
          image);
  EXPECT_TRUE(torch::allclose(image.data, (ramp() / 10).clamp_max(0.5)));  // no b_min: no rescale, clipped above
}

TEST(BundleIntensity, ScaleIntensitydFollowsMonai) {
  BundlePreprocessing p;
  auto image = imageOf(ramp());
  p.apply(component({{"_target_", "ScaleIntensityd"}, {"keys", "image"}, {"minv", nullptr}, {"maxv", nullptr}, {"factor", 0.5}}),
          image);
  EXPECT_TRUE(torch::allclose(image.data, ramp() * 1.5));
  image = imageOf(ramp());
  p.apply(component({{"_target_", "ScaleIntensityd"}, {"keys", "image"}, {"channel_wise", true}, {"maxv", 2.0}}), image);
  EXPECT_FLOAT_EQ(image.data[1].min().item<float>(), 0.0f);
  EXPECT_FLOAT_EQ(image.data[1].max().item<float>(), 2.0f);
  image = imageOf(ramp());
  p.apply(component({{"_target_", "ScaleIntensityd"}, {"keys", "image"}, {"minv", 3.0}, {"maxv", nullptr}}), image);
  EXPECT_TRUE(torch::allclose(image.data, ramp() / 15));  // one bound None: normalised to [0, 1] only
}

TEST(BundleIntensity, NormalizeIntensitydFollowsMonai) {
  BundlePreprocessing p;
  auto data = ramp();
  data[0][0][0][0] = 0;
  auto image = imageOf(data);
  p.apply(component({{"_target_", "NormalizeIntensityd"}, {"keys", "image"}, {"nonzero", true}, {"channel_wise", true},
                     {"subtrahend", {1.0, 2.0}}}),
          image);
  const auto nonzero = data[0].masked_select(data[0] != 0);
  const double spread = nonzero.std(false).item<double>();
  EXPECT_FLOAT_EQ(image.data[0][0][0][0].item<float>(), 0.0f);  // zeros stay
  EXPECT_NEAR(image.data[0][1][1][1].item<double>(), (7.0 - 1.0) / spread, 1e-5);
  EXPECT_NEAR(image.data[1][0][0][0].item<double>(), (8.0 - 2.0) / data[1].std(false).item<double>(), 1e-5);
  image = imageOf(torch::full({1, 2, 2, 2}, 3.0));
  p.apply(component({{"_target_", "NormalizeIntensityd"}, {"keys", "image"}, {"divisor", 0}}), image);
  EXPECT_TRUE(torch::allclose(image.data, torch::zeros({1, 2, 2, 2})));  // divisor 0 counts as 1
}

TEST(BundleCrop, ChannelIndicesChooseTheForeground) {
  auto data = torch::zeros({2, 10, 10, 10});
  data[0][1][1][1] = 1;
  data[1][4][5][6] = 1;
  BundlePreprocessing p;
  auto image = imageOf(data);
  p.apply(component({{"_target_", "CropForegroundd"}, {"keys", "image"}, {"source_key", "image"}, {"channel_indices", {1}},
                     {"margin", {0, 1, 2}}}),
          image);
  EXPECT_EQ(image.size(), (Shape3{1, 3, 5}));
  EXPECT_FLOAT_EQ(image.data[1][0][1][2].item<float>(), 1.0f);
}

TEST(BundleCrop, GrowsToTheDivisorAndPadsBeyondTheImage) {
  auto data = torch::zeros({1, 10, 10, 10});
  data[0][0][5][6] = 2;
  BundlePreprocessing p;
  auto image = imageOf(data);
  p.apply(component({{"_target_", "CropForegroundd"}, {"keys", "image"}, {"source_key", "image"}, {"margin", 1},
                     {"allow_smaller", false}, {"k_divisible", 4}, {"mode", "constant"}, {"value", 7}}),
          image);
  EXPECT_EQ(image.size(), (Shape3{4, 4, 4}));  // 3 voxels with the margin, grown to 4
  // x: box [-1, 2) grown to [-1, 3): one voxel of padding before the image, filled with `value`.
  EXPECT_FLOAT_EQ(image.data[0][0][0][0].item<float>(), 7.0f);
  EXPECT_FLOAT_EQ(image.data[0][1][1][1].item<float>(), 2.0f);
  EXPECT_DOUBLE_EQ(image.affine[0][3].item<double>(), -1.0);  // voxel 0 moved to the box's first voxel
  const auto back = p.undo(image.data, true);
  EXPECT_EQ(back.sizes(), data.sizes());
  EXPECT_TRUE(torch::equal(back, data));  // padding dropped, the rest 0 as MONAI's inverse pads
}

TEST(BundleCrop, NoForegroundIsRefused) {
  BundlePreprocessing p;
  auto image = imageOf(torch::zeros({1, 4, 4, 4}));
  EXPECT_NE(test::inputErrorMessageOf([&] {
              p.apply(component({{"_target_", "CropForegroundd"}, {"keys", "image"}, {"source_key", "image"}}), image);
            }).find("no voxel > 0"),
            std::string::npos);
}

// AsDiscreted: value >= threshold, to_onehot after argmax, torch rounding; in the bundle's order.
TEST(BundlePost, DiscretisesAsMonai) {
  MonaiBundle b;
  b.outputChannels = 3;
  const auto scores = torch::tensor({0.2, 0.5, 0.3, 0.5, 0.25, 0.25}).reshape({3, 2, 1, 1}).to(torch::kFloat32);
  BundlePreprocessing none;
  b.postprocessing = {{PostStep::Threshold, 0.5}};
  auto out = postprocess(b, scores, none, false).output;
  EXPECT_FLOAT_EQ(out[0][1][0][0].item<float>(), 1.0f);  // 0.5 >= 0.5
  EXPECT_FLOAT_EQ(out[1][0][0][0].item<float>(), 0.0f);
  b.postprocessing = {{PostStep::Argmax}, PostStep{PostStep::OneHot, 0.5, 3}};
  out = postprocess(b, scores, none, true).output;
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{3, 2, 1, 1}));
  EXPECT_FLOAT_EQ(out[1][0][0][0].item<float>(), 1.0f);  // voxel 0: channel 1's 0.3 is the largest
  EXPECT_FLOAT_EQ(out[0][1][0][0].item<float>(), 1.0f);  // voxel 1: a tie goes to the first channel
  b.postprocessing = {{PostStep::Round}};
  out = postprocess(b, torch::full({1, 1, 1, 1}, 2.5), none, false).output;
  EXPECT_FLOAT_EQ(out.item<float>(), 2.0f);  // half to even
  b.form = OutputForm::Labels;
  EXPECT_EQ(labelsFrom(b, torch::full({1, 2, 1, 1}, 2.0)).sum().item<int64_t>(), 4);
}

}  // namespace
}  // namespace medseg::torchscript
