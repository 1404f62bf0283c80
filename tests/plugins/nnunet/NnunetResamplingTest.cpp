#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "core/util/Interrupt.h"
#include "plugins/nnunet/NnunetResampling.h"

using namespace medseg;
using namespace medseg::nnunet;

namespace {

const std::filesystem::path kResamplingReferenceDir = std::filesystem::path(MEDSEG_SOURCE_DIR) / "tests/data/nnunet/reference";

// The inputs of make_resampling_reference.py: (c + 1) * (k / 128 - 8) with k from a multiplicative hash of the
// flat index, exact in float16, float32 and float64.
torch::Tensor hashedField(uint64_t seed, int64_t channels, const Shape3& shape) {
  torch::Tensor values = torch::empty({channels, shape[0], shape[1], shape[2]}, torch::kDouble);
  double* v = values.data_ptr<double>();
  const int64_t perChannel = shape[0] * shape[1] * shape[2];
  for (int64_t n = 0; n < values.numel(); ++n) {
    const uint64_t h = (static_cast<uint64_t>(n + 1) * 2654435761ULL + seed * 97531ULL) & 0xFFFFFFFFULL;
    const double k = static_cast<double>((h >> 11) & 2047ULL);
    v[n] = static_cast<double>(n / perChannel + 1) * (k / 128.0 - 8.0);
  }
  return values;
}

// Little-endian float64 as numpy's tofile writes it on the (little-endian) hosts MedSeg builds for.
std::vector<double> readFloat64File(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    ADD_FAILURE() << "missing reference " << path << " (make_resampling_reference.py writes it)";
    return {};
  }
  std::vector<double> values(static_cast<size_t>(in.tellg()) / sizeof(double));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(double)));
  return values;
}

template <typename T>
T jsonTriple(const nlohmann::json& j) {
  return {j[0].get<typename T::value_type>(), j[1].get<typename T::value_type>(), j[2].get<typename T::value_type>()};
}

struct ResamplingCase {
  nlohmann::json json;
  std::string name() const { return json["name"].get<std::string>(); }
  Shape3 shape() const { return jsonTriple<Shape3>(json["shape"]); }
  Shape3 newShape() const { return jsonTriple<Shape3>(json["new_shape"]); }
  Spacing3 current() const { return jsonTriple<Spacing3>(json["current_spacing"]); }
  Spacing3 target() const { return jsonTriple<Spacing3>(json["new_spacing"]); }
  ResamplingSettings settings() const {
    return parseResamplingSettings("resample_data_or_seg_to_shape",
                                   {{"is_seg", false}, {"order", json["order"]}, {"order_z", json["order_z"]},
                                    {"force_separate_z", json["force_separate_z"]}});
  }
  torch::Tensor input() const { return hashedField(json["seed"].get<uint64_t>(), json["channels"].get<int64_t>(), shape()); }
  torch::Tensor expected() const {
    const Shape3 s = newShape();
    const std::vector<double> values = readFloat64File(kResamplingReferenceDir / (name() + ".f64"));
    return torch::tensor(values, torch::kDouble).reshape({json["channels"].get<int64_t>(), s[0], s[1], s[2]});
  }
};

std::vector<ResamplingCase> resamplingCases() {
  std::ifstream in(kResamplingReferenceDir / "resampling_reference.json");
  const nlohmann::json manifest = nlohmann::json::parse(in);
  std::vector<ResamplingCase> cases;
  for (const auto& c : manifest["cases"]) cases.push_back(ResamplingCase{c});
  return cases;
}

// Largest difference in units of the reference's float ulp (float32 or float16 spacing at each value).
double maxUlpsApart(const torch::Tensor& actual, const torch::Tensor& expected) {
  const torch::Tensor a = actual.to(torch::kDouble);
  const torch::Tensor e = expected.to(torch::kDouble);
  const int mantissaBits = expected.scalar_type() == torch::kHalf ? 10 : 23;
  const torch::Tensor ulp = torch::pow(2.0, torch::floor(torch::log2(e.abs().clamp_min(1e-30))) - mantissaBits);
  return ((a - e).abs() / ulp).max().item<double>();
}

}  // namespace

