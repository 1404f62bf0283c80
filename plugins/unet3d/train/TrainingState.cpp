#include "plugins/unet3d/train/TrainingState.h"

#include <optional>

#include "core/util/Interrupt.h"
#include "core/util/JsonNumbers.h"

namespace medseg {
namespace {

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

}  // namespace medseg
