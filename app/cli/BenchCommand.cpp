// `medseg bench`: training and inference speed and memory on this machine, measured by the training
// plugin's task "bench" (plugins/unet3d/tasks/BenchTask.cpp: its network's training step, sliding-window
// and whole-volume inference on in-memory data); --pipeline runs the model-parallel benchmark through
// mpirun + medseg-worker (PipelineBench.h). The flags are the task's parameters (--base-filters is
// base_filters); `medseg plugins info unet3d` lists them with their ranges.
#include <memory>

#include "app/cli/CommandRegistry.h"
#include "app/cli/PipelineBench.h"
#include "app/cli/PluginTask.h"

namespace medseg::cli {
namespace {

struct BenchOptions {
  std::string plugin = "unet3d";
  int64_t baseFilters = 16, depth = 4;
  std::string norm = "instance";
  bool deepSupervision = false;
  int64_t batch = 2, patch = 64, steps = 8, warmup = 2;
  int threads = 0;
  int64_t roi = 96;
  double overlap = 0.5;
  std::vector<int64_t> inferSize{240, 240, 155};  // x, y, z as MSD
  bool skipTrain = false, skipInfer = false, wholeVolume = false;
  bool optimiseGraph = true;
  int64_t loaderWorkers = 2, batchShards = 0;
  std::string precision = "fp32";
  std::string volume = "brain";
  bool fixedBatch = false;
  std::string model;  // bench: the network timed; --pipeline: the trained model for Dice
  bool pipeline = false;
  PipelineBenchOptions pipe;  // --pipeline
};

nlohmann::json taskParameters(const BenchOptions& o) {
  return {{"base_filters", o.baseFilters}, {"depth", o.depth},           {"norm", o.norm},
          {"deep_supervision", o.deepSupervision}, {"batch", o.batch},   {"patch", o.patch},
          {"steps", o.steps},             {"warmup", o.warmup},          {"threads", o.threads},
          {"roi", o.roi},                 {"overlap", o.overlap},        {"infer_size", o.inferSize},
          {"skip_train", o.skipTrain},    {"skip_infer", o.skipInfer},   {"whole_volume", o.wholeVolume},
          {"graph_optimisation", o.optimiseGraph}, {"loader_workers", o.loaderWorkers},
          {"batch_shards", o.batchShards}, {"precision", o.precision}, {"volume", o.volume},
          {"fixed_batch", o.fixedBatch},  {"model", o.model.empty() ? nlohmann::json() : nlohmann::json(o.model)}};
}

int runBench(const BenchOptions& o, CliContext& context) {
  nlohmann::json result = runPluginTask(context, o.plugin, "bench", taskParameters(o));
  result["plugin"] = o.plugin;
  return showTaskResult(context, "bench", std::move(result));
}

void addBench(CLI::App& app, CliContext& context) {
  auto* cmd = app.add_subcommand("bench", "Measure training and inference speed and memory on this machine");
  auto o = std::make_shared<BenchOptions>();
  cmd->add_option("--plugin", o->plugin, "Training plugin whose network is timed (its task \"bench\")")->capture_default_str();
  cmd->add_option("--base-filters", o->baseFilters, "U-Net filters at full resolution")->check(CLI::Range(1, 512));
  cmd->add_option("--depth", o->depth, "U-Net resolution levels")->check(CLI::Range(1, 7));
  cmd->add_option("--norm", o->norm, "instance, batch or group")->check(CLI::IsMember({"instance", "batch", "group"}));
  cmd->add_flag("--deep-supervision", o->deepSupervision, "Train with deep-supervision heads");
  cmd->add_option("--batch", o->batch, "Patches per training step")->check(CLI::Range(1, 64));
  cmd->add_option("--patch", o->patch, "Training patch edge (voxels)")->check(CLI::Range(8, 256));
  cmd->add_option("--steps", o->steps, "Timed training steps")->check(CLI::Range(1, 10000));
  cmd->add_option("--warmup", o->warmup, "Untimed warm-up steps")->check(CLI::Range(0, 100));
  cmd->add_option("--threads", o->threads, "Torch threads (0: all cores)")->check(CLI::Range(0, 1024));
  cmd->add_option("--loader-workers", o->loaderWorkers, "Data-loader threads")->check(CLI::Range(0, 64));
  cmd->add_option("--precision", o->precision, "fp32, or bf16 autocast (CPUs with AVX-512 BF16 / AMX)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  cmd->add_option("--batch-shards", o->batchShards, "Training batch shards run at once (0: one per core, 1: off)")->check(CLI::Range(0, 64));
  cmd->add_option("--roi", o->roi, "Sliding-window edge (voxels)")->check(CLI::Range(8, 512));
  cmd->add_option("--overlap", o->overlap, "Sliding-window overlap")->check(CLI::Range(0.0, 0.95));
  cmd->add_option("--infer-size", o->inferSize, "Inference volume x,y,z")->delimiter(',')->expected(3);
  cmd->add_flag("--skip-train", o->skipTrain, "Do not time training");
  cmd->add_flag("--skip-infer", o->skipInfer, "Do not time inference");
  cmd->add_flag("--whole-volume", o->wholeVolume,
                "Also time whole-volume inference (one pass; on the brain volume also uncropped, with the labels the crop changed)");
  cmd->add_option("--volume", o->volume,
                  "Inference input: brain (a synthetic BraTS-like case, cropped to the brain as `medseg infer` does) or noise "
                  "(random values over the whole grid)")
      ->check(CLI::IsMember({"brain", "noise"}))
      ->capture_default_str();
  cmd->add_flag("--fixed-batch", o->fixedBatch, "Time training steps on one batch made once (no loader), as a peer given a fixed tensor");
  cmd->add_flag("--no-graph-optimisation{false}", o->optimiseGraph,
                "Time inference through the network's own layers, as `medseg infer --no-graph-optimisation`");
  cmd->add_flag("--pipeline", o->pipeline, "Model-parallel benchmark: 1 process vs --stages pipeline stages (mpirun)");
  cmd->add_option("--stages", o->pipe.stages, "Pipeline: stages (ranks)")->check(CLI::Range(2, 64));
  cmd->add_option("--memory-per-device", o->pipe.memoryPerDeviceMb, "Pipeline: memory budget per device in MiB (one, or one per stage)")
      ->delimiter(',');
  cmd->add_option("--micro-batches", o->pipe.microBatches, "Pipeline: micro-batches per step (divides --batch)")->check(CLI::Range(1, 1024));
  cmd->add_option("--schedule", o->pipe.schedule, "Pipeline: gpipe or 1f1b")->check(CLI::IsMember({"gpipe", "1f1b"}));
  cmd->add_flag("--checkpoint", o->pipe.checkpoint, "Pipeline: activation checkpointing");
  cmd->add_option("--model", o->model,
                  "A trained checkpoint: inference is timed with its network (and the crop's label changes are its own); "
                  "with --pipeline, the model whose Dice pipeline inference reports");
  cmd->add_option("--data", o->pipe.data, "Pipeline inference: data set with labelled cases (needs --model)");
  cmd->add_option("--cases", o->pipe.cases, "Pipeline inference: labelled cases to segment")->check(CLI::Range(0, 1000));
  cmd->add_option("--out", o->pipe.out, "Pipeline: output folder (one sub-folder per run)");
  cmd->add_option("--worker", o->pipe.worker, "Pipeline: medseg-worker program (default: beside medseg)");
  cmd->add_option("--fit-max-edge", o->pipe.maxFitEdge, "Pipeline: largest patch edge tried for the budget")->check(CLI::Range(8, 1024));
  cmd->add_flag("--skip-fit-check", o->pipe.skipFitCheck, "Pipeline: do not run the largest fitting patch");
  cmd->callback([o, cmd, &context] {
    if (o->pipeline) {
      auto& p = o->pipe;
      p.baseFilters = o->baseFilters;
      p.depth = o->depth;
      p.norm = o->norm;
      p.batch = o->batch;
      p.patch = o->patch;
      p.steps = o->steps;
      p.inferSize = o->inferSize;
      p.roi = cmd->count("--roi") ? o->roi : 0;
      p.overlap = o->overlap;
      p.skipTrain = o->skipTrain;
      p.skipInfer = o->skipInfer;
      p.model = o->model;
      if (p.batch % p.microBatches != 0)
        throw CLI::ValidationError("--micro-batches", "must divide --batch (" + std::to_string(p.batch) + ")");
    }
    const int64_t divisor = int64_t{1} << (o->depth - 1);
    if (o->patch % divisor != 0)
      throw CLI::ValidationError("--patch", "must be a multiple of " + std::to_string(divisor) + " for depth " +
                                 std::to_string(o->depth));
    context.action = [o, &context] { return o->pipeline ? runPipelineBench(o->pipe, context) : runBench(*o, context); };
  });
}
const CommandRegistration benchCommandRegistration{"", "bench", &addBench};
}  // namespace
}  // namespace medseg::cli