TEST(NnunetResampling, TargetShapeRoundsLikeNnunet) {
  // caseB of the fixtures: float32 header spacing, plans target 1 mm.
  EXPECT_EQ(targetShape({30, 36, 33}, {1.600000023841858, 1.399999976158142, 1.25}, {1.0, 1.0, 1.0}),
            (Shape3{48, 50, 41}));
  EXPECT_EQ(targetShape({16, 46, 40}, {3.5, 1.0, 1.0}, {1.0, 1.0, 1.0}), (Shape3{56, 46, 40}));
  // Python's round(): 7.5 -> 8, 4.5 -> 4, 2.5 -> 2.
  EXPECT_EQ(targetShape({5, 3, 1}, {1.5, 1.5, 2.5}, {1.0, 1.0, 1.0}), (Shape3{8, 4, 2}));
  EXPECT_THROW(targetShape({5, 5, 5}, {1.0, 0.0, 1.0}, {1.0, 1.0, 1.0}), InputError);
}

TEST(NnunetResampling, SeparateZFollowsTheAnisotropyRule) {
  const auto check = [](std::optional<bool> force, Spacing3 current, Spacing3 target, bool separate, int axis) {
    const SeparateZ result = separateZ(force, current, target);
    EXPECT_EQ(result.separate, separate);
    EXPECT_EQ(result.axis, axis);
  };
  check(std::nullopt, {3.5, 1.0, 1.0}, {1.0, 1.0, 1.0}, true, 0);   // caseC in
  check(std::nullopt, {1.0, 1.0, 1.0}, {3.5, 1.0, 1.0}, true, 0);   // caseC back: the new spacing decides
  check(std::nullopt, {1.0, 1.0, 1.0}, {1.0, 1.0, 5.0}, true, 2);
  check(std::nullopt, {3.0, 1.0, 1.0}, {1.0, 1.0, 1.0}, false, -1);  // exactly 3 is not above the threshold
  check(std::nullopt, {0.24, 1.25, 1.25}, {1.0, 1.0, 1.0}, false, -1);  // two coarse axes: 3-D
  check(false, {3.5, 1.0, 1.0}, {1.0, 1.0, 1.0}, false, -1);
  check(true, {1.0, 2.0, 1.5}, {1.0, 1.0, 1.0}, true, 1);
  check(true, {1.0, 1.0, 1.0}, {2.0, 2.0, 2.0}, false, -1);  // forced, but all three axes tie
}

TEST(NnunetResampling, ReadsThePlansSettings) {
  const nlohmann::json configuration = nlohmann::json::parse(R"({
    "resampling_fn_data": "resample_data_or_seg_to_shape",
    "resampling_fn_data_kwargs": {"is_seg": false, "order": 3, "order_z": 0, "force_separate_z": null},
    "resampling_fn_probabilities": "resample_data_or_seg_to_shape",
    "resampling_fn_probabilities_kwargs": {"is_seg": false, "order": 1, "order_z": 0, "force_separate_z": null}})");
  const ResamplingSettings data = resamplingSettingsFromPlans(configuration, ResamplingStage::Data);
  EXPECT_EQ(data.order, 3);
  EXPECT_EQ(data.orderZ, 0);
  EXPECT_FALSE(data.forceSeparateZ.has_value());
  EXPECT_EQ(resamplingSettingsFromPlans(configuration, ResamplingStage::Probabilities).order, 1);
  // nnU-Net's function defaults to force_separate_z=False when the plans leave the key out.
  EXPECT_EQ(parseResamplingSettings("resample_data_or_seg_to_shape", {{"order", 1}}).forceSeparateZ, false);
}

