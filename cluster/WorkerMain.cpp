// medseg-worker: the headless program `mpirun` starts on every rank of a cluster run.
//   medseg-worker --run-dir DIR --mode data|experiment --config FILE [--data DIR] [--group-size G]
//                 [--set key=value ...] [--bucket-mb 25] [--no-overlap] [--json] [--probe-allreduce]
// Training and inference go through the plugins (core/plugin/PluginRegistry.h: --plugin-path,
// MEDSEG_PLUGIN_PATH, the installed folder); the config's `plugin:` key names the training plugin
// (default unet3d), --plugin the inference plugin of infer mode (default: the one recognising --model).
// data: one training, data parallel over all ranks (the plugin's allreduce step strategy, capability
// data_parallel), continuing the run folder's checkpoint.pt when there is one (a resubmitted or
// requeued run); experiment: a search, rank 0 coordinating, the others training trials in groups
// (ExperimentSearch); model: the model split into pipeline stages, one per rank (capability
// pipeline): --task train is the plugin's train() with a "pipeline" parallel section (the parameters
// of its task "pipeline"), continuing a checkpoint there only with --resume (or starting over with
// --fresh); verify, bench and infer are its task "pipeline":
//   --mode model --task train|verify|bench|infer [--resume | --fresh] [--split encoder2,...] [--memory-per-device MB[,MB..]]
//                [--micro-batches M] [--schedule gpipe|1f1b] [--recompute] [--device cpu|cuda] [--local-stages K]
//                [--model FILE --cases N --infer-size X,Y,Z --roi R --overlap F --skip-sliding]
// infer: the data set's cases segmented with a trained model, dealt to the ranks largest first, into
// DIR/masks/, with DIR/metrics.csv against the labels (cluster/infer/DistributedInference.h):
//   --mode infer --model FILE_OR_FOLDER --data DIR [--subset test|training|all] [--whole-volume] [--roi R --overlap F]
//                [--set NAME=VALUE ...: the inference plugin's parameters, `medseg plugins info ID`]
// Every rank except in model mode takes its device by local rank (cluster/parallel/DevicePlacement.h:
// --device, else the config's device, else auto) and logs it to DIR/logs/placement.jsonl. When DIR is
// a run folder made by `medseg submit` (run.json), rank 0 marks it running, then finished or failed.
// In experiment mode on the CPU each trial worker of a node is pinned to its own block of the node's
// CPUs (pinTrialWorker).
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>

#include "cluster/infer/DistributedInference.h"
#include "cluster/parallel/AllreduceProbe.h"
#include "cluster/parallel/DevicePlacement.h"
#include "cluster/parallel/ExperimentSearch.h"
#include "cluster/parallel/MpiEnvironment.h"
#include "cluster/submit/RunDirectory.h"
#include "core/infer/InferenceJob.h"
#include "core/plugin/PluginRegistry.h"
#include "core/util/AtomicFile.h"
#include "core/util/ConfigDocument.h"
#include "core/util/Cores.h"
#include "core/util/Interrupt.h"
#include "core/nn/CudaDeviceCount.h"
#include "core/nn/ProcessMemory.h"
#include "core/plugin/DefaultPlugin.h"

namespace {

using namespace medseg;
using namespace medseg::cluster;

// Model mode: the parameters of the training plugin's task "pipeline" (and --model, --roi, --overlap of infer).
struct ModelModeOptions {
  std::string task = "train";
  bool resume = false;
  std::string split;
  std::vector<double> memoryPerDeviceMb;
  int64_t microBatches = 2;
  std::string schedule = "gpipe";
  bool checkpoint = false;
  std::string device = "cpu";
  int localStages = 0;
  int64_t profileEdge = 0, benchSteps = 2;
  int maxFitStages = 2;
  int64_t maxFitEdge = 256;
  std::string model;
  int64_t cases = 1;
  std::vector<int64_t> inferSize, roi;
  std::optional<double> overlap;  // unset: the plugin's own default
  bool skipSliding = false;
};

struct WorkerOptions {
  std::vector<std::string> pluginPaths;
  std::string inferPlugin;   // --mode infer: --plugin
  std::string runDir, mode = "data", config, data;
  int groupSize = 1;
  std::vector<std::string> overrides;
  double bucketMb = 25.0;
  bool noOverlap = false;
  bool json = false;
  bool fresh = false;
  bool probeAllreduce = false;  // data mode: time MPI_Allreduce after training (allreduce.json)
  std::string device;          // empty: the config's (training), auto (infer)
  std::string subset = "test";  // --mode infer
  bool wholeVolume = false;     // --mode infer
  ModelModeOptions model;  // --mode model (and --model, --roi, --overlap of infer)
};

// Records the run's state when DIR is a submitted run folder; a plain output folder has none.
void markState(const std::filesystem::path& dir, RunState state, const nlohmann::json& fields = nlohmann::json::object()) {
  if (!std::filesystem::exists(dir / "run.json")) return;
  try {
    RunDirectory::open(dir).advance(state, fields);  // a run cancelled or ended meanwhile keeps that state
  } catch (const std::exception& error) {
    std::cerr << "medseg-worker: cannot update " << (dir / "run.json").string() << ": " << error.what() << "\n";
  }
}

// Ranks share the node's cores: without an explicit thread count each gets its share.
int64_t defaultThreads(const MpiEnvironment& mpi) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()) / std::max(1, mpi.localSize()));
}

