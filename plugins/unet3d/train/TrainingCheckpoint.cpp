#include "plugins/unet3d/train/TrainingCheckpoint.h"

#include <ATen/CPUGeneratorImpl.h>

#include <optional>

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "core/util/JsonNumbers.h"

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
    return parseTrainingState(value.toStringRef());
  } catch (const InputError& error) {
    throw InputError(file.string() + ": " + error.what());
  }
}

// Fields of the state, type-checked: a damaged or hand-edited checkpoint is an InputError naming the
// field, never a JSON library exception or an out-of-range cast.
const nlohmann::json& field(const nlohmann::json& json, const char* key) {
  const auto it = json.find(key);
  if (it == json.end()) throw InputError(std::string("training state has no \"") + key + "\"");
  return *it;
}

int64_t countField(const nlohmann::json& json, const char* key) {
  const auto value = wholeNumber(field(json, key), 0);
  if (!value) throw InputError(std::string("training state \"") + key + "\" must be a whole number >= 0");
  return *value;
}

double numberField(const nlohmann::json& json, const char* key, std::optional<double> fallback = std::nullopt) {
  if (fallback && !json.contains(key)) return *fallback;
  const auto& value = field(json, key);
  if (!value.is_number()) throw InputError(std::string("training state \"") + key + "\" must be a number");
  return value.get<double>();
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
  if (!json.is_object()) throw InputError("training state must be a JSON object");
  TrainingState s;
  s.step = countField(json, "step");
  s.epoch = countField(json, "epoch");
  s.epochLossSum = numberField(json, "epoch_loss_sum");
  s.epochLossCount = countField(json, "epoch_loss_count");
  s.epochWaitSeconds = numberField(json, "epoch_wait_seconds", 0.0);
  s.epochSeconds = numberField(json, "epoch_seconds", 0.0);
  s.bestWholeTumourDice = numberField(json, "best_wt_dice");
  const auto bestEpoch = wholeNumber(field(json, "best_epoch"), -1);
  if (!bestEpoch) throw InputError("training state \"best_epoch\" must be a whole number >= -1");
  s.bestEpoch = *bestEpoch;
  s.elapsedSeconds = numberField(json, "elapsed_seconds", 0.0);
  const auto& seed = field(json, "sampler_seed");
  if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<int64_t>() >= 0))
    throw InputError("training state \"sampler_seed\" must be a whole number >= 0");
  s.samplerSeed = seed.get<uint64_t>();
  s.config = field(json, "config");
  if (!s.config.is_object()) throw InputError("training state \"config\" must be a JSON object");
  return s;
}

TrainingState parseTrainingState(const std::string& text) {
  try {
    return TrainingState::fromJson(nlohmann::json::parse(text));
  } catch (const nlohmann::json::exception& error) {
    throw InputError(std::string("training state is damaged: ") + error.what());
  }
}

void saveTrainingCheckpoint(const std::filesystem::path& file, UNet3d& model, torch::optim::Optimizer& optimizer,
                            const ModelDescription& description, const TrainingState& state) {
  torch::serialize::OutputArchive archive;
  writeModelEntries(archive, model, description, "training");
  writeOptimizerEntry(archive, kOptimizerKey, optimizer);
  archive.write(kStateKey, c10::IValue(state.toJson().dump()));
  writeGeneratorEntry(archive, kRngKey);
  writeArchiveAtomically(file, archive);
}

TrainingState readTrainingState(const std::filesystem::path& file) {
  auto archive = openTrainingArchive(file);
  return readState(archive, file);
}

TrainingState loadTrainingCheckpoint(const std::filesystem::path& file, UNet3d& model, torch::optim::Optimizer& optimizer) {
  auto archive = openTrainingArchive(file);
  const auto state = readState(archive, file);
  readModelWeights(archive, model, file);
  readOptimizerEntry(archive, kOptimizerKey, optimizer, file);
  restoreGeneratorEntry(archive, kRngKey);
  return state;
}

void writeOptimizerEntry(torch::serialize::OutputArchive& archive, const std::string& key, torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive state;
  optimizer.save(state);
  archive.write(key, state);
}

void readOptimizerEntry(torch::serialize::InputArchive& archive, const std::string& key, torch::optim::Optimizer& optimizer,
                        const std::filesystem::path& file) {
  torch::serialize::InputArchive state;
  if (!archive.try_read(key, state)) throw InputError(file.string() + ": checkpoint has no optimizer state (" + key + ")");
  try {
    optimizer.load(state);
  } catch (const c10::Error& error) {
    throw InputError(file.string() + ": optimizer state does not match the configured optimizer: " +
                     error.msg().substr(0, 200));
  }
}

void writeGeneratorEntry(torch::serialize::OutputArchive& archive, const std::string& key) {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  archive.write(key, generator.get_state(), /*is_buffer=*/true);
}

void restoreGeneratorEntry(torch::serialize::InputArchive& archive, const std::string& key) {
  torch::Tensor state;
  if (!archive.try_read(key, state, /*is_buffer=*/true)) return;
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state.to(torch::kCPU));
}

}  // namespace medseg
