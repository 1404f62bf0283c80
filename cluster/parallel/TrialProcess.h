#pragma once
// One trial of a search trained in a child process (`medseg --json train`), so that a trial which
// crashes, runs out of memory or is killed (SIGKILL) costs only that trial: its worker rank lives on,
// reports the trial failed, and the coordinator requeues it; the retry resumes from the trial's own
// checkpoint.pt. The child's JSON-lines metric events carry the validation Dice per epoch, which
// drives successive halving: a trial told to stop gets SIGTERM, saves its checkpoint and exits.
#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace medseg::cluster {

struct TrialProcessOptions {
  std::filesystem::path medsegProgram;    // the `medseg` program (beside medseg-worker)
  std::filesystem::path trialDir;         // the trial's run folder (trials/<id>)
  nlohmann::json config;                  // the trial's resolved training config document
  // After each validated epoch; return false to stop the trial (successive halving).
  std::function<bool(int64_t epoch, double wholeTumourDice)> onValidation;
};

struct TrialOutcome {
  std::string status;                     // "finished", "stopped" or "failed"
  std::string error;                      // for "failed": what the child reported, or how it died
  double dice = -1.0;                     // last validation whole-tumour Dice
  int64_t epochs = 0;
  bool resumed = false;                   // continued an earlier attempt's checkpoint
};

// Runs the trial to its end; never throws for a failing trial (that is an outcome), only when the
// child cannot be started. Throws Interrupted after stopping the child on Ctrl-C / SIGTERM.
TrialOutcome runTrialProcess(const TrialProcessOptions& options);

// Where the `medseg` program is for trial processes: MEDSEG_PROGRAM if set, else beside this
// executable, else "medseg" on PATH.
std::filesystem::path defaultMedsegProgram();

}  // namespace medseg::cluster
