// The region-growing plugin: segmentation from seed points with ITK alone (no model, no LibTorch),
// which keeps the plugin interface honest about not being shaped around one network. Each label's
// seeds grow one region with itk::ConfidenceConnectedImageFilter (the mean and standard deviation
// of the seeds' neighbourhoods give an intensity range; the connected voxels inside it form the
// region; the range is re-estimated from the region `iterations` times), optionally on a Gaussian-
// smoothed copy of the channel. Labels are painted in increasing order; a voxel keeps the first.
#include <chrono>
#include <map>

#include <itkConfidenceConnectedImageFilter.h>
#include <itkImage.h>
#include <itkImportImageFilter.h>
#include <itkSmoothingRecursiveGaussianImageFilter.h>

#include "core/plugin/Plugin.h"
#include "core/util/Elapsed.h"
#include "core/util/Interrupt.h"

namespace medseg::plugins {
namespace {

using plugin::InferenceSetup;
using plugin::LabelSpec;
using plugin::ModelContract;
using plugin::Prompts;
using plugin::RunContext;
using plugin::Segmentation;
using FloatImage = itk::Image<float, 3>;
using MaskImage = itk::Image<unsigned char, 3>;

struct GrowingSettings {
  int64_t channel = 0;
  double multiplier = 2.5;
  unsigned iterations = 4;
  unsigned initialRadius = 2;
  double smoothingMm = 0.0;
  int label = 1;

  static GrowingSettings from(const nlohmann::json& p) {
    GrowingSettings s;
    s.channel = p.at("channel").get<int64_t>();
    s.multiplier = p.at("multiplier").get<double>();
    s.iterations = p.at("iterations").get<unsigned>();
    s.initialRadius = p.at("initial_radius").get<unsigned>();
    s.smoothingMm = p.at("smoothing").get<double>();
    s.label = p.at("label").get<int>();
    return s;
  }
};

// One channel of `image` seen as an ITK image: the importer views the volume's voxels (no copy)
// and must not outlive it; the filters only read them.
itk::ImportImageFilter<float, 3>::Pointer viewChannel(const ImageVolume& image, int64_t channel) {
  auto importer = itk::ImportImageFilter<float, 3>::New();
  FloatImage::SizeType size;
  for (int a = 0; a < 3; ++a) size[a] = static_cast<itk::SizeValueType>(image.size[a]);
  FloatImage::IndexType start;
  start.Fill(0);
  importer->SetRegion(FloatImage::RegionType(start, size));
  double spacing[3] = {image.geometry.spacing[0], image.geometry.spacing[1], image.geometry.spacing[2]};
  importer->SetSpacing(spacing);
  importer->SetImportPointer(const_cast<float*>(image.channel(channel)), static_cast<size_t>(image.voxelsPerChannel()),
                             /*letImportDelete=*/false);
  importer->Update();
  return importer;
}

class RegionGrowingSegmenter : public plugin::Segmenter {
 public:
  explicit RegionGrowingSegmenter(GrowingSettings settings) : settings_(settings) {
    contract_.labels.push_back(LabelSpec{settings_.label, "grown region", {255, 200, 0}});
  }

  const ModelContract& contract() const override { return contract_; }

  nlohmann::json describe() const override {
    return {{"model_kind", "itk confidence-connected region growing"},
            {"model_preparation", "none (no model)"},
            {"precision", "fp32"},
            {"device", "cpu"},
            {"targets", "labels"}};
  }

  Segmentation segment(const ImageVolume& image, const Prompts& prompts, RunContext& context) override {
    const auto start = std::chrono::steady_clock::now();
    if (prompts.seeds.empty())
      throw InputError("plugin region-growing needs at least one seed point: --seed x,y,z (voxel indices) on the command "
                       "line, or a click in the studio's slice view");
    if (settings_.channel >= image.channels)
      throw InputError("plugin region-growing: parameter channel=" + std::to_string(settings_.channel) + " but the image has " +
                       std::to_string(image.channels) + " channel(s)");
    std::map<int, std::vector<FloatImage::IndexType>> seedsByLabel;
    for (const auto& seed : prompts.seeds) {
      const auto& v = seed.voxel;
      if (!image.contains(v[0], v[1], v[2]))
        throw InputError("seed point (" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) +
                         ") lies outside the image (" + describeSize(image.size) + ")");
      FloatImage::IndexType index;
      for (int a = 0; a < 3; ++a) index[a] = v[a];
      seedsByLabel[seed.label > 0 ? seed.label : settings_.label].push_back(index);
    }
    const auto view = viewChannel(image, settings_.channel);
    FloatImage::Pointer intensities = view->GetOutput();
    if (settings_.smoothingMm > 0) {
      auto smoothing = itk::SmoothingRecursiveGaussianImageFilter<FloatImage, FloatImage>::New();
      smoothing->SetInput(intensities);
      smoothing->SetSigma(settings_.smoothingMm);
      smoothing->Update();
      intensities = smoothing->GetOutput();
    }
    Segmentation result;
    result.labels = LabelVolume(image.size, 1, image.geometry, 0);
    nlohmann::json grown = nlohmann::json::object();
    int64_t done = 0;
    for (const auto& [label, seeds] : seedsByLabel) {
      context.throwIfCancelled("region growing");
      auto filter = itk::ConfidenceConnectedImageFilter<FloatImage, MaskImage>::New();
      filter->SetInput(intensities);
      for (const auto& index : seeds) filter->AddSeed(index);
      filter->SetMultiplier(settings_.multiplier);
      filter->SetNumberOfIterations(settings_.iterations);
      filter->SetInitialNeighborhoodRadius(settings_.initialRadius);
      filter->SetReplaceValue(1);
      filter->Update();
      const unsigned char* region = filter->GetOutput()->GetBufferPointer();
      int64_t painted = 0;
      for (size_t i = 0; i < result.labels.data.size(); ++i)
        if (region[i] && result.labels.data[i] == 0) {
          result.labels.data[i] = static_cast<uint8_t>(label);
          ++painted;
        }
      grown[std::to_string(label)] = {{"seeds", seeds.size()}, {"voxels", painted}, {"mean", filter->GetMean()},
                                      {"variance", filter->GetVariance()}};
      context.progress(++done, static_cast<int64_t>(seedsByLabel.size()));
    }
    result.details = {{"windows", 0},
                      {"seeds", prompts.seeds.size()},
                      {"regions", grown},
                      {"predict_seconds", secondsSince(start)}};
    return result;
  }

 private:
  GrowingSettings settings_;
  ModelContract contract_;
};

class RegionGrowingPlugin : public plugin::Plugin, public plugin::InferencePlugin {
 public:
  std::string id() const override { return "region-growing"; }
  plugin::InferencePlugin* inference() override { return this; }

  bool recognisesModel(const std::filesystem::path&) const override { return false; }  // needs no model

  ModelContract describeModel(const InferenceSetup& setup) const override {
    return RegionGrowingSegmenter(GrowingSettings::from(setup.parameters)).contract();
  }

  std::unique_ptr<plugin::Segmenter> open(const InferenceSetup& setup, RunContext&) override {
    if (setup.probabilities) throw InputError("plugin region-growing gives labels only, no probabilities");
    return std::make_unique<RegionGrowingSegmenter>(GrowingSettings::from(setup.parameters));
  }
};

}  // namespace
}  // namespace medseg::plugins

MEDSEG_PLUGIN(medseg::plugins::RegionGrowingPlugin)
