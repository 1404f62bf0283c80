// `medseg scaling`: a strong scaling study on this machine (cluster/scaling/ScalingStudy.h: runs through
// mpirun + medseg-worker, the machine's ceiling, the performance model fed with what was measured and its
// predictions beyond this machine, the seed-study reference curves). This file is the command line: its
// flags, and the report printed (a table, or one JSON result with --json); scaling.csv, scaling.json and
// scaling.svg are written to --out.
#include <iostream>
#include <memory>

#include "app/cli/CommandRegistry.h"
#include "cluster/scaling/ScalingStudy.h"

namespace medseg::cli {
namespace {

using ScalingOptions = cluster::ScalingStudyOptions;

int runScaling(const ScalingOptions& o, CliContext& context) {
  auto& reporter = context.reporter();
  const cluster::ScalingStudyResult study = cluster::runScalingStudy(o, reporter);
  if (reporter.json()) {
    nlohmann::json event = study.report.toJson();
    event["event"] = "result";
    event["kind"] = "scaling";
    event["out"] = study.out.string();
    reporter.emit(event);
  } else {
    std::cout << study.report.toTable() << "\nwritten: " << (study.out / "scaling.csv").string() << ", scaling.json, scaling.svg\n";
  }
  return kOk;
}

void addScaling(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand("scaling", "Measure data/experiment-parallel scaling here (mpirun) against the performance model");
  auto o = std::make_shared<ScalingOptions>();
  cmd->add_option("--mode", o->mode, "data, experiment or both")->check(CLI::IsMember({"data", "experiment", "both"}))->capture_default_str();
  cmd->add_option("--workers", o->workers, "Sizes to measure: ranks (data) or trial workers (experiment)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--config", o->config, "Training config (with a search section for experiment mode)")->required();
  cmd->add_option("--data", o->data, "Data-set folder");
  cmd->add_option("--out", o->out, "Output folder (one sub-folder per run + scaling.csv/json/svg)")->required();
  cmd->add_option("--set", o->overrides, "Config override key=value for every run (repeatable)");
  cmd->add_option("--repeats", o->repeats,
                  "Runs per size, sizes interleaved; the median run is the size's measurement (and the ceiling is measured in "
                  "as many rounds)")
      ->check(CLI::Range(1, 20))
      ->capture_default_str();
  cmd->add_option("--worker", o->worker, "medseg-worker program (default: beside medseg)");
  cmd->add_option("--mpirun", o->mpirun, "mpirun program")->capture_default_str();
  cmd->add_option("--overlap", o->overlap, "Model: share of communication hidden behind backward (0..1)")->capture_default_str();
  cmd->add_option("--nodes", o->nodes, "Model: nodes the ranks are spread over")->capture_default_str();
  cmd->add_option("--intra-alpha-us", o->intraAlphaUs, "Model: intra-node latency (us)")->capture_default_str();
  cmd->add_option("--intra-gbps", o->intraGBps, "Model: intra-node bandwidth (GB/s)")->capture_default_str();
  cmd->add_option("--inter-alpha-us", o->interAlphaUs, "Model: inter-node latency (us)")->capture_default_str();
  cmd->add_option("--inter-gbps", o->interGBps, "Model: inter-node bandwidth (GB/s)")->capture_default_str();
  cmd->add_option("--predict-workers", o->predictWorkers, "Model: sizes beyond the measured ones to predict (not measured)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--gpus-per-node", o->gpusPerNode, "Model: GPUs per node for the predicted sizes")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->callback([o, cmd, &context] {
    o->intraGiven = cmd->count("--intra-alpha-us") + cmd->count("--intra-gbps") > 0;
    o->interGiven = cmd->count("--inter-alpha-us") + cmd->count("--inter-gbps") > 0;
    context.action = [o, &context] { return runScaling(*o, context); };
  });
}

const CommandRegistration scalingCommandRegistration{"", "scaling", &addScaling};

}  // namespace
}  // namespace medseg::cli