TEST(NnunetResampling, RefusesWhatItDoesNotImplement) {
  const std::string fn = "resample_data_or_seg_to_shape";
  try {
    parseResamplingSettings("resample_torch_fornoref", {{"order", 1}});
    FAIL() << "a custom resampling function was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("resample_torch_fornoref"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parseResamplingSettings(fn, {{"is_seg", true}}), InputError);
  EXPECT_THROW(parseResamplingSettings(fn, {{"order", 2}}), InputError);
  EXPECT_THROW(parseResamplingSettings(fn, {{"order_z", 1.5}}), InputError);
  EXPECT_THROW(parseResamplingSettings(fn, {{"anti_aliasing", true}}), InputError);
  const ResamplingSettings settings;
  EXPECT_THROW(resampleData(torch::zeros({4, 4, 4}), {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, settings), InputError);
  EXPECT_THROW(resampleData(torch::zeros({1, 4, 4, 4}, torch::kInt), {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, settings),
               InputError);
  EXPECT_THROW(resampleData(torch::zeros({1, 4, 4, 4}), {2, 0, 2}, {1, 1, 1}, {1, 1, 1}, settings), InputError);
}

TEST(NnunetResampling, SameShapeIsReturnedUntouched) {
  const torch::Tensor logits = torch::randn({2, 3, 4, 5}).to(torch::kHalf);
  const torch::Tensor result = resampleData(logits, {3, 4, 5}, {1, 1, 1}, {3.5, 1, 1}, ResamplingSettings{});
  EXPECT_TRUE(result.is_same(logits));
}

// Every case of make_resampling_reference.py (skimage 0.19.3 / scipy 1.10.1, bit-identical to nnU-Net
// v2.5.2's resample_data_or_seg_to_shape on these inputs).
TEST(NnunetResampling, MatchesScipyAndSkimage) {
  const std::vector<ResamplingCase> cases = resamplingCases();
  ASSERT_EQ(cases.size(), 7u);
  for (const ResamplingCase& c : cases) {
    SCOPED_TRACE(c.name());
    const ResamplingSettings settings = c.settings();
    const SeparateZ split = separateZ(settings.forceSeparateZ, c.current(), c.target());
    const nlohmann::json& axis = c.json["separate_axis"];
    EXPECT_EQ(split.axis, axis.is_null() ? -1 : axis.get<int>());

    const torch::Tensor expected = c.expected();
    if (c.json["dtype"] == "float16") {
      // Logits on the way back: float16 in, float16 out, rounded once from float64.
      const torch::Tensor result =
          resampleData(c.input().to(torch::kHalf), c.newShape(), c.current(), c.target(), settings);
      ASSERT_EQ(result.scalar_type(), torch::kHalf);
      EXPECT_EQ(maxUlpsApart(result, expected.to(torch::kHalf)), 0.0);
      continue;
    }
    const torch::Tensor result = resampleData(c.input(), c.newShape(), c.current(), c.target(), settings);
    ASSERT_EQ(result.scalar_type(), torch::kDouble);
    ASSERT_EQ(result.sizes(), expected.sizes());
    // Orders 0 and 1 are summed in scipy's order: bit for bit. Order 3 runs as 1-D passes: float64 rounding.
    const bool exact = settings.order <= 1 && (axis.is_null() || settings.orderZ <= 1);
    const double scale = expected.abs().max().item<double>();
    EXPECT_LE((result - expected).abs().max().item<double>(), exact ? 0.0 : 1e-12 * scale);

    const torch::Tensor single = resampleData(c.input().to(torch::kFloat), c.newShape(), c.current(), c.target(),
                                              settings);
    ASSERT_EQ(single.scalar_type(), torch::kFloat);
    EXPECT_LE(maxUlpsApart(single, expected.to(torch::kFloat)), 1.0);
  }
}

// The clip to the input's range is per channel in 3-D and per slice when resampling separately: a constant
// slice must stay exactly constant even where cubic splines of its neighbours would overshoot.
TEST(NnunetResampling, ClipsToEachChannelsRange) {
  torch::Tensor data = torch::zeros({2, 6, 7, 5}, torch::kDouble);
  data[0].index_put_({torch::indexing::Slice(), 3}, 10.0);  // a bright plane in channel 0
  data[1].fill_(-2.0);
  const ResamplingSettings cubic;
  const torch::Tensor result = resampleData(data, {9, 11, 8}, {1, 1, 1}, {1, 1, 1}, cubic);
  EXPECT_GE(result[0].min().item<double>(), 0.0);
  EXPECT_LE(result[0].max().item<double>(), 10.0);
  EXPECT_TRUE(torch::all(result[1] == -2.0).item<bool>());
}
