#include "plugins/unet3d/pipeline/PipelineCheckpoint.h"

#if MEDSEG_HAVE_MPI
#include <optional>

#include "core/mpi/MpiMessages.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "core/util/JsonNumbers.h"

namespace medseg::unet3d {
namespace {

namespace fs = std::filesystem;

constexpr const char* kStateFormat = "medseg-pipeline-checkpoint";
constexpr const char* kMetaKey = "pipeline/stage";
constexpr const char* kParametersKey = "pipeline/parameters";
constexpr const char* kBuffersKey = "pipeline/buffers";
constexpr const char* kOptimizerKey = "pipeline/optimizer";
constexpr const char* kRngKey = "pipeline/torch_rng";

std::string stageFilePrefix(int stage) { return "stage-" + std::to_string(stage) + "-step-"; }

fs::path stageFilePath(const fs::path& runDir, int stage, int64_t step) {
  return pipelineCheckpointDir(runDir) / (stageFilePrefix(stage) + std::to_string(step) + ".pt");
}

// Every buffer of the network (batch-norm statistics): only the local stage's change here, the others
// keep their initial values on save and load alike, and the set is small.
std::vector<torch::Tensor> bufferTensors(const UNet3d& network) {
  std::vector<torch::Tensor> out;
  for (const auto& item : network->named_buffers()) out.push_back(item.value());
  return out;
}

std::vector<std::string> bufferNames(const UNet3d& network) {
  std::vector<std::string> out;
  for (const auto& item : network->named_buffers()) out.push_back(item.key());
  return out;
}

// What identifies a stage file; a resumed stage must expect exactly this (same split, same network).
nlohmann::json stageMeta(PipelineEngine& engine, const PipelineStage& stage, int64_t step) {
  return {{"stage", stage.index()},
          {"stages", engine.plan().stages()},
          {"step", step},
          {"parameters", stage.parameterNames()},
          {"buffers", bufferNames(engine.network())}};
}

// Tensors keyed by position: parameter names contain dots, which archive keys must not.
std::string positionKey(size_t i) { return "t" + std::to_string(i); }

torch::serialize::OutputArchive tensorArchive(const std::vector<torch::Tensor>& tensors) {
  torch::serialize::OutputArchive archive;
  for (size_t i = 0; i < tensors.size(); ++i) archive.write(positionKey(i), tensors[i].detach(), /*is_buffer=*/true);
  return archive;
}

void readTensorsInto(torch::serialize::InputArchive& archive, const char* key, const std::vector<torch::Tensor>& targets,
                     const fs::path& file) {
  torch::serialize::InputArchive tensors;
  if (!archive.try_read(key, tensors)) throw InputError(file.string() + ": pipeline stage checkpoint has no " + key);
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < targets.size(); ++i) {
    torch::Tensor value;
    if (!tensors.try_read(positionKey(i), value, /*is_buffer=*/true) || value.sizes() != targets[i].sizes())
      throw InputError(file.string() + ": tensor " + std::to_string(i) + " of " + key +
                       " is missing or has another shape than this network's");
    targets[i].copy_(value);
  }
}

void writeStageFile(PipelineEngine& engine, size_t local, int64_t step, const fs::path& runDir) {
  PipelineStage& stage = engine.stages().at(local);
  torch::serialize::OutputArchive archive;
  archive.write(kMetaKey, c10::IValue(stageMeta(engine, stage, step).dump()));
  auto parameters = tensorArchive(stage.parameters());
  archive.write(kParametersKey, parameters);
  auto buffers = tensorArchive(bufferTensors(engine.network()));
  archive.write(kBuffersKey, buffers);
  writeOptimizerEntry(archive, kOptimizerKey, engine.optimizer(local));
  writeGeneratorEntry(archive, kRngKey);
  writeArchiveAtomically(stageFilePath(runDir, stage.index(), step), archive);
}

torch::serialize::InputArchive openStageFile(const fs::path& file, torch::Device device, const fs::path& runDir, int64_t step) {
  if (!fs::exists(file))
    throw InputError("cannot resume: " + file.string() + " is missing, but " + pipelineStatePath(runDir).string() +
                     " names step " + std::to_string(step) + " for every stage (the run folder is incomplete)");
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(file.string(), device);  // optimiser state lands on the stage's device
  } catch (const c10::Error& error) {
    throw InputError(file.string() + ": unreadable or damaged pipeline stage checkpoint: " + error.msg().substr(0, 200));
  }
  return archive;
}

