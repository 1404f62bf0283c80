#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "cluster/search/ResultsJournal.h"
#include "cluster/search/SearchReport.h"
#include "cluster/search/SearchSpace.h"
#include "cluster/search/SuccessiveHalving.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {

using nlohmann::json;

TEST(SearchSpace, SeedStudyPresetHas32DistinctTrials) {
  const auto space = SearchSpace::fromJson("seed-study-32");
  const auto trials = space.trials();
  ASSERT_EQ(trials.size(), 32u);
  std::set<std::string> keys;
  std::set<double> rates;
  for (const auto& t : trials) {
    keys.insert(t.key());
    rates.insert(t.params["learning_rate"].get<double>());
    EXPECT_EQ(t.params.size(), 4u);
  }
  EXPECT_EQ(keys.size(), 32u);
  EXPECT_EQ(rates, (std::set<double>{1e-4, 5e-4, 1e-3, 5e-3}));
  EXPECT_EQ(trials[0].id, "trial-000");
  EXPECT_EQ(trials[31].id, "trial-031");
  // The trial config: Adam, the trial's values at their config keys, no search section.
  const json base = {{"epochs", 2}, {"optimizer", {{"lr", 0.5}}}, {"search", "seed-study-32"}};
  const json config = trialConfig(base, trials[5], space);
  EXPECT_FALSE(config.contains("search"));
  EXPECT_EQ(config["optimizer"]["name"], "adam");
  EXPECT_EQ(config["optimizer"]["lr"], trials[5].params["learning_rate"]);
  EXPECT_EQ(config["network"]["norm"], trials[5].params["norm"]);
  EXPECT_EQ(config["optimizer"]["betas"][0], 0.9);
  EXPECT_EQ(config["optimizer"]["betas"][1], trials[5].params["beta2"]);
  EXPECT_EQ(config["optimizer"]["amsgrad"], trials[5].params["amsgrad"]);
  EXPECT_EQ(config["epochs"], 2);
  // Data-parallel trials in groups of 4 ranks scale the learning rate linearly.
  EXPECT_DOUBLE_EQ(trialConfig(base, trials[5], space, 4)["optimizer"]["lr"].get<double>(),
                   4 * trials[5].params["learning_rate"].get<double>());
}

TEST(SearchSpace, GridIsTheCartesianProduct) {
  const auto space = SearchSpace::fromJson(
      {{"strategy", "grid"}, {"space", {{"learning_rate", {1e-4, 5e-4}}, {"norm", {"batch", "group", "instance"}}}}});
  const auto trials = space.trials();
  ASSERT_EQ(trials.size(), 6u);
  std::set<std::string> keys;
  for (const auto& t : trials) keys.insert(t.key());
  EXPECT_EQ(keys.size(), 6u);
}

TEST(SearchSpace, RandomIsDeterministicBySeed) {
  const json section = {{"strategy", "random"},
                        {"trials", 8},
                        {"seed", 11},
                        {"space", {{"learning_rate", {{"min", 1e-5}, {"max", 1e-2}, {"log", true}}},
                                   {"norm", {"batch", "group"}},
                                   {"base_filters", {{"min", 4}, {"max", 32}, {"integer", true}}}}}};
  const auto a = SearchSpace::fromJson(section).trials();
  const auto b = SearchSpace::fromJson(section).trials();
  ASSERT_EQ(a.size(), 8u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].key(), b[i].key());
    const double lr = a[i].params["learning_rate"].get<double>();
    EXPECT_GE(lr, 1e-5);
    EXPECT_LE(lr, 1e-2);
    EXPECT_TRUE(a[i].params["base_filters"].is_number_integer());
  }
  json other = section;
  other["seed"] = 12;
  EXPECT_NE(SearchSpace::fromJson(other).trials()[0].key(), a[0].key());
}

TEST(SearchSpace, RejectsBadSections) {
  EXPECT_THROW(SearchSpace::fromJson("no-such-preset"), InputError);
  EXPECT_THROW(SearchSpace::fromJson({{"strategy", "bayes"}, {"space", {{"lr", {1}}}}}), InputError);
  EXPECT_THROW(SearchSpace::fromJson({{"space", {{"lr", json::array()}}}}), InputError);
  EXPECT_THROW(SearchSpace::fromJson({{"space", {{"lr", {{"min", 1}, {"max", 2}}}}}}), InputError);  // grid + range
  EXPECT_THROW(SearchSpace::fromJson({{"strategy", "random"}, {"space", {{"lr", {1, 2}}}}}), InputError);  // no trials
  EXPECT_THROW(SearchSpace::fromJson({{"spaec", {{"lr", {1}}}}}), InputError);
}

TrialRecord finished(const Trial& t, double dice) {
  TrialRecord r;
  r.trial = t.id;
  r.key = t.key();
  r.params = t.params;
  r.status = "finished";
  r.dice = dice;
  return r;
}