// Times MPI_Allreduce on all ranks at a few sizes (after training, so it does not slow the run it
// measures) and writes DIR/allreduce.json on rank 0 for `medseg scaling` to fit the link with.
void writeAllreduceProbe(const std::filesystem::path& runDir, const MpiEnvironment& mpi) {
  const auto samples = probeAllreduce(MPI_COMM_WORLD, defaultProbeBytes());
  if (mpi.rank() != 0) return;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& sample : samples) list.push_back({{"bytes", sample.bytes}, {"seconds", sample.seconds}});
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(host, &length);
  writeFileAtomically(runDir / "allreduce.json",
                      nlohmann::json({{"ranks", mpi.size()}, {"host", std::string(host, length)}, {"samples", list}}).dump(2) + "\n");
}

// This rank's device from its node-local rank and the devices it sees, logged to the run's logs/.
std::string placeThisRank(const MpiEnvironment& mpi, const std::string& wanted, const std::filesystem::path& runDir) {
  const DevicePlacement placement =
      placeRank(mpi.localRank(), mpi.localSize(), cudaDeviceCount(), wanted);
  recordPlacement(runDir, mpi.rank(), placement);
  std::cerr << "medseg-worker rank " << mpi.rank() << ": " << placement.message << "\n";
  return placement.device;
}

// Experiment mode on the CPU: each trial worker of a node runs on its own block of the CPUs it may use
// (core/util/Cores.h), and its warm trial process, started later from this thread, inherits the
// block; two workers never queue for one core while another idles. The coordinator (world rank 0)
// mostly sleeps and stays unpinned. Collective: every rank calls it.
void pinTrialWorker(const MpiEnvironment& mpi) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  const std::string host(name, static_cast<size_t>(length));
  const bool withCoordinator = mpi::broadcastString(host, 0, MPI_COMM_WORLD) == host;
  if (mpi.rank() == 0) return;
  // Node-local ranks are ordered by world rank, so the coordinator is local rank 0 of its node.
  const int workers = mpi.localSize() - (withCoordinator ? 1 : 0);
  const int index = mpi.localRank() - (withCoordinator ? 1 : 0);
  const std::vector<int> cpus = usableCpus();
  const std::vector<int> block = cpuBlock(cpus, index, workers);
  std::cerr << "medseg-worker rank " << mpi.rank() << ": trial worker " << index + 1 << " of " << workers << " on " << host;
  if (block.empty()) {
    std::cerr << ", not pinned (" << cpus.size() << " CPU(s) " << cpuListText(cpus) << " for " << workers << " workers)\n";
    return;
  }
  pinThisThread(block);
  std::cerr << ", pinned to CPU(s) " << cpuListText(block) << "\n";
}

// The config file with the overrides applied, and the training plugin it names (its `plugin:` key,
// taken out of the document the plugin reads).
nlohmann::json trainingDocument(const WorkerOptions& o, const std::vector<std::string>& overrides, std::string* plugin) {
  nlohmann::json document = readConfigDocument(o.config);
  for (const auto& assignment : overrides) applyOverride(document, assignment);
  *plugin = document.value("plugin", std::string(plugin::kDefaultTrainingPlugin));
  document.erase("plugin");
  return document;
}

