#pragma once
// The best parallel efficiency this machine allows for a kind of work: `workers` independent copies of
// it at once, each pinned to its own block of CPUs as an experiment search pins its workers
// (core/util/Cores.h), against one copy alone on one such block. The copies share nothing but the
// machine (memory bandwidth, caches, the clock budget of a socket), so what they lose is the
// machine's, not the search's or the allreduce's: a measured efficiency is judged against this
// ceiling, and the performance model takes its inverse as the slow-down of running at once.
//
// Measured on a 2-vCPU VM here: two pinned single-thread conv3d training loops took 4.45 s and 4.86 s
// at once against 4.07 s alone (a ceiling of 0.84 to 0.91).
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace medseg::cluster {

struct MachineCeiling {
  int workers = 1;
  // One copy alone before and after each round of copies at once (alone, at once, alone, at once, ...,
  // alone), so drift weighs on both. The median alone run and the median round at once (by the mean
  // of its copies) are the measurement: a shared VM's runs spread both ways.
  std::vector<double> aloneRuns;
  std::vector<std::vector<double>> atOnceRounds;
  double aloneSeconds = 0.0;
  std::vector<double> atOnceSeconds;  // the median round: each copy's own time, copies started together
  bool pinned = false;                // false when there are fewer CPUs than copies: nobody is pinned, as in a search
  std::string work;                   // what ran, in words
  // alone / mean(at once): the throughput share each copy keeps when all run together.
  double efficiency() const;
  double slowdown() const { return 1.0 / efficiency(); }
  // The efficiencies the runs allow, from the fastest alone run against the slowest round at once to
  // the slowest alone run against the fastest round: how far the machine's noise moves the ceiling.
  std::pair<double, double> efficiencyRange() const;
  nlohmann::json toJson() const;
};

// One copy of the work: the command that runs it in `folder` (its stdout goes to folder/stdout.jsonl)
// and how to read the work's own time from what it wrote there.
struct CeilingWork {
  std::string description;
  std::function<std::vector<std::string>(const std::filesystem::path& folder)> command;
  std::function<double(const std::filesystem::path& folder)> seconds;
};

// Runs one copy alone in folder/alone-1, then `workers` copies at once in folder/at-once-1/copy-<i>,
// then alone again in folder/alone-2, `rounds` rounds in all; a copy that fails is a std::runtime_error
// naming its folder and stderr. folder must not exist yet.
MachineCeiling measureMachineCeiling(const CeilingWork& work, int workers, const std::filesystem::path& folder, int rounds = 1);

}  // namespace medseg::cluster
