#include "core/train/TrainingCheckpoint.h"

#include <ATen/CPUGeneratorImpl.h>

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

constexpr const char* kStateKey = "train/state";
constexpr const char* kOptimizerKey = "train/optimizer";
constexpr const char* kRngKey = "train/torch_rng";

torch::serialize::InputArchive openTrainingArchive(const std::filesystem::path& file) {
  std::string kind;
  auto archive = openCheckpointArchive(file, &kind);
  if (kind != "training")
    throw InputError(file.string() + " is a MedSeg " + kind +
                     " file without training state; resume from the run folder's checkpoint.pt");
  return archive;
}

TrainingState readState(torch::serialize::InputArchive& archive, const std::filesystem::path& file) {
  c10::IValue value;
  if (!archive.try_read(kStateKey, value) || !value.isString())
    throw InputError(file.string() + ": training checkpoint has no training state");
  try {
    return TrainingState::fromJson(nlohmann::json::parse(value.toStringRef()));
  } catch (const nlohmann::json::exception& error) {
    throw InputError(file.string() + ": training state is damaged: " + error.what());
  }
}

}  // namespace

nlohmann::json TrainingState::toJson() const {
  return {{"step", step},
          {"epoch", epoch},
          {"epoch_loss_sum", epochLossSum},
          {"epoch_loss_count", epochLossCount},
          {"epoch_wait_seconds", epochWaitSeconds},
          {"epoch_seconds", epochSeconds},
          {"best_wt_dice", bestWholeTumourDice},
          {"best_epoch", bestEpoch},
          {"elapsed_seconds", elapsedSeconds},
          {"sampler_seed", samplerSeed},
          {"config", config}};
}

TrainingState TrainingState::fromJson(const nlohmann::json& json) {
  TrainingState s;
  s.step = json.at("step").get<int64_t>();
  s.epoch = json.at("epoch").get<int64_t>();
  s.epochLossSum = json.at("epoch_loss_sum").get<double>();
  s.epochLossCount = json.at("epoch_loss_count").get<int64_t>();
  s.epochWaitSeconds = json.value("epoch_wait_seconds", 0.0);
  s.epochSeconds = json.value("epoch_seconds", 0.0);
  s.bestWholeTumourDice = json.at("best_wt_dice").get<double>();
  s.bestEpoch = json.at("best_epoch").get<int64_t>();
  s.elapsedSeconds = json.value("elapsed_seconds", 0.0);
  s.samplerSeed = json.at("sampler_seed").get<uint64_t>();
  s.config = json.at("config");
  return s;
}

void saveTrainingCheckpoint(const std::filesystem::path& file, UNet3d& model, torch::optim::Optimizer& optimizer,
                            const ModelDescription& description, const TrainingState& state) {
  torch::serialize::OutputArchive archive;
  writeModelEntries(archive, model, description, "training");
  torch::serialize::OutputArchive optimizerArchive;
  optimizer.save(optimizerArchive);
  archive.write(kOptimizerKey, optimizerArchive);
  archive.write(kStateKey, c10::IValue(state.toJson().dump()));
  {
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    archive.write(kRngKey, generator.get_state(), /*is_buffer=*/true);
  }
  writeAtomically(file, [&archive](const std::filesystem::path& temp) { archive.save_to(temp.string()); });
}

TrainingState readTrainingState(const std::filesystem::path& file) {
  auto archive = openTrainingArchive(file);
  return readState(archive, file);
}

TrainingState loadTrainingCheckpoint(const std::filesystem::path& file, UNet3d& model, torch::optim::Optimizer& optimizer) {
  auto archive = openTrainingArchive(file);
  const auto state = readState(archive, file);
  readModelWeights(archive, model, file);
  torch::serialize::InputArchive optimizerArchive;
  if (!archive.try_read(kOptimizerKey, optimizerArchive))
    throw InputError(file.string() + ": training checkpoint has no optimizer state");
  try {
    optimizer.load(optimizerArchive);
  } catch (const c10::Error& error) {
    throw InputError(file.string() + ": optimizer state does not match the configured optimizer: " +
                     error.msg().substr(0, 200));
  }
  torch::Tensor rng;
  if (archive.try_read(kRngKey, rng, /*is_buffer=*/true)) {
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(rng);
  }
  return state;
}

}  // namespace medseg