// All ranks as the plugins see them. The communicator goes by address (ParallelContext::mpiCommunicator),
// so it is one that lives as long as the process.
plugin::ParallelContext worldContext(const MpiEnvironment& mpi) {
  static const MPI_Comm world = MPI_COMM_WORLD;
  plugin::ParallelContext parallel;
  parallel.rank = parallel.globalRank = mpi.rank();
  parallel.size = mpi.size();
  parallel.localRank = mpi.localRank();
  parallel.localSize = mpi.localSize();
  parallel.mpiCommunicator = &world;
  return parallel;
}

nlohmann::json pipelineParameters(const WorkerOptions& o, const std::vector<std::string>& overrides, int64_t threads) {
  const auto& m = o.model;
  return {{"config", o.config},   {"overrides", overrides},     {"threads", threads},
          {"task", m.task},       {"run_dir", o.runDir},
          {"split", m.split},     {"memory_per_device", m.memoryPerDeviceMb},
          {"micro_batches", m.microBatches}, {"schedule", m.schedule}, {"checkpoint", m.checkpoint},
          {"device", m.device},   {"local_stages", m.localStages}, {"profile_edge", m.profileEdge},
          {"bench_steps", m.benchSteps}, {"fit_stages", m.maxFitStages}, {"fit_max_edge", m.maxFitEdge},
          {"model", m.model},     {"data", o.data},             {"cases", m.cases},
          {"infer_size", m.inferSize}, {"roi", m.roi},          {"overlap", m.overlap.value_or(0.5)},
          {"skip_sliding", m.skipSliding}};
}

// What one rank of a mode hands back: the summary rank 0 reports, and the exit code.
struct ModeResult {
  nlohmann::json summary;
  int code = 0;
};

// The plugins, the run folder and the ranks every mode works with.
struct WorkerRun {
  const WorkerOptions& options;
  const MpiEnvironment& mpi;
  plugin::PluginRegistry& plugins;
  Reporter& reporter;
  std::filesystem::path runDir;
  std::vector<std::string> overrides;  // the config overrides, with data= when --data is given
};

// data: one training, data parallel over all ranks.
ModeResult trainDataParallel(const WorkerRun& w) {
  const WorkerOptions& o = w.options;
  std::string pluginId;
  plugin::TrainingRequest request;
  request.config = trainingDocument(o, w.overrides, &pluginId);
  if (request.config.value("threads", int64_t{0}) <= 0) request.config["threads"] = defaultThreads(w.mpi);
  request.config["device"] =
      placeThisRank(w.mpi, o.device.empty() ? request.config.value("device", std::string("auto")) : o.device, w.runDir);
  if (!w.plugins.entry(pluginId).manifest.capabilities.dataParallel)
    throw InputError("plugin " + pluginId + " does not train data parallel (its capabilities: no data_parallel)");
  request.runDir = w.runDir;
  request.bucketMb = o.bucketMb;
  request.overlapCommunication = !o.noOverlap;
  // A run folder holding a checkpoint is a run that was cut off (a rank died, the job hit its time
  // limit, Slurm requeued it): continue it. One killed before its first checkpoint starts over.
  request.resume = o.fresh ? plugin::ResumePolicy::Discard : plugin::ResumePolicy::ContinueIfSaved;
  request.continueHint = "medseg submit --resume " + w.runDir.string();
  plugin::RunContext context(w.reporter);
  context.setParallel(worldContext(w.mpi));
  ModeResult result{w.plugins.training(pluginId).train(request, context)};
  result.summary["plugin"] = pluginId;
  if (o.probeAllreduce) writeAllreduceProbe(w.runDir, w.mpi);
  return result;
}

// experiment: a search, rank 0 coordinating, the others training trials in groups.
ModeResult searchExperiments(const WorkerRun& w) {
  const WorkerOptions& o = w.options;
  ExperimentOptions options;
  options.configDocument = readConfigDocument(o.config);
  for (const auto& assignment : o.overrides) applyOverride(options.configDocument, assignment);
  if (!options.configDocument.contains("threads")) options.configDocument["threads"] = defaultThreads(w.mpi);
  const std::string wanted = o.device.empty() ? options.configDocument.value("device", std::string("auto")) : o.device;
  options.device = placeThisRank(w.mpi, wanted, w.runDir);
  if (mpi::maximumOverRanks(options.device == "cpu" ? 0 : 1, MPI_COMM_WORLD) == 0) pinTrialWorker(w.mpi);
  options.dataPath = o.data;
  options.runDir = w.runDir;
  options.groupSize = o.groupSize;
  options.plugins = &w.plugins;
  ModeResult result{runExperimentSearch(options, w.reporter).toJson()};
  if (w.mpi.rank() == 0) writeFileAtomically(w.runDir / "metrics.json", result.summary.dump(2) + "\n");
  return result;
}

