#include "cluster/parallel/ExperimentSearch.h"

#if MEDSEG_HAVE_MPI
#include <chrono>
#include <deque>
#include <map>
#include <thread>

#include "cluster/parallel/DevicePlacement.h"
#include "cluster/parallel/MpiEnvironment.h"
#include "cluster/parallel/TrialProcess.h"
#include "cluster/search/ResultsJournal.h"
#include "cluster/search/SearchReport.h"
#include "cluster/search/SearchSpace.h"
#include "cluster/search/SuccessiveHalving.h"
#include "core/util/Elapsed.h"
#include "core/util/Interrupt.h"
#include "core/plugin/DefaultPlugin.h"

namespace medseg::cluster {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

enum Tag : int { kReady = 11, kTrial = 12, kStop = 13, kRung = 14, kDecision = 15, kResult = 16 };

struct Plan {
  SearchSpace space;
  std::vector<Trial> trials;
};

Plan makePlan(const ExperimentOptions& options) {
  if (!options.configDocument.is_object() || !options.configDocument.contains("search"))
    throw InputError("experiment mode needs a \"search\" section in the config (e.g. search: seed-study-32)");
  Plan plan{SearchSpace::fromJson(options.configDocument["search"]), {}};
  plan.trials = plan.space.trials();
  return plan;
}

// One trial on the ranks of `comm` (its rank 0 reports). Exceptions become a failed record.
// `process` is the worker's warm trial process (TrialProcess.h), kept across its trials.
TrialRecord runTrial(const ExperimentOptions& options, const Plan& plan, const json& message, MPI_Comm comm,
                     const std::function<bool(int64_t, double)>& onRung, int worldRank, int groupIndex,
                     TrialProcess& process, Reporter& reporter) {
  const auto start = Clock::now();
  TrialRecord record;
  record.trial = message.at("trial").get<std::string>();
  record.params = message.at("params");
  record.key = record.params.dump();
  record.attempt = message.value("attempt", 1);
  record.worker = worldRank;
  int groupSize = 1;
  MPI_Comm_size(comm, &groupSize);
  record.group = groupIndex;
  record.groupRanks = groupSize;
  try {
    Trial trial;
    trial.id = record.trial;
    trial.params = record.params;
    json document = trialConfig(options.configDocument, trial, plan.space, groupSize);
    if (!options.dataPath.empty()) document["data"] = options.dataPath;
    if (!options.device.empty()) document["device"] = options.device;
    if (groupSize == 1 && options.isolateTrials) {
      TrialProcessOptions child;
      if (!options.device.empty()) {
        const ChildDevice device = childProcessDevice(options.device);
        document["device"] = device.device;
        child.environment = device.environment;
      }
      child.medsegProgram = options.medsegProgram.empty() ? defaultMedsegProgram() : options.medsegProgram;
      child.trialDir = options.runDir / "trials" / record.trial;
      child.config = document;
      child.onValidation = onRung;
      const TrialOutcome outcome = process.run(child);
      record.status = outcome.status;
      record.error = outcome.error;
      record.dice = outcome.dice;
      record.epochs = outcome.epochs;
      record.coldStart = outcome.coldStart;
      record.startupSeconds = outcome.startupSeconds;
      record.dataLoadSeconds = outcome.dataLoadSeconds;
      record.validationSeconds = outcome.validationSeconds;
    } else {
      // Data parallel over the group's communicator, through the config's training plugin.
      if (!options.plugins) throw std::logic_error("runExperimentSearch: no plugin registry given");
      const std::string pluginId = document.value("plugin", std::string(plugin::kDefaultTrainingPlugin));
      plugin::TrainingRequest request;
      request.config = document;
      request.config.erase("plugin");
      if (options.keepTrialFolders) request.runDir = options.runDir / "trials" / record.trial;
      request.onValidation = onRung;
      Reporter quiet(OutputMode::JsonLines);  // trial progress would interleave between workers
      (void)reporter;
      plugin::RunContext context(quiet);
      plugin::ParallelContext parallel;
      parallel.rank = mpi::rankOf(comm);
      parallel.size = groupSize;
      parallel.globalRank = worldRank;
      parallel.mpiCommunicator = &comm;
      context.setParallel(parallel);
      const json result = options.plugins->training(pluginId).train(request, context);
      record.status = result.value("stopped_early", false) ? "stopped" : "finished";
      record.dice = result.value("wt_dice", -1.0);
      record.epochs = result.value("epochs", int64_t{0});
      record.dataLoadSeconds = result.value("load_seconds", 0.0);
    }
  } catch (const Interrupted&) {
    throw;  // a stop of the whole search, not a failure of this trial
  } catch (const std::exception& error) {
    record.status = "failed";
    record.error = error.what();
  }
  record.seconds = secondsSince(start);
  record.trainingSeconds = std::max(0.0, record.seconds - record.startupSeconds - record.dataLoadSeconds - record.validationSeconds);
  return record;
}

class Coordinator {
 public:
  Coordinator(const ExperimentOptions& options, Plan plan, Reporter& reporter)
      : options_(options), plan_(std::move(plan)), journal_(options.runDir / "results.jsonl"),
        asha_(plan_.space.asha()), reporter_(reporter) {
    journal_.load();
    for (const auto& warning : journal_.warnings()) reporter_.log("warning: " + warning);
    for (const auto& rung : journal_.rungs()) replayDecision(rung);
    const auto done = journal_.completedKeys();
    for (const auto& trial : plan_.trials) {
      if (done.count(trial.key()))
        ++result_.skipped;
      else if (recordStopBeforeKill(trial))
        ++result_.skipped;
      else
        pending_.push_back({trial, 1});
    }
    result_.trials = static_cast<int>(plan_.trials.size());
    if (result_.skipped)
      reporter_.log("resuming: " + std::to_string(result_.skipped) + " of " + std::to_string(result_.trials) +
                    " trials already done (" + journal_.file().string() + ")");
  }

