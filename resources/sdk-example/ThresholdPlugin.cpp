// The SDK's example plugin (README, "Writing a plugin"): one class that is a plugin of kind "infer"
// and makes a Segmenter per run. It uses only the installed SDK headers and the standard library.
#include <array>
#include <cstdint>
#include <deque>
#include <fstream>
#include <string>
#include <vector>

#include "core/plugin/Plugin.h"
#include "core/util/Interrupt.h"

namespace {

using namespace medseg;

struct Settings {
  int64_t channel = 0;
  double threshold = 100.0;
  bool above = true, largestRegion = false;
  std::string labelName = "above threshold";

  // The parameters arrive resolved against the manifest's schema: every name present, types checked.
  static Settings from(const nlohmann::json& p) {
    Settings s;
    s.channel = p.at("channel").get<int64_t>();
    s.threshold = p.at("threshold").get<double>();
    s.above = p.at("side").get<std::string>() == "above";
    s.largestRegion = p.at("largest_region").get<bool>();
    const std::string names = p.at("names").get<std::string>();
    if (!names.empty()) {
      std::ifstream in(names);
      if (!in || !std::getline(in, s.labelName) || s.labelName.empty())
        throw InputError("plugin threshold: names file " + names + " is missing or its first line is empty");
    }
    return s;
  }
};

// Keeps the largest 6-connected region of `mask` (values 0/1), found by breadth-first search.
void keepLargestRegion(LabelVolume& mask) {
  const auto& n = mask.size;
  std::vector<int32_t> region(mask.data.size(), -1);
  int32_t best = -1;
  size_t bestSize = 0;
  int32_t next = 0;
  for (size_t start = 0; start < mask.data.size(); ++start) {
    if (!mask.data[start] || region[start] >= 0) continue;
    std::deque<size_t> queue{start};
    region[start] = next;
    size_t size = 0;
    while (!queue.empty()) {
      const size_t i = queue.front();
      queue.pop_front();
      ++size;
      const int64_t x = int64_t(i) % n[0], y = int64_t(i) / n[0] % n[1], z = int64_t(i) / (n[0] * n[1]);
      const std::array<std::array<int64_t, 3>, 6> steps{{{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}}};
      for (const auto& s : steps) {
        if (!mask.contains(x + s[0], y + s[1], z + s[2])) continue;
        const size_t j = mask.offset(0, x + s[0], y + s[1], z + s[2]);
        if (mask.data[j] && region[j] < 0) {
          region[j] = next;
          queue.push_back(j);
        }
      }
    }
    if (size > bestSize) {
      bestSize = size;
      best = next;
    }
    ++next;
  }
  for (size_t i = 0; i < mask.data.size(); ++i)
    if (region[i] != best) mask.data[i] = 0;
}

class ThresholdSegmenter : public plugin::Segmenter {
 public:
  explicit ThresholdSegmenter(Settings settings) : settings_(std::move(settings)) {
    contract_.labels.push_back({1, settings_.labelName, {230, 60, 60}});
  }
  const plugin::ModelContract& contract() const override { return contract_; }
  nlohmann::json describe() const override {
    return {{"model_kind", "threshold"}, {"precision", "fp32"}, {"device", "cpu"}, {"targets", "labels"}};
  }
  plugin::Segmentation segment(const ImageVolume& image, const plugin::Prompts&, plugin::RunContext& context) override {
    if (settings_.channel >= image.channels)
      throw InputError("plugin threshold: channel " + std::to_string(settings_.channel) + " but the image has " +
                       std::to_string(image.channels));
    plugin::Segmentation result;
    result.labels = LabelVolume(image.size, 1, image.geometry, 0);
    const float* values = image.channel(settings_.channel);
    int64_t labelled = 0;
    for (size_t i = 0; i < result.labels.data.size(); ++i) {
      const bool hit = settings_.above ? values[i] > settings_.threshold : values[i] < settings_.threshold;
      result.labels.data[i] = hit ? 1 : 0;
      labelled += hit;
    }
    context.throwIfCancelled("threshold");
    if (settings_.largestRegion) keepLargestRegion(result.labels);
    context.progress(1, 1);
    result.details = {{"windows", 0}, {"above_or_below", labelled}};
    return result;
  }

 private:
  Settings settings_;
  plugin::ModelContract contract_;
};

class ThresholdPlugin : public plugin::Plugin, public plugin::InferencePlugin {
 public:
  std::string id() const override { return "threshold"; }
  plugin::InferencePlugin* inference() override { return this; }
  bool recognisesModel(const std::filesystem::path&) const override { return false; }  // takes no model
  plugin::ModelContract describeModel(const plugin::InferenceSetup& setup) const override {
    return ThresholdSegmenter(Settings::from(setup.parameters)).contract();
  }
  std::unique_ptr<plugin::Segmenter> open(const plugin::InferenceSetup& setup, plugin::RunContext&) override {
    return std::make_unique<ThresholdSegmenter>(Settings::from(setup.parameters));
  }
};

}  // namespace

MEDSEG_PLUGIN(ThresholdPlugin)
