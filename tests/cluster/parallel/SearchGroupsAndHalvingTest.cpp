// Experiment-parallel searches end to end (mpirun, oversubscribed, a tiny model): trials trained by
// groups of two ranks are journalled with their group; successive halving in a real 2-worker search
// stops trials at their rungs, and a search killed right after a rung decision, then resumed, obeys
// the journalled decision instead of training the stopped trial again.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "cluster/parallel/MpiTestSupport.h"
#include "cluster/search/ResultsJournal.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace test_support;

std::vector<std::string> searchArguments(const fs::path& runDir, const TinyRun& run) {
  return {"--run-dir", runDir.string(), "--mode", "experiment", "--config", run.config.string(), "--data", run.data.string()};
}

ResultsJournal loadJournal(const fs::path& file) {
  ResultsJournal journal(file);
  journal.load();
  EXPECT_TRUE(journal.warnings().empty());
  return journal;
}

TEST(SearchEndToEnd, GroupsOfTwoRanksJournalEveryTrialWithItsGroup) {
  TinyRun run;
  json config = tinyConfig();
  config["search"] = {{"strategy", "grid"}, {"space", {{"learning_rate", {0.003, 0.001, 0.0003, 0.0001}}}}};
  writeFileAtomically(run.config, config.dump(2));
  auto arguments = searchArguments(run.scratch / "groups", run);
  arguments.insert(arguments.end(), {"--group-size", "2"});

  // 4 ranks: the coordinator leaves 3 workers, which do not split into groups of 2 — refused early,
  // with the rank count that would work.
  auto refusedArguments = searchArguments(run.scratch / "refused", run);
  refusedArguments.insert(refusedArguments.end(), {"--group-size", "2"});
  const auto refused = runWorker(4, refusedArguments, 120.0);
  EXPECT_NE(refused.exitCode, 0);
  EXPECT_NE(refused.output.find("1 + a multiple of the group size"), std::string::npos) << refused.output;

  // 5 ranks: the coordinator and 4 workers in 2 groups of 2 (ranks 1-2 and 3-4).
  const auto result = runWorker(5, arguments, 180.0);
  ASSERT_EQ(result.exitCode, 0) << result.output;
  const ResultsJournal journal = loadJournal(run.scratch / "groups" / "results.jsonl");
  ASSERT_EQ(journal.records().size(), 4u);
  std::set<int> groups;
  std::set<std::string> trials;
  for (const auto& record : journal.records()) {
    SCOPED_TRACE(record.trial);
    EXPECT_EQ(record.status, "finished") << record.error;
    EXPECT_EQ(record.groupRanks, 2);
    ASSERT_GE(record.group, 0);
    ASSERT_LE(record.group, 1);
    EXPECT_EQ(record.worker, 1 + 2 * record.group) << "the group's leader reports its trial";
    EXPECT_GT(record.dataLoadSeconds, 0.0);
    EXPECT_TRUE(fs::exists(run.scratch / "groups" / "trials" / record.trial / "metrics.jsonl"));
    groups.insert(record.group);
    trials.insert(record.trial);
  }
  EXPECT_EQ(trials.size(), 4u);
  EXPECT_EQ(groups, (std::set<int>{0, 1})) << "both groups trained trials";
  const auto metrics = json::parse(readTextFile(run.scratch / "groups" / "metrics.json"));
  EXPECT_EQ(metrics["finished"], 4);
  EXPECT_EQ(metrics["workers"], 2);
}

// The journal's text up to and including the first rung line whose decision was "stop": what a
// search killed right after that decision leaves on disk (results.jsonl is appended and synced one
// line at a time), before the stopped trial's own line.
std::string journalUpToFirstStop(const std::string& text, std::string* stoppedKey, int64_t* rung) {
  std::istringstream lines(text);
  std::string line, kept;
  while (std::getline(lines, line)) {
    kept += line + "\n";
    const json entry = json::parse(line);
    if (entry.value("event", "") == "rung" && entry.value("continues", true) == false) {
      *stoppedKey = entry["key"];
      *rung = entry["rung"];
      return kept;
    }
  }
  return {};
}

