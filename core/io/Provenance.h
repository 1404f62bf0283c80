#pragma once
// Where a saved mask came from and what was done to it, as a JSON sidecar beside it
// (<stem>.provenance.json, written atomically): the model and plugin that predicted it, the edits a
// person made, the voxels they changed per label, and when. The record travels with the mask into a
// training set, so a corrected case can be told from a predicted one.
#include <filesystem>

#include <nlohmann/json.hpp>

namespace medseg {

std::filesystem::path provenancePathFor(const std::filesystem::path& mask);
void writeProvenanceBeside(const nlohmann::json& record, const std::filesystem::path& mask);
// The record beside `mask`, or null when there is none; ImageIOError for one that is not JSON.
nlohmann::json readProvenanceBeside(const std::filesystem::path& mask);

}  // namespace medseg
