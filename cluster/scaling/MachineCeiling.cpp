#include "cluster/scaling/MachineCeiling.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "cluster/submit/Process.h"
#include "core/util/Cores.h"
#include "core/util/Interrupt.h"
#include "core/util/Median.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;

// A child started while this thread is pinned to `cpus` inherits the pin (posix_spawn has no
// affinity attribute); this thread gets its own CPUs back at once.
pid_t spawnPinned(const std::vector<std::string>& argv, const SpawnOptions& options, const std::vector<int>& cpus) {
  if (cpus.empty()) return spawnProcess(argv, options);
  const std::vector<int> mine = usableCpus();
  pinThisThread(cpus);
  pid_t pid = -1;
  try {
    pid = spawnProcess(argv, options);
  } catch (...) {
    pinThisThread(mine);
    throw;
  }
  pinThisThread(mine);
  return pid;
}

pid_t startCopy(const CeilingWork& work, const fs::path& folder, const std::vector<int>& cpus) {
  fs::create_directories(folder);
  SpawnOptions options;
  options.stdoutFile = folder / "stdout.jsonl";
  options.stderrFile = folder / "stderr.log";
  return spawnPinned(work.command(folder), options, cpus);
}

double finishCopy(const CeilingWork& work, pid_t pid, const fs::path& folder) {
  const ProcessResult result = waitProcess(pid);
  if (result.exitCode != 0)
    throw std::runtime_error("machine ceiling: " + work.description + " in " + folder.string() + " failed (exit " +
                             std::to_string(result.exitCode) + "); see " + (folder / "stderr.log").string());
  return work.seconds(folder);
}

// A round at once is as fast as its copies on average.
double mean(const std::vector<double>& seconds) {
  return std::accumulate(seconds.begin(), seconds.end(), 0.0) / double(std::max<size_t>(1, seconds.size()));
}

}  // namespace

double MachineCeiling::efficiency() const {
  if (atOnceSeconds.empty() || aloneSeconds <= 0) return 1.0;
  return aloneSeconds / mean(atOnceSeconds);
}

std::pair<double, double> MachineCeiling::efficiencyRange() const {
  if (aloneRuns.empty() || atOnceRounds.empty()) return {efficiency(), efficiency()};
  std::vector<double> roundMeans;
  for (const auto& round : atOnceRounds) roundMeans.push_back(mean(round));
  const auto [fastestAlone, slowestAlone] = std::minmax_element(aloneRuns.begin(), aloneRuns.end());
  const auto [fastestRound, slowestRound] = std::minmax_element(roundMeans.begin(), roundMeans.end());
  return {*fastestAlone / *slowestRound, *slowestAlone / *fastestRound};
}

nlohmann::json MachineCeiling::toJson() const {
  const auto [lowest, highest] = efficiencyRange();
  return {{"workers", workers},         {"work", work},     {"alone_seconds", aloneSeconds}, {"alone_runs", aloneRuns},
          {"at_once_seconds", atOnceSeconds}, {"at_once_rounds", atOnceRounds}, {"pinned", pinned},
          {"efficiency", efficiency()}, {"efficiency_range", {lowest, highest}}};
}

MachineCeiling measureMachineCeiling(const CeilingWork& work, int workers, const fs::path& folder, int rounds) {
  if (workers < 2) throw InputError("machine ceiling: needs at least 2 copies");
  if (rounds < 1) throw InputError("machine ceiling: needs at least 1 round");
  if (fs::exists(folder)) throw InputError(folder.string() + " already exists; measurements need fresh folders");
  const std::vector<int> cpus = usableCpus();
  MachineCeiling ceiling;
  ceiling.workers = workers;
  ceiling.work = work.description;
  ceiling.pinned = !cpuBlock(cpus, 0, workers).empty();
  // Alone on the block the first worker would have, so the copy has the CPUs it has at once.
  auto runAlone = [&](int n) {
    const fs::path where = folder / ("alone-" + std::to_string(n));
    ceiling.aloneRuns.push_back(finishCopy(work, startCopy(work, where, cpuBlock(cpus, 0, workers)), where));
  };
  runAlone(1);
  for (int round = 1; round <= rounds; ++round) {
    const fs::path at = folder / ("at-once-" + std::to_string(round));
    std::vector<pid_t> pids;
    for (int i = 0; i < workers; ++i) pids.push_back(startCopy(work, at / ("copy-" + std::to_string(i)), cpuBlock(cpus, i, workers)));
    std::vector<double> seconds;
    std::string failure;
    for (int i = 0; i < workers; ++i) {  // wait for every copy, even after one failed: none is left behind
      try {
        seconds.push_back(finishCopy(work, pids[size_t(i)], at / ("copy-" + std::to_string(i))));
      } catch (const std::exception& error) {
        if (failure.empty()) failure = error.what();
      }
    }
    if (!failure.empty()) throw std::runtime_error(failure);
    ceiling.atOnceRounds.push_back(seconds);
    runAlone(round + 1);
  }
  ceiling.aloneSeconds = lowerMedianBy(ceiling.aloneRuns, [](double seconds) { return seconds; });
  ceiling.atOnceSeconds = lowerMedianBy(ceiling.atOnceRounds, mean);
  return ceiling;
}

}  // namespace medseg::cluster
