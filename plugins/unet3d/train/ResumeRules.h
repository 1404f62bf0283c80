#pragma once
// What a resumed training run may change and how its journal is made to match its checkpoint; the
// same rules for the single-process, data-parallel and model-parallel trainers.
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace medseg {

// Top-level config keys a resumed run may change without changing what is computed.
const std::set<std::string>& resumableConfigKeys();

// Throws InputError naming the differing keys when `current` (TrainConfig::toJson) would compute
// something else than `saved`, the config stored in `checkpoint`.
void requireSameComputation(nlohmann::json saved, nlohmann::json current, const std::filesystem::path& checkpoint);

// A run killed between logging an epoch and committing that epoch's checkpoint repeats the epoch
// when resumed: the JSON-lines records after `step` are dropped so each epoch is logged once.
void dropMetricsAfterStep(const std::filesystem::path& metricsPath, int64_t step);

}  // namespace medseg
