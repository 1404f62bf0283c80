#include "cluster/parallel/TrialProcess.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "cluster/submit/LineProcess.h"
#include "core/util/AtomicFile.h"
#include "core/util/Elapsed.h"
#include "core/util/ExecutablePath.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string describeDeath(const ProcessResult& result) {
  if (result.signalled)
    return "trial process killed by signal " + std::to_string(result.signal) + " (" + ::strsignal(result.signal) + ")";
  return "trial process exited with status " + std::to_string(result.exitCode);
}

constexpr int kInterruptedExit = 130;

}  // namespace

std::filesystem::path defaultMedsegProgram() {
  if (const char* program = std::getenv("MEDSEG_PROGRAM"); program && *program) return program;
  const auto sibling = executableDirectory() / "medseg";
  if (std::filesystem::exists(sibling)) return sibling;
  return "medseg";
}

TrialProcess::TrialProcess() = default;

TrialProcess::~TrialProcess() { stop(); }

void TrialProcess::start(const TrialProcessOptions& options) {
  stop();
  SpawnOptions spawn;
  // One stderr file for the child's whole life, in the run folder above the trials.
  spawn.stderrFile = options.trialDir.parent_path() / ("trial-process-" + std::to_string(::getpid()) + ".err");
  spawn.environment = options.environment;
  child_ = std::make_unique<LineProcess>(
      std::vector<std::string>{options.medsegProgram.string(), "--json", "train", "--serve"}, spawn, /*withInput=*/true);
  program_ = options.medsegProgram;
  environment_ = options.environment;
  ++childrenStarted_;
}

void TrialProcess::stop() {
  if (!child_) return;
  child_->closeInput();  // a serving child ends at its next read
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!child_->atEnd() && Clock::now() < deadline) child_->readLine(0.2);
  if (!child_->atEnd()) child_->signal(SIGKILL);
  child_->wait();
  child_.reset();
}

TrialOutcome TrialProcess::run(const TrialProcessOptions& options) {
  const auto requested = Clock::now();
  TrialOutcome outcome;
  std::filesystem::create_directories(options.trialDir);
  json config = options.config;
  // Successive halving needs a validation Dice at every rung epoch.
  if (options.onValidation) config["validation"]["every_epochs"] = 1;
  const auto configFile = options.trialDir / "trial-config.json";
  writeFileAtomically(configFile, config.dump(2) + "\n");
  // An earlier attempt that died left a checkpoint: the plugin, which alone knows what its checkpoint
  // is, continues it (its result says from which step), else trains the trial from the start.
  const json request = {{"out", options.trialDir.string()}, {"config", configFile.string()}, {"resume", "if_saved"}};

  if (!child_ || child_->atEnd() || program_ != options.medsegProgram || environment_ != options.environment) {
    start(options);
    outcome.coldStart = true;
  }
  if (!child_->writeLine(request.dump())) {  // died between trials: one more start
    start(options);
    outcome.coldStart = true;
    child_->writeLine(request.dump());
  }

  std::string lastError;
  bool stopRequested = false, interrupted = false, firstEvent = true, ended = false;
  int exitCode = -1;
  while (!ended) {
    if (interruptRequested() && !interrupted) {
      interrupted = true;
      child_->signal(SIGTERM);  // the trial saves its checkpoint and ends
    }
    const auto line = child_->readLine(0.5);
    if (!line) {
      if (child_->atEnd()) break;
      continue;
    }
    json event;
    try {
      event = json::parse(*line);
    } catch (const json::exception&) {
      continue;  // not an event (a library printing to stdout)
    }
    if (firstEvent) {
      outcome.startupSeconds = secondsSince(requested);
      firstEvent = false;
    }
    const std::string kind = event.value("event", std::string());
    if (kind == "trial-end") {
      exitCode = event.value("exit_code", -1);
      ended = true;
    } else if (kind == "error") {
      lastError = event.value("message", std::string());
    } else if (kind == "result") {
      outcome.dataLoadSeconds = event.value("load_seconds", 0.0);
      outcome.resumed = event.value("resumed_from_step", int64_t{0}) > 0;
    } else if (kind == "metric" && event.contains("mean_wt_dice")) {
      outcome.validationSeconds += event.value("validation_seconds", 0.0);
      if (stopRequested) continue;
      outcome.dice = event["mean_wt_dice"].get<double>();
      outcome.epochs = event.value("epoch", outcome.epochs);
      if (options.onValidation && !options.onValidation(outcome.epochs, outcome.dice)) {
        stopRequested = true;
        child_->signal(SIGTERM);
      }
    }
  }
  if (!ended) {  // the child died mid-trial: that trial failed; the next one starts a new child
    const ProcessResult result = child_->wait();
    child_.reset();
    if (interrupted) throw Interrupted("search interrupted; trial " + options.trialDir.filename().string() + " was stopped");
    outcome.status = "failed";
    outcome.error = lastError.empty() ? describeDeath(result) : lastError + " (" + describeDeath(result) + ")";
    return outcome;
  }
  if (interrupted) throw Interrupted("search interrupted; trial " + options.trialDir.filename().string() + " saved its checkpoint");
  if (stopRequested && (exitCode == 0 || exitCode == kInterruptedExit)) {
    outcome.status = "stopped";
  } else if (exitCode == 0) {
    outcome.status = "finished";
  } else {
    outcome.status = "failed";
    outcome.error = (lastError.empty() ? std::string("trial failed") : lastError) + " (exit status " + std::to_string(exitCode) + ")";
  }
  return outcome;
}

}  // namespace medseg::cluster
