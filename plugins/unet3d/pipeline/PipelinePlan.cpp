#include "plugins/unet3d/pipeline/PipelinePlan.h"

#include <sstream>

#include "core/util/Interrupt.h"

namespace medseg::unet3d {

std::vector<BlockSpec> PipelinePlan::blocksOf(const std::vector<BlockSpec>& blocks, int stage) const {
  validate(blocks.size());
  const auto begin = stageStarts.at(static_cast<size_t>(stage));
  const auto end = stage + 1 < stages() ? stageStarts[static_cast<size_t>(stage) + 1] : static_cast<int64_t>(blocks.size());
  return {blocks.begin() + begin, blocks.begin() + end};
}

void PipelinePlan::validate(size_t blockCount) const {
  if (stageStarts.empty() || stageStarts.front() != 0) throw InputError("pipeline plan: the first stage must start at block 0");
  for (size_t s = 1; s < stageStarts.size(); ++s)
    if (stageStarts[s] <= stageStarts[s - 1] || stageStarts[s] >= static_cast<int64_t>(blockCount))
      throw InputError("pipeline plan: stage starts must increase and stay below the " + std::to_string(blockCount) +
                       " blocks of the network (every stage needs at least one block)");
  if (microBatches < 1) throw InputError("pipeline plan: micro_batches must be at least 1");
}

nlohmann::json PipelinePlan::toJson(const std::vector<BlockSpec>& blocks) const {
  nlohmann::json names = nlohmann::json::array();
  for (int s = 0; s < stages(); ++s) {
    nlohmann::json stage = nlohmann::json::array();
    for (const auto& block : blocksOf(blocks, s)) stage.push_back(block.name());
    names.push_back(stage);
  }
  return {{"stage_starts", stageStarts}, {"schedule", scheduleKindName(schedule)}, {"micro_batches", microBatches},
          {"checkpoint", checkpoint},    {"stages", names}};
}

PipelinePlan PipelinePlan::fromJson(const nlohmann::json& json) {
  PipelinePlan plan;
  plan.stageStarts = json.at("stage_starts").get<std::vector<int64_t>>();
  plan.schedule = parseScheduleKind(json.at("schedule").get<std::string>());
  plan.microBatches = json.at("micro_batches").get<int64_t>();
  plan.checkpoint = json.at("checkpoint").get<bool>();
  return plan;
}

std::vector<int64_t> parseStageStarts(const std::string& text, const std::vector<BlockSpec>& blocks) {
  std::vector<int64_t> starts{0};
  std::stringstream stream(text);
  std::string name;
  while (std::getline(stream, name, ',')) {
    int64_t found = -1;
    for (size_t i = 0; i < blocks.size(); ++i)
      if (blocks[i].name() == name) found = static_cast<int64_t>(i);
    if (found < 0) {
      std::string known;
      for (const auto& b : blocks) known += (known.empty() ? "" : ", ") + b.name();
      throw InputError("--split: no block \"" + name + "\" in this network; blocks are " + known);
    }
    starts.push_back(found);
  }
  return starts;
}

}  // namespace medseg::unet3d
