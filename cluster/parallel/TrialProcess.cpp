#include "cluster/parallel/TrialProcess.h"

#include <signal.h>

#include <cstdlib>
#include <cstring>

#include "cluster/submit/LineProcess.h"
#include "core/util/AtomicFile.h"
#include "core/util/ExecutablePath.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {
namespace {

using nlohmann::json;

std::string describeDeath(const ProcessResult& result) {
  if (result.signalled)
    return "trial process killed by signal " + std::to_string(result.signal) + " (" + ::strsignal(result.signal) + ")";
  return "trial process exited with status " + std::to_string(result.exitCode);
}

}  // namespace

std::filesystem::path defaultMedsegProgram() {
  if (const char* program = std::getenv("MEDSEG_PROGRAM"); program && *program) return program;
  const auto sibling = executableDirectory() / "medseg";
  if (std::filesystem::exists(sibling)) return sibling;
  return "medseg";
}

TrialOutcome runTrialProcess(const TrialProcessOptions& options) {
  TrialOutcome outcome;
  std::filesystem::create_directories(options.trialDir);
  json config = options.config;
  // Successive halving needs a validation Dice at every rung epoch.
  if (options.onValidation) config["validation"]["every_epochs"] = 1;
  const auto configFile = options.trialDir / "trial-config.json";
  writeFileAtomically(configFile, config.dump(2) + "\n");

  std::vector<std::string> argv{options.medsegProgram.string(), "--json", "train", "--out", options.trialDir.string()};
  outcome.resumed = std::filesystem::exists(options.trialDir / "checkpoint.pt");
  if (outcome.resumed)
    argv.push_back("--resume");  // an earlier attempt died: continue from its last checkpoint
  else
    argv.insert(argv.end(), {"--config", configFile.string()});
  SpawnOptions spawn;
  spawn.stderrFile = options.trialDir / "trial.err";
  LineProcess child(argv, spawn);

  std::string lastError;
  bool stopRequested = false, interrupted = false;
  while (true) {
    if (interruptRequested() && !interrupted) {
      interrupted = true;
      child.signal(SIGTERM);  // the child saves its checkpoint before exiting
    }
    const auto line = child.readLine(0.5);
    if (!line) {
      if (child.atEnd()) break;
      continue;
    }
    json event;
    try {
      event = json::parse(*line);
    } catch (const json::exception&) {
      continue;  // not an event (a library printing to stdout)
    }
    const std::string kind = event.value("event", std::string());
    if (kind == "error") lastError = event.value("message", std::string());
    if (kind != "metric" || !event.contains("mean_wt_dice") || stopRequested) continue;
    outcome.dice = event["mean_wt_dice"].get<double>();
    outcome.epochs = event.value("epoch", outcome.epochs);
    if (!stopRequested && options.onValidation && !options.onValidation(outcome.epochs, outcome.dice)) {
      stopRequested = true;
      child.signal(SIGTERM);
    }
  }
  const ProcessResult result = child.wait();
  if (interrupted) throw Interrupted("search interrupted; trial " + options.trialDir.filename().string() + " saved its checkpoint");
  if (stopRequested) {
    outcome.status = "stopped";
  } else if (result.exitCode == 0) {
    outcome.status = "finished";
  } else {
    outcome.status = "failed";
    outcome.error = lastError.empty() ? describeDeath(result) : lastError + " (" + describeDeath(result) + ")";
  }
  return outcome;
}

}  // namespace medseg::cluster