void requireMatchingMeta(torch::serialize::InputArchive& archive, const nlohmann::json& expected, const fs::path& file) {
  c10::IValue value;
  if (!archive.try_read(kMetaKey, value) || !value.isString())
    throw InputError(file.string() + ": not a MedSeg pipeline stage checkpoint (no " + kMetaKey + " entry)");
  const auto meta = nlohmann::json::parse(value.toStringRef(), nullptr, /*allow_exceptions=*/false);
  const auto savedStep = meta.is_object() && meta.contains("step") ? wholeNumber(meta["step"], 0) : std::nullopt;
  const int64_t step = expected.at("step").get<int64_t>();
  if (savedStep != step)
    throw InputError(file.string() + " holds step " + (savedStep ? std::to_string(*savedStep) : std::string("?")) +
                     " but state.json names step " + std::to_string(step) + ": the checkpoint is inconsistent");
  if (meta != expected)
    throw InputError(file.string() + " was written for another stage layout than this job's stage " +
                     expected.at("stage").dump() + " (stage count or its parameters differ)");
}

void readStageFile(PipelineEngine& engine, size_t local, int64_t step, const fs::path& runDir) {
  PipelineStage& stage = engine.stages().at(local);
  const fs::path file = stageFilePath(runDir, stage.index(), step);
  auto archive = openStageFile(file, stage.device(), runDir, step);
  requireMatchingMeta(archive, stageMeta(engine, stage, step), file);
  readTensorsInto(archive, kParametersKey, stage.parameters(), file);
  readTensorsInto(archive, kBuffersKey, bufferTensors(engine.network()), file);
  readOptimizerEntry(archive, kOptimizerKey, engine.optimizer(local), file);
  restoreGeneratorEntry(archive, kRngKey);
}

// This process's stage files other than step `keep`'s: older steps, and saves or temporaries a kill
// left unfinished. Only this process writes its stages' files, so none of them is still being written.
void removeOtherSteps(PipelineEngine& engine, const fs::path& runDir, int64_t keep) {
  std::vector<fs::path> stale;
  std::error_code ec;
  for (const auto& stage : engine.stages()) {
    const std::string prefix = stageFilePrefix(stage.index());
    const fs::path kept = stageFilePath(runDir, stage.index(), keep);
    for (const auto& entry : fs::directory_iterator(pipelineCheckpointDir(runDir), ec)) {
      const std::string name = entry.path().filename().string();
      const bool ours = name.rfind(prefix, 0) == 0 || name.rfind("." + prefix, 0) == 0;  // "."-named: temporaries
      if (ours && entry.path() != kept) stale.push_back(entry.path());
    }
  }
  for (const auto& file : stale) fs::remove(file, ec);
}

// "--split encoder2 --micro-batches 2 --schedule gpipe": the options that reproduce `plan`.
std::string planOptions(const PipelinePlan& plan, const std::vector<BlockSpec>& blocks) {
  std::string split;
  for (int s = 1; s < plan.stages(); ++s)
    split += (split.empty() ? "" : ",") + blocks.at(static_cast<size_t>(plan.stageStarts[static_cast<size_t>(s)])).name();
  return (split.empty() ? std::string() : "--split " + split + " ") + "--micro-batches " + std::to_string(plan.microBatches) +
         " --schedule " + scheduleKindName(plan.schedule) + (plan.checkpoint ? " --checkpoint" : "");
}

PipelinePlan savedPlan(const PipelineCheckpointState& saved, const std::vector<BlockSpec>& blocks, const fs::path& runDir) {
  try {
    PipelinePlan plan = PipelinePlan::fromJson(saved.plan);
    plan.validate(blocks.size());
    return plan;
  } catch (const std::exception& error) {
    throw InputError(pipelineStatePath(runDir).string() + ": the saved plan is damaged or not for this network: " + error.what());
  }
}

}  // namespace

nlohmann::json PipelineCheckpointState::toJson() const {
  return {{"format", kStateFormat}, {"version", 1}, {"plan", plan}, {"training", training.toJson()}};
}