  json trialMessage(const Trial& trial, int attempt) const {
    return {{"trial", trial.id}, {"params", trial.params}, {"attempt", attempt}};
  }

  // A rung decision taken by an earlier run (journal): ASHA's history holds its result once, and the
  // trial, if it reaches the rung again (resumed, retried), hears the same answer. Journals written
  // before decisions were recorded are replayed in order, which gives the decisions taken then.
  void replayDecision(const RungRecord& rung) {
    const bool decided = asha_.report(rung.rung, rung.dice);
    decisions_[{rung.key, rung.rung}] = rung.decisionRecorded ? rung.continues : decided;
  }

  // A trial told to stop at a rung whose "stopped" line never reached the journal (the search was
  // killed in between): journalled stopped now instead of being trained again.
  bool recordStopBeforeKill(const Trial& trial) {
    for (const auto& rung : journal_.rungs()) {
      if (rung.key != trial.key() || decisions_.at({rung.key, rung.rung})) continue;
      TrialRecord stopped;
      stopped.trial = trial.id;
      stopped.key = trial.key();
      stopped.params = trial.params;
      stopped.status = "stopped";
      stopped.dice = rung.dice;
      stopped.epochs = rung.rung;
      journal_.append(stopped);  // worker -1: replayed, not run
      reporter_.log(trial.id + " was stopped at epoch " + std::to_string(rung.rung) +
                    " before the search was interrupted; recorded stopped, not run again");
      return true;
    }
    return false;
  }

  // Successive-halving decision for a rung report, journaled before the trial hears it (for resume).
  bool decide(const std::string& trialId, const std::string& key, int64_t epoch, double dice) {
    if (!plan_.space.asha().enabled() || !asha_.isRung(epoch)) return true;
    if (const auto known = decisions_.find({key, epoch}); known != decisions_.end()) {
      reporter_.emit({{"event", "log"}, {"message", trialId + " rung " + std::to_string(epoch) + ": decided before, " +
                                                        (known->second ? "continues" : "stopped")}});
      return known->second;
    }
    const bool keep = asha_.report(epoch, dice);
    journal_.appendRung({trialId, key, epoch, dice, keep});
    decisions_[{key, epoch}] = keep;
    reporter_.emit({{"event", "log"}, {"message", trialId + " rung " + std::to_string(epoch) + ": Dice " +
                                                      std::to_string(dice) + (keep ? " continues" : " stopped")}});
    if (!keep && !reporter_.json()) reporter_.log(trialId + " stopped at epoch " + std::to_string(epoch) + " (Dice " + std::to_string(dice) + ")");
    return keep;
  }