// model --task train: one training through the plugin's train(), the model split into stages.
ModeResult trainPipeline(const WorkerRun& w, const std::string& pluginId, nlohmann::json document, nlohmann::json parameters) {
  const WorkerOptions& o = w.options;
  plugin::TrainingRequest request;
  if (document.value("threads", int64_t{0}) <= 0) document["threads"] = parameters.at("threads");
  request.config = std::move(document);
  request.runDir = w.runDir;
  // A pipeline checkpoint is continued or discarded only when asked: its stages are the plan's.
  request.resume = o.model.resume ? plugin::ResumePolicy::Resume
                   : o.fresh      ? plugin::ResumePolicy::Discard
                                  : plugin::ResumePolicy::Refuse;
  request.continueHint = "the same medseg-worker command with --resume";
  for (const char* unused : {"task", "config", "overrides", "run_dir"}) parameters.erase(unused);
  parameters["mode"] = "pipeline";
  request.parallel = std::move(parameters);
  plugin::RunContext context(w.reporter);
  context.setParallel(worldContext(w.mpi));
  ModeResult result{w.plugins.training(pluginId).train(request, context)};
  result.summary["task"] = "train";
  result.summary["plugin"] = pluginId;
  return result;
}

// model: the model split into pipeline stages, one per rank: training, or the plugin's task "pipeline".
ModeResult runPipelineTask(const WorkerRun& w) {
  const WorkerOptions& o = w.options;
  std::string pluginId;
  const nlohmann::json document = trainingDocument(o, w.overrides, &pluginId);
  const auto& manifest = w.plugins.entry(pluginId).manifest;
  const plugin::PluginTask* task = manifest.task("pipeline");
  if (!manifest.capabilities.pipeline || !task)
    throw InputError("plugin " + pluginId + " has no model parallelism (capability pipeline, task \"pipeline\")");
  if (!o.device.empty() && o.device != "cpu" && o.device != "cuda")
    throw InputError("--device: model mode takes cpu or cuda (stage r on cuda:<local rank>), found \"" + o.device + "\"");
  WorkerOptions given = o;
  if (!o.device.empty()) given.model.device = o.device;
  const int64_t threads = document.value("threads", int64_t{0}) > 0 ? document["threads"].get<int64_t>() : defaultThreads(w.mpi);
  nlohmann::json givenParameters = pipelineParameters(given, w.overrides, threads);
  const bool training = o.model.task == "train";
  if (training) givenParameters.erase("task");  // the task's own runs are verify, bench and infer
  const nlohmann::json parameters = task->parameters.resolve(givenParameters, "plugin " + pluginId + "'s task pipeline");
  if (training) return trainPipeline(w, pluginId, document, parameters);
  plugin::RunContext context(w.reporter);
  context.setParallel(worldContext(w.mpi));
  ModeResult result{w.plugins.load(pluginId).runTask("pipeline", parameters, context)};
  result.summary["plugin"] = pluginId;
  return result;
}

// infer: the data set's cases dealt to the ranks and segmented through the inference plugin.
ModeResult segmentCohort(const WorkerRun& w) {
  const WorkerOptions& o = w.options;
  if (o.model.model.empty()) throw InputError("--mode infer needs --model (a model file or folder)");
  if (o.data.empty()) throw InputError("--mode infer needs --data DIR (the data set to segment)");
  DistributedInferenceOptions options;
  options.plugins = &w.plugins;
  options.runDir = w.runDir;
  options.rank = w.mpi.rank();
  options.inference.plugin = o.inferPlugin;
  options.inference.model = o.model.model;
  options.inference.input = o.data;
  options.inference.subset = o.subset;
  // Only what was asked for: each plugin has its own parameters and defaults (--set NAME=VALUE for any).
  auto& parameters = options.inference.parameters;
  if (o.wholeVolume) parameters["whole_volume"] = true;
  if (!o.model.roi.empty()) parameters["roi"] = o.model.roi;
  if (o.model.overlap) parameters["overlap"] = *o.model.overlap;
  const std::string pluginId = inferencePluginId(options.inference, w.plugins);
  parameters.update(w.plugins.entry(pluginId).manifest.inferParameters.parseAssignments(
      o.overrides, "plugin " + pluginId + "'s infer parameters"));
  options.inference.threads = static_cast<int>(defaultThreads(w.mpi));
  options.inference.device = placeThisRank(w.mpi, o.device.empty() ? "auto" : o.device, w.runDir);
  const DistributedInferenceResult segmented = runDistributedInference(options, w.reporter);
  ModeResult result{segmented.toJson()};
  if (segmented.failed > 0) result.code = segmented.failuresAreBadInput ? 3 : 4;
  return result;
}