TEST(SearchEndToEnd, SuccessiveHalvingStopsTrialsAtRungsAndAResumeObeysTheJournalledDecision) {
  TinyRun run;
  json config = tinyConfig();
  config["epochs"] = 3;
  config["steps_per_epoch"] = 3;
  // Learning rates 100x apart give trials different Dice at a rung, so halving has something to stop.
  config["search"] = {{"strategy", "grid"},
                      {"space", {{"learning_rate", {0.03, 0.01, 0.003, 0.001, 0.0003, 0.0001}}}},
                      {"asha", {{"rungs", {1, 2}}, {"reduction_factor", 2}}}};
  writeFileAtomically(run.config, config.dump(2));
  const fs::path runDir = run.scratch / "halving";
  const auto first = runWorker(3, searchArguments(runDir, run), 180.0);  // coordinator + 2 trial workers
  ASSERT_EQ(first.exitCode, 0) << first.output;

  const ResultsJournal journal = loadJournal(runDir / "results.jsonl");
  std::map<std::pair<std::string, int64_t>, bool> decisions;
  for (const auto& rung : journal.rungs()) {
    EXPECT_TRUE(rung.decisionRecorded);
    EXPECT_TRUE(decisions.emplace(std::make_pair(rung.key, rung.rung), rung.continues).second) << "one decision per rung";
  }
  int stopped = 0;
  for (const auto& record : journal.records()) {
    SCOPED_TRACE(record.trial + " " + record.status);
    if (record.status == "stopped") {
      ++stopped;
      ASSERT_TRUE(record.epochs == 1 || record.epochs == 2) << "stopped at a rung, epoch " << record.epochs;
      EXPECT_EQ(decisions.at({record.key, record.epochs}), false) << "the coordinator's decision stopped it";
    } else {
      EXPECT_EQ(record.status, "finished") << record.error;
      EXPECT_EQ(record.epochs, 3);
      EXPECT_TRUE(decisions.at({record.key, 1}) && decisions.at({record.key, 2}));
    }
  }
  ASSERT_EQ(journal.records().size(), 6u);
  ASSERT_GE(stopped, 1) << "successive halving stopped no trial; Dice at the rungs were tied";

  // The search killed right after its first "stop" decision, before that trial's own line.
  std::string stoppedKey;
  int64_t stopRung = 0;
  const std::string prefix = journalUpToFirstStop(readTextFile(runDir / "results.jsonl"), &stoppedKey, &stopRung);
  ASSERT_FALSE(prefix.empty());
  writeFileAtomically(runDir / "results.jsonl", prefix);
  const ResultsJournal before = loadJournal(runDir / "results.jsonl");
  std::set<std::string> stopKeys;
  for (const auto& rung : before.rungs())
    if (!rung.continues) stopKeys.insert(rung.key);

  const auto second = runWorker(3, searchArguments(runDir, run), 180.0);
  ASSERT_EQ(second.exitCode, 0) << second.output;
  const ResultsJournal after = loadJournal(runDir / "results.jsonl");
  // Nothing the first run decided to stop trained again: no new rung report and no trained record for
  // it, only the replayed "stopped" line of the trial whose own line the kill lost.
  for (size_t i = before.rungs().size(); i < after.rungs().size(); ++i)
    EXPECT_EQ(stopKeys.count(after.rungs()[i].key), 0u) << after.rungs()[i].trial << " reported a rung again";
  int replayed = 0;
  for (size_t i = before.records().size(); i < after.records().size(); ++i) {
    const TrialRecord& record = after.records()[i];
    if (!stopKeys.count(record.key)) continue;
    ++replayed;
    EXPECT_EQ(record.key, stoppedKey);
    EXPECT_EQ(record.status, "stopped");
    EXPECT_EQ(record.worker, -1) << "recorded by the coordinator, not run by a worker";
    EXPECT_EQ(record.epochs, stopRung);
  }
  EXPECT_EQ(replayed, 1);
  // Each (trial, rung) decided once over both runs: a resumed trial hears the journalled decision.
  std::set<std::pair<std::string, int64_t>> seen;
  for (const auto& rung : after.rungs()) EXPECT_TRUE(seen.insert({rung.key, rung.rung}).second) << rung.trial;
  EXPECT_EQ(after.completedKeys().size(), 6u);
  const auto metrics = json::parse(readTextFile(runDir / "metrics.json"));
  EXPECT_EQ(metrics["failed"], 0);
  EXPECT_EQ(metrics["finished"].get<int>() + metrics["stopped"].get<int>() + metrics["skipped"].get<int>(), 6);
}

}  // namespace
}  // namespace medseg::cluster