  void record(const TrialRecord& record) {
    journal_.append(record);
    if (record.status == "failed") {
      reporter_.log(record.trial + " failed (attempt " + std::to_string(record.attempt) + "): " + record.error);
      if (record.attempt < options_.maxAttempts) {
        for (const auto& trial : plan_.trials)
          if (trial.key() == record.key) pending_.push_front({trial, record.attempt + 1});
        return;
      }
      ++result_.failed;
    } else if (record.status == "stopped") {
      ++result_.stopped;
    } else {
      ++result_.finished;
    }
    ++reported_;
    reporter_.emit({{"event", "progress"}, {"task", "search"}, {"done", reported_ + result_.skipped}, {"total", result_.trials},
                    {"trial", record.trial}, {"status", record.status}, {"dice", record.dice}});
    if (!reporter_.json())
      reporter_.log(record.trial + " " + record.status + (record.dice >= 0 ? " Dice " + std::to_string(record.dice) : "") + " (" +
                    std::to_string(reported_ + result_.skipped) + "/" + std::to_string(result_.trials) + ")");
  }

  // Rank 0 alone (world of one): trials one after another.
  void runSerially() {
    while (!pending_.empty()) {
      throwIfInterrupted("search");
      const auto [trial, attempt] = pending_.front();
      pending_.pop_front();
      const std::string key = trial.key(), id = trial.id;
      auto onRung = [this, id, key](int64_t epoch, double dice) { return decide(id, key, epoch, dice); };
      record(runTrial(options_, plan_, trialMessage(trial, attempt), MPI_COMM_SELF, onRung, 0, 0, trialProcess_, reporter_));
    }
    result_.workers = 1;
  }