// Rank 0 reports the run's result and marks the run folder finished or failed.
void reportResult(const WorkerRun& w, ModeResult& result) {
  if (w.mpi.rank() != 0) return;
  result.summary["event"] = "result";
  result.summary["kind"] = w.options.mode;
  if (w.reporter.json())
    w.reporter.emit(result.summary);
  else
    std::cout << result.summary.dump(2) << "\n";
  if (result.code == 0)
    markState(w.runDir, RunState::Finished);
  else
    markState(w.runDir, RunState::Failed, {{"message", std::to_string(result.summary.value("failed", 0)) +
                                                           " case(s) failed; see progress.jsonl and logs/launcher.err"}});
}

int run(const WorkerOptions& o, const MpiEnvironment& mpi) {
  Reporter reporter(o.json ? OutputMode::JsonLines : OutputMode::Human);
  std::vector<std::filesystem::path> extra(o.pluginPaths.begin(), o.pluginPaths.end());
  plugin::PluginRegistry plugins(plugin::PluginRegistry::searchPath(extra));
  WorkerRun w{o, mpi, plugins, reporter, o.runDir, o.overrides};
  if (!o.data.empty()) w.overrides.push_back("data=" + o.data);
  if (mpi.rank() == 0) markState(w.runDir, RunState::Running, {{"ranks", mpi.size()}});
  if (o.config.empty() && o.mode != "infer") throw InputError("--config FILE is required in " + o.mode + " mode");
  const std::map<std::string, ModeResult (*)(const WorkerRun&)> modes{
      {"data", &trainDataParallel}, {"experiment", &searchExperiments}, {"model", &runPipelineTask}, {"infer", &segmentCohort}};
  const auto mode = modes.find(o.mode);
  if (mode == modes.end()) throw InputError("--mode: expected data, experiment, model or infer, found \"" + o.mode + "\"");
  ModeResult result = mode->second(w);
  reportResult(w, result);
  return result.code;
}

}  // namespace

