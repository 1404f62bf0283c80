// medseg-worker: the headless program `mpirun` starts on every rank of a cluster run.
//   medseg-worker --run-dir DIR --mode data|experiment --config FILE [--data DIR] [--group-size G]
//                 [--set key=value ...] [--bucket-mb 25] [--no-overlap] [--json]
// data: one training, data parallel over all ranks (DataParallelTrainer); experiment: a search,
// rank 0 coordinating, the others training trials in groups (ExperimentSearch). When DIR is a run
// folder made by `medseg submit` (run.json), rank 0 marks it running, then finished or failed.
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "cluster/parallel/DataParallelTrainer.h"
#include "cluster/parallel/ExperimentSearch.h"
#include "cluster/parallel/MpiEnvironment.h"
#include "cluster/submit/RunDirectory.h"
#include "core/train/TrainConfig.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace {

using namespace medseg;
using namespace medseg::cluster;

struct WorkerOptions {
  std::string runDir, mode = "data", config, data;
  int groupSize = 1;
  std::vector<std::string> overrides;
  double bucketMb = 25.0;
  bool noOverlap = false;
  bool json = false;
};

// Records the run's state when DIR is a submitted run folder; a plain output folder has none.
void markState(const std::filesystem::path& dir, RunState state, const nlohmann::json& fields = nlohmann::json::object()) {
  if (!std::filesystem::exists(dir / "run.json")) return;
  try {
    auto run = RunDirectory::open(dir);
    if (!isTerminal(run.state())) run.setState(state, fields);
  } catch (const std::exception& error) {
    std::cerr << "medseg-worker: cannot update " << (dir / "run.json").string() << ": " << error.what() << "\n";
  }
}

// Ranks share the node's cores: without an explicit thread count each gets its share.
int64_t defaultThreads(const MpiEnvironment& mpi) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()) / std::max(1, mpi.localSize()));
}

int run(const WorkerOptions& o, const MpiEnvironment& mpi) {
  Reporter reporter(o.json ? OutputMode::JsonLines : OutputMode::Human);
  const std::filesystem::path runDir(o.runDir);
  std::vector<std::string> overrides = o.overrides;
  if (!o.data.empty()) overrides.push_back("data=" + o.data);
  if (mpi.rank() == 0) markState(runDir, RunState::Running, {{"ranks", mpi.size()}});
  nlohmann::json summary;
  if (o.mode == "data") {
    // A search config trains its base configuration in data mode.
    nlohmann::json document = readConfigDocument(o.config);
    document.erase("search");
    for (const auto& assignment : overrides) applyOverride(document, assignment);
    TrainConfig config = TrainConfig::fromJson(document);
    if (config.threads <= 0) config.threads = defaultThreads(mpi);
    DataParallelOptions options;
    options.runDir = runDir;
    options.bucketBytes = static_cast<size_t>(o.bucketMb * 1024 * 1024);
    options.overlap = !o.noOverlap;
    options.globalRankForLogs = mpi.rank();
    summary = trainDataParallel(config, options, reporter).toJson();
  } else if (o.mode == "experiment") {
    ExperimentOptions options;
    options.configDocument = readConfigDocument(o.config);
    for (const auto& assignment : o.overrides) applyOverride(options.configDocument, assignment);
    if (!options.configDocument.contains("threads")) options.configDocument["threads"] = defaultThreads(mpi);
    options.dataPath = o.data;
    options.runDir = runDir;
    options.groupSize = o.groupSize;
    summary = runExperimentSearch(options, reporter).toJson();
    if (mpi.rank() == 0) writeFileAtomically(runDir / "metrics.json", summary.dump(2) + "\n");
  } else {
    throw InputError("--mode: expected data or experiment, found \"" + o.mode + "\"");
  }
  if (mpi.rank() == 0) {
    summary["event"] = "result";
    summary["kind"] = o.mode;
    if (reporter.json())
      reporter.emit(summary);
    else
      std::cout << summary.dump(2) << "\n";
    markState(runDir, RunState::Finished);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MpiEnvironment mpi(&argc, &argv);
  CLI::App app{"medseg-worker: one rank of a MedSeg cluster run (started by mpirun)", "medseg-worker"};
  WorkerOptions o;
  app.add_option("--run-dir", o.runDir, "Run folder (outputs; run.json state when made by medseg submit)")->required();
  app.add_option("--mode", o.mode, "data or experiment")->check(CLI::IsMember({"data", "experiment"}));
  app.add_option("--config", o.config, "Training config (YAML/JSON; search section for experiment mode)")->required();
  app.add_option("--data", o.data, "Data-set folder (overrides the config's data)");
  app.add_option("--group-size", o.groupSize, "Experiment mode: ranks per trial")->check(CLI::PositiveNumber);
  app.add_option("--set", o.overrides, "Config override key=value (repeatable)");
  app.add_option("--bucket-mb", o.bucketMb, "Gradient bucket size in MiB")->check(CLI::PositiveNumber);
  app.add_flag("--no-overlap", o.noOverlap, "Reduce gradients after backward instead of during it");
  app.add_flag("--json", o.json, "JSON-lines output on rank 0");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  installInterruptHandlers();
  try {
    return run(o, mpi);
  } catch (const std::exception& error) {
    std::cerr << "medseg-worker rank " << mpi.rank() << ": error: " << error.what() << "\n";
    markState(o.runDir, RunState::Failed, {{"message", std::string("rank ") + std::to_string(mpi.rank()) + ": " + error.what()}});
    // The other ranks may be blocked in a collective: end the whole job rather than hang.
    MPI_Abort(MPI_COMM_WORLD, dynamic_cast<const InputError*>(&error) ? 3 : 4);
    return 4;
  }
}
