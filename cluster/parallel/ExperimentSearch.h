#pragma once
// Experiment parallelism: the trials of a search (SearchSpace) run concurrently. World rank 0 is the
// coordinator: it hands the next pending trial (JSON over MPI point-to-point) to whichever worker
// reports ready, answers successive-halving rung reports with continue/stop, and appends each
// result to results.jsonl (ResultsJournal) as it arrives — so a killed search, started again on the
// same run folder, skips every finished trial. Rung decisions are journalled before the trial hears
// them; a resumed search replays them (a trial told to stop is not trained again, a trial reaching a
// rung it was judged at hears the same answer). Each trial's record names its group. The other ranks form groups of `groupSize` ranks
// (MPI_Comm_split); a group trains one trial at a time, data parallel inside the group, with the
// learning rate scaled by the group size when the search says so. A trial that throws (divergence,
// bad config value) is reported failed with its error and retried once on another worker; the search
// always completes with a report (search-report.json/.txt). With one rank in total, rank 0 runs the
// trials itself.
//
// Trials of one rank each run in a child process (`medseg --json train`, TrialProcess.h): a trial
// that crashes or is killed (SIGKILL, out of memory) is recorded failed and requeued — its retry
// resumes from the trial's checkpoint — and the search goes on. Trials spanning a group of ranks run
// inside the ranks (data parallel over the group's communicator); Open MPI ends the whole job when
// one of those processes dies, and submitting the search again on the same run folder
// (`medseg submit --resume`) finishes it without redoing finished trials.
#if MEDSEG_HAVE_MPI
#include "core/plugin/PluginRegistry.h"
#include <mpi.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/util/Progress.h"

namespace medseg::cluster {

struct ExperimentOptions {
  nlohmann::json configDocument;      // training config with its "search" section
  std::string dataPath;               // overrides the config's data: when set
  std::filesystem::path runDir;       // results.jsonl, search-report.*, trials/<id>/
  int groupSize = 1;
  int maxAttempts = 2;                // per trial, failures included
  bool keepTrialFolders = true;       // trials/<id>/ with each trial's checkpoint and metrics
  bool isolateTrials = true;          // one-rank trials in child processes (TrialProcess.h)
  std::filesystem::path medsegProgram;  // for isolated trials; empty: defaultMedsegProgram()
  // This rank's device (DevicePlacement.h): its trials train there; a trial's child process sees
  // only that GPU (CUDA_VISIBLE_DEVICES). Empty: the config's device.
  std::string device;
  // Where group trials find their training plugin (the config's `plugin:`, default unet3d); one-rank
  // trials run `medseg train`, which finds it the same way.
  plugin::PluginRegistry* plugins = nullptr;
};

struct ExperimentResult {
  int trials = 0, finished = 0, failed = 0, stopped = 0, skipped = 0;  // skipped: done by an earlier run
  double seconds = 0.0;
  double bestDice = -1.0;
  std::string bestTrial;
  int workers = 1;                    // trial groups that ran trials
  nlohmann::json toJson() const;
};

// Collective over MPI_COMM_WORLD: every rank calls it. Rank 0 returns the search's outcome; the
// other ranks return an empty result once the coordinator releases them.
ExperimentResult runExperimentSearch(const ExperimentOptions& options, Reporter& reporter);

}  // namespace medseg::cluster
#endif
