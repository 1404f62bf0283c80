#include "plugins/unet3d/train/DataLoader.h"

#include <stdexcept>

#include "plugins/unet3d/train/Targets.h"
#include "core/util/CpuTime.h"
#include "core/util/ThreadPriority.h"

namespace medseg {

BatchFactory::BatchFactory(std::shared_ptr<const std::vector<TrainingCase>> cases, const TrainConfig& config)
    : cases_(std::move(cases)),
      patch_(config.patchSize),
      batchSize_(config.batchSize),
      seed_(config.seed),
      augmentation_(config.augmentation),
      targets_(config.targets),
      regions_(config.regions),
      sampler_(*cases_, config.patchSize, config.sampler) {}

Batch Batch::to(torch::Device device, torch::ScalarType dtype) const {
  Batch out = *this;
  if (image.defined()) out.image = image.to(device, dtype, /*non_blocking=*/true);
  if (target.defined())
    out.target = target.is_floating_point() ? target.to(device, dtype, /*non_blocking=*/true) : target.to(device, /*non_blocking=*/true);
  return out;
}

Batch BatchFactory::make(int64_t step) const {
  std::mt19937_64 rng(deriveSeed(seed_, static_cast<uint64_t>(step)));
  const int64_t channels = cases_->front().channels();
  Batch batch;
  batch.step = step;
  batch.image = torch::empty({batchSize_, channels, patch_[0], patch_[1], patch_[2]}, torch::kFloat);
  batch.labels = torch::empty({batchSize_, patch_[0], patch_[1], patch_[2]}, torch::kUInt8);
  const int64_t patchVoxels = patch_[0] * patch_[1] * patch_[2];
  for (int64_t i = 0; i < batchSize_; ++i) {
    const auto location = sampler_.sample(rng);
    const auto parameters = drawAugmentation(augmentation_, patch_, channels, rng);
    extractAugmentedPatch((*cases_)[location.caseIndex], location, patch_, parameters,
                          batch.image.data_ptr<float>() + i * channels * patchVoxels,
                          batch.labels.data_ptr<uint8_t>() + i * patchVoxels);
    batch.foregroundPatches += location.foregroundForced ? 1 : 0;
  }
  batch.target = makeTargets(batch.labels, targets_, regions_);
  return batch;
}

DataLoader::DataLoader(BatchSource source, const LoaderConfig& config, int64_t firstStep, int64_t endStep)
    : cpuNanoseconds_(std::make_shared<std::atomic<int64_t>>(0)),
      work_(
          [source = std::move(source), cpu = cpuNanoseconds_](int64_t step) {
            const double start = threadCpuSeconds();
            Batch batch = source(step);
            *cpu += static_cast<int64_t>((threadCpuSeconds() - start) * 1e9);
            return batch;
          },
          config.workers, config.prefetch, firstStep, endStep, [] {
            // Batches are small tensors filled by plain loops: no autograd records in the workers.
            c10::GradMode::set_enabled(false);
            // A batch is made well ahead (prefetch), so the workers can live on the cores' idle time:
            // on a small machine the network's threads come first.
            lowerThisThreadsPriority();
          }) {}

}  // namespace medseg
