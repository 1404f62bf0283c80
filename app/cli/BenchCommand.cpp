// `medseg bench`: training and inference speed and memory on this machine, measured by the training
// plugin's task "bench" (plugins/unet3d/tasks/BenchTask.cpp: its network's training step, sliding-window
// and whole-volume inference on in-memory data); --pipeline runs the model-parallel benchmark through
// mpirun + medseg-worker (PipelineBench.h). The flags are the task's parameters, made from its schema in
// the plugin's manifest (SchemaFlags: base_filters is --base-filters); `medseg plugins info unet3d` lists
// them with their ranges.
#include <memory>

#include "app/cli/CommandRegistry.h"
#include "app/cli/PipelineBench.h"
#include "app/cli/PluginTask.h"
#include "app/cli/SchemaFlags.h"
#include "core/util/Interrupt.h"
#include "core/plugin/DefaultPlugin.h"

namespace medseg::cli {
namespace {

struct BenchCommandOptions {
  std::string plugin = plugin::kDefaultTrainingPlugin;
  bool pipeline = false;
  PipelineBenchOptions pipe;  // --pipeline
};

// The pipeline benchmark's network, training and inference settings: the bench task's, resolved.
void takeTaskSettings(const nlohmann::json& p, PipelineBenchOptions& pipe, bool roiGiven) {
  pipe.baseFilters = p.at("base_filters").get<int64_t>();
  pipe.depth = p.at("depth").get<int64_t>();
  pipe.norm = p.at("norm").get<std::string>();
  pipe.batch = p.at("batch").get<int64_t>();
  pipe.patch = p.at("patch").get<int64_t>();
  pipe.steps = p.at("steps").get<int64_t>();
  pipe.inferSize = p.at("infer_size").get<std::vector<int64_t>>();
  pipe.roi = roiGiven ? p.at("roi").get<int64_t>() : 0;
  pipe.overlap = p.at("overlap").get<double>();
  pipe.skipTrain = p.at("skip_train").get<bool>();
  pipe.skipInfer = p.at("skip_infer").get<bool>();
  pipe.model = p.at("model").is_null() ? std::string() : p.at("model").get<std::string>();
  if (pipe.batch % pipe.microBatches != 0)
    throw InputError("--micro-batches must divide --batch (" + std::to_string(pipe.batch) + ")");
}

int runBench(const BenchCommandOptions& o, const std::vector<std::string>& assignments, CliContext& context) {
  const std::string owner = "plugin " + o.plugin + "'s task bench";
  const plugin::PluginTask& task = pluginTask(context, o.plugin, "bench");
  const nlohmann::json given = task.parameters.parseAssignments(assignments, owner);
  if (o.pipeline) {
    PipelineBenchOptions pipe = o.pipe;
    takeTaskSettings(task.parameters.resolve(given, owner), pipe, given.contains("roi"));
    return runPipelineBench(pipe, context);
  }
  nlohmann::json result = runPluginTask(context, o.plugin, "bench", given);
  result["plugin"] = o.plugin;
  return showTaskResult(context, "bench", std::move(result));
}

void addBench(CLI::App& app, CliContext& context) {
  auto* cmd = app.add_subcommand("bench", "Measure training and inference speed and memory on this machine");
  auto o = std::make_shared<BenchCommandOptions>();
  cmd->add_option("--plugin", o->plugin, "Training plugin whose network is timed (its task \"bench\")")->capture_default_str();
  // The bench tasks' parameters as flags, from the training plugins' manifests.
  auto flags = std::make_shared<SchemaFlags>();
  std::vector<std::pair<std::string, const plugin::ParameterSchema*>> schemas;
  for (const plugin::PluginEntry* entry : context.plugins().usable(plugin::PluginKind::Train))
    if (const plugin::PluginTask* task = entry->manifest.task("bench")) schemas.emplace_back(entry->manifest.id, &task->parameters);
  flags->add(*cmd, schemas, "Benchmark parameters (the training plugin's task \"bench\"; `medseg plugins info ID`)");
  cmd->add_flag("--pipeline", o->pipeline, "Model-parallel benchmark: 1 process vs --stages pipeline stages (mpirun)");
  cmd->add_option("--stages", o->pipe.stages, "Pipeline: stages (ranks)")->check(CLI::Range(2, 64));
  cmd->add_option("--memory-per-device", o->pipe.memoryPerDeviceMb, "Pipeline: memory budget per device in MiB (one, or one per stage)")
      ->delimiter(',');
  cmd->add_option("--micro-batches", o->pipe.microBatches, "Pipeline: micro-batches per step (divides --batch)")->check(CLI::Range(1, 1024));
  cmd->add_option("--schedule", o->pipe.schedule, "Pipeline: gpipe or 1f1b")->check(CLI::IsMember({"gpipe", "1f1b"}));
  cmd->add_flag("--recompute", o->pipe.checkpoint,
                "Pipeline: keep only each stage's input and recompute its activations in backward (activation checkpointing)");
  cmd->add_option("--data", o->pipe.data, "Pipeline inference: data set with labelled cases (needs --model)");
  cmd->add_option("--cases", o->pipe.cases, "Pipeline inference: labelled cases to segment")->check(CLI::Range(0, 1000));
  cmd->add_option("--out", o->pipe.out, "Pipeline: output folder (one sub-folder per run)");
  cmd->add_option("--worker", o->pipe.worker, "Pipeline: medseg-worker program (default: beside medseg)");
  cmd->add_option("--fit-max-edge", o->pipe.maxFitEdge, "Pipeline: largest patch edge tried for the budget")->check(CLI::Range(8, 1024));
  cmd->add_flag("--skip-fit-check", o->pipe.skipFitCheck, "Pipeline: do not run the largest fitting patch");
  cmd->callback([o, flags, &context] {
    context.action = [o, assignments = flags->assignments(), &context] { return runBench(*o, assignments, context); };
  });
}
const CommandRegistration benchCommandRegistration{"", "bench", &addBench};
}  // namespace
}  // namespace medseg::cli