PipelineCheckpointState PipelineCheckpointState::fromJson(const nlohmann::json& json) {
  if (!json.is_object() || json.value("format", std::string()) != kStateFormat)
    throw InputError(std::string("not a MedSeg pipeline checkpoint state (no \"format\": \"") + kStateFormat + "\")");
  PipelineCheckpointState s;
  if (!json.contains("training")) throw InputError("pipeline checkpoint state has no \"training\"");
  s.training = TrainingState::fromJson(json["training"]);
  if (json.contains("plan")) s.plan = json.at("plan");
  if (!s.plan.is_object()) throw InputError("pipeline checkpoint state \"plan\" must be a JSON object");
  return s;
}

fs::path pipelineCheckpointDir(const fs::path& runDir) { return runDir / "pipeline-checkpoint"; }
fs::path pipelineStatePath(const fs::path& runDir) { return pipelineCheckpointDir(runDir) / "state.json"; }
bool hasPipelineCheckpoint(const fs::path& runDir) { return !runDir.empty() && fs::exists(pipelineStatePath(runDir)); }

void savePipelineCheckpoint(PipelineEngine& engine, const fs::path& runDir, const PipelineCheckpointState& state, MPI_Comm comm) {
  const int64_t step = state.training.step;
  std::error_code ec;
  fs::create_directories(pipelineCheckpointDir(runDir), ec);  // a real failure surfaces in the write below, with its reason
  for (size_t i = 0; i < engine.stages().size(); ++i) writeStageFile(engine, i, step, runDir);
  mpi::checkMpi(MPI_Barrier(comm), "MPI_Barrier (stage checkpoints written)");
  if (mpi::rankOf(comm) == 0) writeFileAtomically(pipelineStatePath(runDir), state.toJson().dump(2) + "\n");
  mpi::checkMpi(MPI_Barrier(comm), "MPI_Barrier (pipeline checkpoint committed)");
  removeOtherSteps(engine, runDir, step);
}

PipelineCheckpointState readPipelineCheckpointState(const fs::path& runDir) {
  const fs::path file = pipelineStatePath(runDir);
  if (!fs::exists(file)) throw InputError("cannot resume: " + file.string() + " does not exist (start the run without --resume)");
  try {
    return PipelineCheckpointState::fromJson(nlohmann::json::parse(readTextFile(file)));
  } catch (const nlohmann::json::exception& error) {
    throw InputError(file.string() + " is damaged: " + error.what());
  } catch (const InputError& error) {
    throw InputError(file.string() + ": " + error.what());
  }
}

void loadPipelineCheckpoint(PipelineEngine& engine, const fs::path& runDir, const PipelineCheckpointState& state) {
  const int64_t step = state.training.step;
  for (size_t i = 0; i < engine.stages().size(); ++i) readStageFile(engine, i, step, runDir);
  engine.setStepIndex(step);
  removeOtherSteps(engine, runDir, step);
}

PipelinePlan planForResume(const PipelineCheckpointState& saved, const TrainConfig& config, const ModelParallelOptions& options) {
  const auto blocks = unetBlocks(config.network);
  const PipelinePlan plan = savedPlan(saved, blocks, options.runDir);
  const std::string savedOptions = planOptions(plan, blocks);
  const int stages = stageCount(options);
  if (stages != plan.stages())
    throw InputError("cannot resume " + options.runDir.string() + ": its checkpoint has " + std::to_string(plan.stages()) +
                     " pipeline stages (" + savedOptions + ") but this job has " + std::to_string(stages) +
                     " (one per rank, or --local-stages); start it with " + std::to_string(plan.stages()) +
                     " stages, or start over with --fresh");
  // Without --split the partitioner would choose again from timings; the saved boundaries stand instead.
  PipelinePlan asked = plan;
  if (!options.split.empty()) asked.stageStarts = parseStageStarts(options.split, blocks);
  asked.schedule = parseScheduleKind(options.schedule);
  asked.microBatches = options.microBatches;
  asked.checkpoint = options.checkpoint;
  asked.validate(blocks.size());
  const std::string askedOptions = planOptions(asked, blocks);
  if (askedOptions != savedOptions)
    throw InputError("cannot resume " + options.runDir.string() + ": its checkpoint was trained with " + savedOptions +
                     " but this job asks for " + askedOptions + "; pass the same options, or start over with --fresh");
  return plan;
}

}  // namespace medseg::unet3d
#endif
