#pragma once
// The trials of one worker rank, trained in a child process that stays warm: one
// `medseg --json train --serve` child takes trial after trial over its stdin, so a trial pays no
// process, LibTorch or thread-pool start-up after the first, while a trial that crashes, runs out of
// memory or is killed (SIGKILL) still costs only that trial and that child: its worker rank lives
// on, reports the trial failed, and the coordinator requeues it; the next trial starts a new child,
// and the retry resumes from the trial's own checkpoint.pt. The child's JSON-lines metric events
// carry the validation Dice per epoch, which drives successive halving: a trial told to stop gets
// SIGTERM, saves its checkpoint and ends (the child goes on serving).
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace medseg::cluster {

class LineProcess;

struct TrialProcessOptions {
  std::filesystem::path medsegProgram;    // the `medseg` program (beside medseg-worker)
  std::filesystem::path trialDir;         // the trial's run folder (trials/<id>)
  nlohmann::json config;                  // the trial's resolved training config document
  std::vector<std::string> environment;   // NAME=VALUE for the child (CUDA_VISIBLE_DEVICES of its worker's GPU)
  // After each validated epoch; return false to stop the trial (successive halving).
  std::function<bool(int64_t epoch, double wholeTumourDice)> onValidation;
};

struct TrialOutcome {
  std::string status;                     // "finished", "stopped" or "failed"
  std::string error;                      // for "failed": what the child reported, or how it died
  double dice = -1.0;                     // last validation whole-tumour Dice
  int64_t epochs = 0;
  bool resumed = false;                   // continued an earlier attempt's checkpoint
  bool coldStart = false;                 // a new child process was started for this trial
  double startupSeconds = 0.0;            // from the request to the trial's first event (process start if cold)
  double dataLoadSeconds = 0.0;           // reading and preprocessing the data set (the child's load_seconds)
  double validationSeconds = 0.0;         // all validations of the trial
};

class TrialProcess {
 public:
  TrialProcess();
  ~TrialProcess();  // ends the child: end of input, then a kill if it does not exit
  TrialProcess(const TrialProcess&) = delete;
  TrialProcess& operator=(const TrialProcess&) = delete;

  // Runs one trial to its end, starting a child when none is alive (or the program or environment
  // changed). Never throws for a failing trial (that is an outcome), only when no child can be
  // started. Throws Interrupted after stopping the trial on Ctrl-C / SIGTERM.
  TrialOutcome run(const TrialProcessOptions& options);
  int childrenStarted() const { return childrenStarted_; }

 private:
  void start(const TrialProcessOptions& options);
  void stop();

  std::unique_ptr<LineProcess> child_;
  std::filesystem::path program_;
  std::vector<std::string> environment_;
  int childrenStarted_ = 0;
};

// Where the `medseg` program is for trial processes: MEDSEG_PROGRAM if set, else beside this
// executable, else "medseg" on PATH.
std::filesystem::path defaultMedsegProgram();

}  // namespace medseg::cluster
