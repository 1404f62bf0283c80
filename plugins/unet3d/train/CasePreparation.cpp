#include "plugins/unet3d/train/CasePreparation.h"

#include "core/nn/VolumeTensor.h"
#include "core/io/NonFiniteVoxels.h"
#include "core/nn/Preprocessing.h"
#include "core/util/Interrupt.h"

namespace medseg {

CasePreparation::CasePreparation(const Dataset& dataset, const TrainConfig& config,
                                 std::optional<std::filesystem::path> cacheRoot, Reporter& reporter)
    : config_(config), reporter_(reporter) {
  if (cacheRoot) {
    cache_.emplace(*cacheRoot, dataset, config.preprocessing);
    use_.folder = cache_->folder();
  }
}

PreprocessedTensors CasePreparation::preprocessCase(const CaseEntry& entry) const {
  const ImageVolume image = loadCaseImage(
      entry, nonFiniteReadOptions(config_.allowNonFinite, [&](const std::filesystem::path& file, const NonFiniteVoxels& found) {
        reporter_.log("case " + entry.id + ": " + file.string() + ": replaced " + found.describe() + " by 0");
      }));
  const LabelVolume labels = loadCaseLabels(entry);
  if (image.channels != config_.network.inChannels)
    throw InputError("case " + entry.id + " has " + std::to_string(image.channels) + " channels, the data set declares " +
                     std::to_string(config_.network.inChannels));
  const PreprocessedCase pre = preprocess(image, &labels, config_.preprocessing);
  return {roundToCachePrecision(imageToTensor(pre.image)), labelsToTensor(pre.labels).squeeze(0).contiguous()};
}

void CasePreparation::check(const CaseEntry& entry, const PreprocessedTensors& tensors) const {
  if (tensors.image.size(0) != config_.network.inChannels)
    throw InputError("case " + entry.id + " has " + std::to_string(tensors.image.size(0)) +
                     " channels, the data set declares " + std::to_string(config_.network.inChannels));
  const int maxLabel = tensors.labels.numel() ? tensors.labels.max().item<int>() : 0;
  if (config_.targets == TargetMode::Labels && maxLabel >= config_.network.outChannels)
    throw InputError("case " + entry.id + " contains label " + std::to_string(maxLabel) + " but the data set declares " +
                     std::to_string(config_.network.outChannels) + " labels (0.." +
                     std::to_string(config_.network.outChannels - 1) + ")");
}

PreprocessedTensors CasePreparation::prepare(const CaseEntry& entry) {
  throwIfInterrupted("preprocessing");
  if (cache_) {
    CacheRead cached = cache_->read(entry);
    if (cached.status == CacheLookup::Hit) {
      check(entry, cached.tensors);
      ++use_.reused;
      use_.bytes += std::filesystem::file_size(cache_->fileOf(entry));
      return std::move(cached.tensors);
    }
    if (cached.status != CacheLookup::Missing)
      reporter_.log("case " + entry.id + ": rebuilding its preprocessed copy " + cache_->fileOf(entry).string() + " (" +
                    cached.reason + ")");
  }
  PreprocessedTensors tensors = preprocessCase(entry);
  check(entry, tensors);
  ++use_.built;
  if (cache_ && use_.writable) {
    try {
      use_.bytes += cache_->write(entry, tensors);
    } catch (const std::exception& e) {
      use_.writable = false;
      reporter_.log(std::string("preprocessed cache not written, training goes on without it: ") + e.what());
    }
  }
  return tensors;
}

}  // namespace medseg