int main(int argc, char** argv) {
  keepFreedMemoryInProcess();  // core/nn/ProcessMemory.h: glibc heap + LibTorch block cache
  installInterruptHandlers();  // before MPI starts its threads, so they inherit the blocked stop signals
  MpiEnvironment mpi(&argc, &argv);
  CLI::App app{"medseg-worker: one rank of a MedSeg cluster run (started by mpirun)", "medseg-worker"};
  WorkerOptions o;
  app.add_option("--plugin-path", o.pluginPaths, "Folder of plugins searched before MEDSEG_PLUGIN_PATH (repeatable)");
  app.add_option("--plugin", o.inferPlugin, "Infer mode: inference plugin (default: the one recognising --model)");
  app.add_option("--run-dir", o.runDir, "Run folder (outputs; run.json state when made by medseg submit)")->required();
  app.add_option("--mode", o.mode, "data, experiment, model or infer")->check(CLI::IsMember({"data", "experiment", "model", "infer"}));
  app.add_option("--config", o.config, "Training config (YAML/JSON; search section for experiment mode); not for infer");
  app.add_option("--data", o.data, "Data-set folder (overrides the config's data)");
  app.add_option("--group-size", o.groupSize, "Experiment mode: ranks per trial")->check(CLI::PositiveNumber);
  app.add_option("--set", o.overrides, "Config override key=value (repeatable); infer mode: a plugin parameter NAME=VALUE");
  app.add_option("--bucket-mb", o.bucketMb, "Gradient bucket size in MiB")->check(CLI::PositiveNumber);
  app.add_flag("--no-overlap", o.noOverlap, "Reduce gradients after backward instead of during it");
  app.add_flag("--json", o.json, "JSON-lines output on rank 0");
  app.add_flag("--probe-allreduce", o.probeAllreduce, "Data mode: time MPI_Allreduce at several sizes after training (allreduce.json)");
  auto& m = o.model;
  app.add_option("--task", m.task, "Model mode: train, verify, bench or infer")
      ->check(CLI::IsMember({"train", "verify", "bench", "infer"}));
  app.add_option("--split", m.split, "Model mode: first block of stages 1.. (e.g. encoder2); default: the partitioner");
  app.add_option("--memory-per-device", m.memoryPerDeviceMb, "Model mode: memory budget per device in MiB (one, or one per stage)")
      ->delimiter(',');
  app.add_option("--micro-batches", m.microBatches, "Model mode: micro-batches per step (divides batch_size)")->check(CLI::PositiveNumber);
  app.add_option("--schedule", m.schedule, "Model mode: gpipe or 1f1b")->check(CLI::IsMember({"gpipe", "1f1b"}));
  // "checkpoint" is the resumable training state elsewhere; --checkpoint stays as this flag's old name.
  app.add_flag("--recompute,--checkpoint", m.checkpoint,
               "Model mode: keep only stage inputs and recompute activations in backward (activation checkpointing)");
  app.add_option("--device", o.device,
                 "auto, cpu, cuda or cuda:N (default: the config's); rank r takes cuda:(local rank mod GPUs); model mode: "
                 "cpu or cuda (stage r on cuda:<local rank>)");
  app.add_option("--subset", o.subset, "Infer mode: test, training or all")->check(CLI::IsMember({"test", "training", "all"}));
  app.add_flag("--whole-volume", o.wholeVolume, "Infer mode: one pass per case instead of sliding windows");
  app.add_option("--local-stages", m.localStages, "Model mode: this many stages in one process (GPUs cuda:0.. with --device cuda)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--profile-edge", m.profileEdge, "Model mode: profile blocks on a cube of this edge, scaled to the patch");
  app.add_option("--bench-steps", m.benchSteps, "Model mode bench: timed steps")->check(CLI::PositiveNumber);
  app.add_option("--fit-stages", m.maxFitStages, "Model mode bench: largest fitting patch for 1 .. N stages")->check(CLI::PositiveNumber);
  app.add_option("--fit-max-edge", m.maxFitEdge, "Model mode bench: largest patch edge tried")->check(CLI::PositiveNumber);
  app.add_option("--model", m.model, "Infer mode, model mode infer: trained model file");
  app.add_option("--cases", m.cases, "Model mode infer: labelled cases of --data to segment")->check(CLI::NonNegativeNumber);
  app.add_option("--infer-size", m.inferSize, "Model mode infer: also one pass over a random volume x,y,z")->delimiter(',')->expected(3);
  app.add_option("--roi", m.roi, "Model mode infer: sliding-window edge(s), default the patch")->delimiter(',');
  app.add_option("--overlap", m.overlap, "Model mode infer: sliding-window overlap")->check(CLI::Range(0.0, 0.95));
  app.add_flag("--skip-sliding", m.skipSliding, "Model mode infer: whole volume only");
  auto* resume = app.add_flag("--resume", m.resume,
                              "Model mode train: continue the run folder's pipeline checkpoint (data mode always continues)");
  app.add_flag("--fresh", o.fresh,
               "Start over even if the run folder holds a checkpoint (data mode: checkpoint.pt, which it otherwise "
               "continues; model mode train: pipeline-checkpoint/, which needs --resume or --fresh)")
      ->excludes(resume);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    return run(o, mpi);
  } catch (const Interrupted& stop) {
    // Every rank agreed on the step and the checkpoint of it is written: a clean stop, not a failure
    // of the job (a cancelled run keeps its state).
    if (mpi.rank() == 0) {
      std::cerr << "medseg-worker: " << stop.what() << "\n";
      markState(o.runDir, RunState::Failed, {{"message", std::string("interrupted: ") + stop.what()}, {"interrupted", true}});
    }
    return 130;
  } catch (const std::exception& error) {
    std::cerr << "medseg-worker rank " << mpi.rank() << ": error: " << error.what() << "\n";
    markState(o.runDir, RunState::Failed, {{"message", std::string("rank ") + std::to_string(mpi.rank()) + ": " + error.what()}});
    // The other ranks may be blocked in a collective: end the whole job rather than hang.
    MPI_Abort(MPI_COMM_WORLD, dynamic_cast<const InputError*>(&error) ? 3 : 4);
    return 4;
  }
}