  void runDistributed(const std::vector<int>& leaders) {
    std::map<int, bool> busy;
    std::deque<int> idle;
    size_t stopped = 0;
    result_.workers = static_cast<int>(leaders.size());
    while (stopped < leaders.size()) {
      int flag = 0;
      MPI_Status status;
      mpi::checkMpi(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe");
      if (!flag) {  // sleep instead of spinning: the coordinator shares cores with workers
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      const int source = status.MPI_SOURCE;
      const std::string text = mpi::receiveString(source, status.MPI_TAG, MPI_COMM_WORLD);
      if (status.MPI_TAG == kReady) {
        idle.push_back(source);
      } else if (status.MPI_TAG == kRung) {
        const json rung = json::parse(text);
        const bool keep = decide(rung["trial"], rung["key"], rung["epoch"], rung["dice"]);
        mpi::sendString(keep ? "1" : "0", source, kDecision, MPI_COMM_WORLD);
      } else if (status.MPI_TAG == kResult) {
        busy[source] = false;  // its leader sends kReady next
        record(TrialRecord::fromJson(json::parse(text)));
      }
      while (!idle.empty() && !pending_.empty()) {
        const auto [trial, attempt] = pending_.front();
        pending_.pop_front();
        mpi::sendString(trialMessage(trial, attempt).dump(), idle.front(), kTrial, MPI_COMM_WORLD);
        busy[idle.front()] = true;
        idle.pop_front();
      }
      const bool anyBusy = std::any_of(busy.begin(), busy.end(), [](const auto& b) { return b.second; });
      if (pending_.empty() && !anyBusy)
        while (!idle.empty()) {
          mpi::sendString("", idle.front(), kStop, MPI_COMM_WORLD);
          idle.pop_front();
          ++stopped;
        }
    }
  }

  ExperimentResult finish(double seconds) {
    const auto report = SearchReport::build(journal_, [this](const TrialRecord& r) {
      Trial trial;
      trial.id = r.trial;
      trial.params = r.params;
      return trialConfig(options_.configDocument, trial, plan_.space, options_.groupSize);
    });
    report.write(options_.runDir);
    result_.seconds = seconds;
    result_.bestDice = report.bestDice;
    result_.bestTrial = report.bestTrial;
    if (!reporter_.json()) reporter_.log("\n" + report.toTable());
    return result_;
  }

 private:
  const ExperimentOptions& options_;
  Plan plan_;
  ResultsJournal journal_;
  SuccessiveHalving asha_;
  std::map<std::pair<std::string, int64_t>, bool> decisions_;  // (trial key, rung) -> continues
  Reporter& reporter_;
  std::deque<std::pair<Trial, int>> pending_;
  TrialProcess trialProcess_;  // rank 0's warm trial process when it runs the trials itself
  ExperimentResult result_;
  int reported_ = 0;
};

// A group of ranks running trials for the coordinator until told to stop.
void runGroup(const ExperimentOptions& options, const Plan& plan, MPI_Comm group, int worldRank, Reporter& reporter) {
  int groupRank = 0, groupRanks = 1;
  MPI_Comm_rank(group, &groupRank);
  MPI_Comm_size(group, &groupRanks);
  const bool leader = groupRank == 0;
  const int groupIndex = (worldRank - 1) / groupRanks;  // as runExperimentSearch splits the world
  TrialProcess trialProcess;  // one warm child for all of this worker's one-rank trials
  while (true) {
    std::string message;
    int tag = kStop;
    if (leader) {
      mpi::sendString("", 0, kReady, MPI_COMM_WORLD);
      MPI_Status status;
      message = mpi::receiveString(0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
      tag = status.MPI_TAG;
    }
    mpi::checkMpi(MPI_Bcast(&tag, 1, MPI_INT, 0, group), "MPI_Bcast (tag)");
    if (tag == kStop) return;
    message = mpi::broadcastString(message, 0, group);
    const json trial = json::parse(message);
    const std::string key = trial.at("params").dump(), id = trial.at("trial").get<std::string>();
    auto onRung = [&, key, id](int64_t epoch, double dice) {
      if (!leader) return true;  // only the leader's answer is used (broadcast by the trainer)
      mpi::sendString(json({{"trial", id}, {"key", key}, {"epoch", epoch}, {"dice", dice}}).dump(), 0, kRung, MPI_COMM_WORLD);
      return mpi::receiveString(0, kDecision, MPI_COMM_WORLD) == "1";
    };
    const TrialRecord record = runTrial(options, plan, trial, group, onRung, worldRank, groupIndex, trialProcess, reporter);
    if (leader) mpi::sendString(record.toJson().dump(), 0, kResult, MPI_COMM_WORLD);
  }
}

}  // namespace

json ExperimentResult::toJson() const {
  return {{"trials", trials},     {"finished", finished},   {"failed", failed},       {"stopped", stopped},
          {"skipped", skipped},   {"seconds", seconds},     {"best_dice", bestDice},  {"best_trial", bestTrial},
          {"workers", workers}};
}

ExperimentResult runExperimentSearch(const ExperimentOptions& options, Reporter& reporter) {
  const auto start = Clock::now();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int g = std::max(1, options.groupSize);
  if (size > 1 && (size - 1) % g != 0)
    throw InputError("experiment mode: " + std::to_string(size - 1) + " worker ranks (all but the coordinator) do not split "
                     "into groups of " + std::to_string(g) + "; use --ranks 1 + a multiple of the group size");
  // Every rank parses the plan (the same config), so trial messages stay small.
  const Plan plan = makePlan(options);
  if (size == 1) {
    Coordinator coordinator(options, plan, reporter);
    coordinator.runSerially();
    return coordinator.finish(secondsSince(start));
  }
  MPI_Comm group = MPI_COMM_NULL;
  mpi::checkMpi(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : (rank - 1) / g, rank, &group), "MPI_Comm_split");
  ExperimentResult result;
  if (rank == 0) {
    std::vector<int> leaders;
    for (int r = 1; r < size; r += g) leaders.push_back(r);
    Coordinator coordinator(options, plan, reporter);
    coordinator.runDistributed(leaders);
    result = coordinator.finish(secondsSince(start));
  } else {
    runGroup(options, plan, group, rank, reporter);
    MPI_Comm_free(&group);
  }
  return result;
}

}  // namespace medseg::cluster
#endif
