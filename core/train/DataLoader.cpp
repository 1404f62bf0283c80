#include "core/train/DataLoader.h"

#include <chrono>
#include <stdexcept>

#include "core/train/Targets.h"

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
    : source_(std::move(source)),
      prefetch_(config.prefetch),
      endStep_(endStep),
      nextToDeliver_(firstStep),
      nextToClaim_(firstStep) {
  for (int64_t i = 0; i < config.workers; ++i) workers_.emplace_back([this] { work(); });
}

DataLoader::~DataLoader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void DataLoader::work() {
  // Batches are small tensors filled by plain loops; keep torch from spawning thread teams here.
  torch::NoGradGuard noGrad;
  while (true) {
    int64_t step = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [this] {
        return stopping_ || failure_ || (nextToClaim_ < endStep_ && nextToClaim_ < nextToDeliver_ + prefetch_);
      });
      if (stopping_ || failure_) return;
      step = nextToClaim_++;
    }
    try {
      Batch batch = source_(step);
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.emplace(step, std::move(batch));
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      failure_ = std::current_exception();
    }
    changed_.notify_all();
  }
}

Batch DataLoader::next() {
  const auto start = std::chrono::steady_clock::now();
  Batch batch;
  if (workers_.empty()) {
    if (nextToDeliver_ >= endStep_) throw std::logic_error("DataLoader::next() called past the last step");
    batch = source_(nextToDeliver_++);
  } else {
    std::unique_lock<std::mutex> lock(mutex_);
    if (nextToDeliver_ >= endStep_) throw std::logic_error("DataLoader::next() called past the last step");
    changed_.wait(lock, [this] { return failure_ || ready_.count(nextToDeliver_) > 0; });
    if (failure_) std::rethrow_exception(failure_);
    auto node = ready_.extract(nextToDeliver_++);
    batch = std::move(node.mapped());
  }
  changed_.notify_all();
  std::lock_guard<std::mutex> lock(mutex_);
  waitSeconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return batch;
}

double DataLoader::waitSeconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return waitSeconds_;
}

}  // namespace medseg