TEST(ResultsJournal, ResumeSkipsFinishedAndRetriesFailed) {
  test::ScratchDir scratch("journal");
  const auto trials = SearchSpace::fromJson("seed-study-32").trials();
  {
    ResultsJournal journal(scratch / "results.jsonl");
    journal.load();
    journal.append(finished(trials[0], 0.7));
    journal.append(finished(trials[1], 0.8));
    TrialRecord failed = finished(trials[2], -1);
    failed.status = "failed";
    failed.error = "training diverged at step 3 (loss is not finite)";
    journal.append(failed);
  }
  ResultsJournal journal(scratch / "results.jsonl");
  journal.load();
  EXPECT_TRUE(journal.warnings().empty());
  ASSERT_EQ(journal.records().size(), 3u);
  EXPECT_EQ(journal.records()[2].status, "failed");
  EXPECT_EQ(journal.records()[2].error, "training diverged at step 3 (loss is not finite)");
  const auto done = journal.completedKeys();
  EXPECT_EQ(done, (std::set<std::string>{trials[0].key(), trials[1].key()}));
  size_t toRun = 0;
  for (const auto& t : trials) toRun += done.count(t.key()) ? 0 : 1;
  EXPECT_EQ(toRun, 30u);
}

TEST(ResultsJournal, TornLastLineIsIgnoredWithAWarningAndRepaired) {
  test::ScratchDir scratch("journal-torn");
  const auto trials = SearchSpace::fromJson("seed-study-32").trials();
  const auto file = scratch / "results.jsonl";
  appendLineDurably(file, finished(trials[0], 0.6).toJson().dump());
  const std::string torn = finished(trials[1], 0.9).toJson().dump();
  {
    std::ofstream out(file, std::ios::app | std::ios::binary);
    out << torn.substr(0, torn.size() / 2);  // killed mid-write: no newline
  }
  ResultsJournal journal(file);
  journal.load();
  ASSERT_EQ(journal.records().size(), 1u);
  ASSERT_EQ(journal.warnings().size(), 1u);
  EXPECT_NE(journal.warnings()[0].find("line 2"), std::string::npos);
  // The next record lands on its own line and is readable.
  journal.append(finished(trials[1], 0.9));
  ResultsJournal again(file);
  again.load();
  EXPECT_EQ(again.records().size(), 2u);
  EXPECT_EQ(again.completedKeys().size(), 2u);
  EXPECT_EQ(again.warnings().size(), 1u);
}

TEST(SuccessiveHalving, StopsTheBottomFraction) {
  SuccessiveHalving asha({{1, 3}, 2.0});
  EXPECT_TRUE(asha.isRung(1));
  EXPECT_FALSE(asha.isRung(2));
  EXPECT_TRUE(asha.report(1, 0.5));   // first result at a rung continues
  EXPECT_FALSE(asha.report(1, 0.4));  // 2 results, keep top 1: 0.5 > 0.4 -> stop
  EXPECT_TRUE(asha.report(1, 0.6));   // best so far
  EXPECT_TRUE(asha.report(1, 0.55));  // 4 results, keep top 2: only 0.6 is better
  EXPECT_FALSE(asha.report(1, 0.1));
  EXPECT_EQ(asha.resultsAt(1), 5u);
  EXPECT_TRUE(asha.report(3, 0.2));   // rungs are independent
}

TEST(SearchReport, SortsTrialsAndPicksTheBestFinished) {
  test::ScratchDir scratch("search-report");
  const auto trials = SearchSpace::fromJson("seed-study-32").trials();
  ResultsJournal journal(scratch / "results.jsonl");
  journal.append(finished(trials[0], 0.5));
  journal.append(finished(trials[1], 0.75));
  TrialRecord stopped = finished(trials[2], 0.9);
  stopped.status = "stopped";
  journal.append(stopped);
  TrialRecord failed = finished(trials[3], -1);
  failed.status = "failed";
  failed.error = "worker killed";
  journal.append(failed);
  const auto report = SearchReport::build(journal, [](const TrialRecord& r) { return json{{"from", r.trial}}; });
  ASSERT_EQ(report.trials.size(), 4u);
  EXPECT_EQ(report.trials.front().trial, trials[2].id);
  EXPECT_EQ(report.trials.back().status, "failed");
  EXPECT_EQ(report.bestTrial, trials[1].id);  // the stopped trial does not count
  EXPECT_DOUBLE_EQ(report.bestDice, 0.75);
  EXPECT_EQ(report.bestConfig["from"], trials[1].id);
  report.write(scratch.path());
  const auto text = readTextFile(scratch / "search-report.txt");
  EXPECT_NE(text.find("worker killed"), std::string::npos);
  EXPECT_NE(text.find("best: " + trials[1].id), std::string::npos);
  EXPECT_EQ(json::parse(readTextFile(scratch / "search-report.json"))["best_trial"], trials[1].id);
}

}  // namespace
}  // namespace medseg::cluster
