#include "cluster/scaling/ScalingStudy.h"

#include <algorithm>
#include <functional>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>

#include "cluster/scaling/AllreduceFit.h"
#include "cluster/scaling/MachineCeiling.h"
#include "cluster/scaling/SeedStudy.h"
#include "cluster/search/ResultsJournal.h"
#include "cluster/search/SearchSpace.h"
#include "cluster/submit/LocalBackend.h"
#include "cluster/submit/ResultFiles.h"
#include "cluster/submit/ShellQuote.h"
#include "core/util/AtomicFile.h"
#include "core/util/ConfigDocument.h"
#include "core/util/Interrupt.h"
#include "core/util/Median.h"
#include "core/util/Text.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;

// The link inputs: the defaults with their data-sheet sources, or the command line's values.
LinkInput linkInput(LinkInput assumed, double alphaUs, double gbps, bool given, const std::string& flags) {
  if (given) {
    assumed.cost = {alphaUs * 1e-6, gbps * 1e9};
    assumed.source = "assumed: given on the command line (" + flags + ")";
  }
  return assumed;
}

// The link measured on this machine: MPI_Allreduce timed by the largest data-parallel run's ranks
// (allreduce.json, written by medseg-worker --probe-allreduce) and fitted to the ring model.
std::optional<LinkInput> measuredLink(const fs::path& runFolder, nlohmann::json& record) {
  if (!fs::exists(runFolder / "allreduce.json")) return std::nullopt;
  const auto probe = nlohmann::json::parse(readTextFile(runFolder / "allreduce.json"));
  std::vector<AllreduceSample> samples;
  for (const auto& s : probe.at("samples")) samples.push_back({s.at("bytes").get<double>(), s.at("seconds").get<double>()});
  const int ranks = probe.at("ranks").get<int>();
  AllreduceFit fit;
  try {
    fit = fitRingAllreduce(ranks, samples);
  } catch (const InputError& error) {  // timings too noisy to fit: the report says so, the study stands
    record = {{"samples", probe.at("samples")}, {"error", error.what()}};
    return std::nullopt;
  }
  record = {{"ranks", ranks}, {"host", probe.value("host", "")}, {"samples", probe.at("samples")},
            {"alpha_us", fit.link.alphaSeconds * 1e6}, {"gb_per_s", fit.link.bytesPerSecond / 1e9},
            {"rms_residual_seconds", fit.rmsResidualSeconds}};
  return LinkInput{"this_machine", fit.link,
                   "measured: MPI_Allreduce at " + std::to_string(samples.size()) + " sizes on " + std::to_string(ranks) +
                       " ranks on " + probe.value("host", std::string("this host")) +
                       ", least-squares fit of the ring model (" + (runFolder / "allreduce.json").string() + ")",
                   true};
}

// Sizes to predict beyond the measured ones.
std::vector<int> beyond(const std::vector<int>& predict, int largestMeasured) {
  std::vector<int> sizes;
  for (int w : predict)
    if (w > largestMeasured) sizes.push_back(w);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

// One measured run, launched as the local back-end launches a submitted one, into folder (which
// holds a copy of the config, as a run folder does); returns its metrics.json.
nlohmann::json runOnce(const ScalingStudyOptions& o, RunMode mode, int ranks, const fs::path& folder, Reporter& reporter) {
  if (fs::exists(folder))
    throw InputError(folder.string() + " already exists; remove it or choose another --out (measurements need fresh folders)");
  RunSpec spec;
  spec.mode = mode;
  spec.ranks = ranks;
  spec.configPath = o.config;
  spec.dataPath = o.data;
  for (const auto& assignment : o.overrides) spec.extraArgs.insert(spec.extraArgs.end(), {"--set", assignment});
  if (mode == RunMode::Data && ranks > 1) spec.extraArgs.push_back("--probe-allreduce");  // the link, measured
  fs::create_directories(folder / "logs");
  fs::copy_file(o.config, runConfigPath(spec, folder));
  BackendOptions backend;
  backend.workerProgram = o.worker;
  backend.mpirunProgram = o.mpirun;
  const auto argv = LocalBackend(backend).plan(spec, folder).argv;
  const std::string what = toString(mode) + " run with " + std::to_string(ranks) + " ranks";
  reporter.emit({{"event", "log"}, {"message", toString(mode) + " x " + std::to_string(ranks) + ": " + shellJoin(argv)}});
  if (!reporter.json()) reporter.log(what + " ...");
  runLocalJob(argv, folder, what);
  return readResultJson(folder, "metrics.json");
}

std::string percent(double share) { return fixedDecimals(100.0 * share, 1) + " %"; }

// A size's measurement: the median run's folder, and what every run of it measured.
struct MeasuredSize {
  fs::path medianRun;
  std::vector<double> runs;
};

// Runs of one size spread by more than this share of the fastest: the report says so (a shared VM).
constexpr double kNoisySpread = 0.25;

// Every size measured `repeats` times, the sizes interleaved (1, 2, 1, 2, ...) so that a machine whose
// speed drifts weighs on each size alike. One run is one sample (a shared VM's runs spread +-30 %, both
// ways), so the run whose `key` in metrics.json is the median of a size's runs is the size's
// measurement, with its journal, link probe and figures together; every run's value is kept for the
// report's ranges. Folders PREFIX-W, PREFIX-W.2, ...; `check` vets each run.
std::map<int, MeasuredSize> measureSizes(const ScalingStudyOptions& o, RunMode mode, const std::vector<int>& sizes, int extraRanks,
                                         const fs::path& out, const std::string& prefix, const std::string& key,
                                         Reporter& reporter, const std::function<void(const fs::path&, int)>& check = {}) {
  std::map<int, std::vector<std::pair<double, fs::path>>> runs;
  for (int r = 1; r <= o.repeats; ++r)
    for (int size : sizes) {
      const std::string name = prefix + "-" + std::to_string(size) + (r == 1 ? "" : "." + std::to_string(r));
      const auto metrics = runOnce(o, mode, size + extraRanks, out / name, reporter);
      if (check) check(out / name, size);
      runs[size].emplace_back(metrics.at(key).get<double>(), out / name);
    }
  std::map<int, MeasuredSize> measured;
  for (const auto& [size, samples] : runs) {
    MeasuredSize& m = measured[size];
    m.medianRun = lowerMedianBy(samples, [](const auto& sample) { return sample.first; }).second;
    for (const auto& sample : samples) m.runs.push_back(sample.first);
    const auto [fastest, slowest] = std::minmax_element(m.runs.begin(), m.runs.end());
    if (*fastest > 0 && (*slowest - *fastest) / *fastest > kNoisySpread)
      reporter.log(prefix + " x " + std::to_string(size) + ": its " + std::to_string(m.runs.size()) + " runs spread by " +
                   percent((*slowest - *fastest) / *fastest) + " (" + fixedDecimals(*fastest, 4) + " to " + fixedDecimals(*slowest, 4) +
                   " " + key + "): this machine's speed changed while measuring; compare model and measurement within "
                   "the report's ranges (measured_speedup_range, predicted_speedup_range)");
  }
  return measured;
}

// Where the trials of one search spent their time, from its journal: the start-up and data-load
// overhead next to the trials' own work, split by cold (new process) and warm trials.
// A worker's first trial starts its trial process (a cost per worker, however many trials follow);
// every later trial pays only the warm start-up and its data load (the cost per trial).
struct TrialTimes {
  int trials = 0, coldTrials = 0;
  double seconds = 0.0, startup = 0.0, dataLoad = 0.0, coldStartup = 0.0, warmStartup = 0.0;
  double warmSeconds = 0.0, warmDataLoad = 0.0;  // trials of warm workers only
  double overheadShare() const { return seconds > 0 ? (startup + dataLoad) / seconds : 0.0; }
  double warmOverheadShare() const { return warmSeconds > 0 ? (warmStartup + warmDataLoad) / warmSeconds : 0.0; }
  double meanColdStartupSeconds() const { return coldTrials ? coldStartup / coldTrials : 0.0; }
  double meanWarmStartupSeconds() const { return trials > coldTrials ? warmStartup / (trials - coldTrials) : 0.0; }
  // What a trial pays once its worker is warm (the cold figure when no trial ran warm).
  double warmStartupSeconds() const { return trials > coldTrials ? meanWarmStartupSeconds() : meanColdStartupSeconds(); }
  double meanDataLoadSeconds() const { return trials ? dataLoad / trials : 0.0; }
  nlohmann::json toJson() const {
    return {{"trials", trials},
            {"cold_trials", coldTrials},
            {"trial_seconds", seconds},
            {"startup_seconds", startup},
            {"data_load_seconds", dataLoad},
            {"overhead_share", overheadShare()},
            {"warm_overhead_share", warmOverheadShare()},
            {"mean_cold_startup_seconds", meanColdStartupSeconds()},
            {"mean_warm_startup_seconds", meanWarmStartupSeconds()},
            {"mean_data_load_seconds", meanDataLoadSeconds()}};
  }
};

TrialTimes trialTimes(const ResultsJournal& journal) {
  TrialTimes t;
  for (const auto& r : journal.records()) {
    ++t.trials;
    t.seconds += r.seconds;
    t.startup += r.startupSeconds;
    t.dataLoad += r.dataLoadSeconds;
    (r.coldStart ? t.coldStartup : t.warmStartup) += r.startupSeconds;
    t.coldTrials += r.coldStart ? 1 : 0;
    if (!r.coldStart) t.warmSeconds += r.seconds, t.warmDataLoad += r.dataLoadSeconds;
  }
  return t;
}

// This program (the one `medseg` binary), for the ceiling's copies of the work.
std::string thisProgram() { return fs::read_symlink("/proc/self/exe").string(); }

// The training config as the study's runs read it (overrides applied); experiment mode: the config of
// the search's first trial, which is what one worker does at a time.
nlohmann::json ceilingConfig(const ScalingStudyOptions& o, RunMode mode) {
  nlohmann::json document = readConfigDocument(o.config);
  for (const auto& assignment : o.overrides) applyOverride(document, assignment);
  if (mode == RunMode::Experiment) {
    const SearchSpace space = SearchSpace::fromJson(document.at("search"));
    const auto trials = space.trials();
    if (trials.empty()) throw InputError("--config " + o.config + ": the search has no trials");
    return trialConfig(document, trials.front(), space);
  }
  document.erase("search");
  return document;
}

// One copy of the work for the machine's ceiling: `medseg train` of that config, timed by its own
// result as the study's runs of that mode are timed: data parallelism by its steps ("step_seconds",
// the mean step; start-up and validation are not the steps'), a search by the whole trial ("seconds":
// the run after the process started).
CeilingWork trainingWork(const ScalingStudyOptions& o, RunMode mode) {
  const nlohmann::json document = ceilingConfig(o, mode);
  const std::string program = thisProgram(), data = o.data;
  CeilingWork work;
  work.description = mode == RunMode::Experiment ? "medseg train of the search's first trial"
                                                : "medseg train of the config, one rank, timed by its steps";
  work.command = [document, program, data](const fs::path& folder) {
    writeFileAtomically(folder / "config.json", document.dump(2));
    std::vector<std::string> argv{program, "--json", "train", "--config", (folder / "config.json").string(), "--out",
                                  (folder / "run").string()};
    if (!data.empty()) argv.insert(argv.end(), {"--data", data});
    return argv;
  };
  const std::string timedBy = mode == RunMode::Data ? "step_seconds" : "seconds";
  work.seconds = [timedBy](const fs::path& folder) {
    std::istringstream lines(readTextFile(folder / "stdout.jsonl"));
    for (std::string line; std::getline(lines, line);) {
      if (line.empty() || line.front() != '{') continue;
      const auto event = nlohmann::json::parse(line, nullptr, false);
      if (!event.is_discarded() && event.value("event", "") == "result") return event.at(timedBy).get<double>();
    }
    throw std::runtime_error("machine ceiling: no result in " + (folder / "stdout.jsonl").string());
  };
  return work;
}

// This machine's ceiling for `workers` copies of one run's work at once, recorded in the report.
MachineCeiling measureCeiling(const ScalingStudyOptions& o, RunMode mode, int workers, const fs::path& out, ScalingReport& report,
                              Reporter& reporter) {
  if (!reporter.json()) reporter.log("machine ceiling for " + std::to_string(workers) + " copies at once ...");
  const MachineCeiling ceiling =
      measureMachineCeiling(trainingWork(o, mode), workers, out / ("ceiling-" + toString(mode) + "-" + std::to_string(workers)),
                            o.repeats);
  nlohmann::json record = ceiling.toJson();
  record["mode"] = toString(mode);
  report.ceilings.push_back(record);
  reporter.emit({{"event", "log"}, {"message", "ceiling " + toString(mode) + " x " + std::to_string(workers) + ": " + record.dump()}});
  return ceiling;
}

// Work running at once is never faster than alone: a ceiling measured above 1 is the machine's noise,
// and the model takes no speed-up from it (the report keeps the measured value).
double slowdownFromCeiling(double ceilingEfficiency) { return std::max(1.0, 1.0 / ceilingEfficiency); }

// A size measures nothing when its trials failed: its makespan would time failures. The study stops
// there, naming the trials' errors, and reports no row from it.
void requireFinishedTrials(const ResultsJournal& journal, int workers) {
  const auto latest = journal.latestByKey();
  std::map<std::string, std::vector<std::string>> trialsByError;
  for (const auto& [key, record] : latest)
    if (record.status == "failed") trialsByError[record.error.empty() ? "no error recorded" : record.error].push_back(record.trial);
  if (trialsByError.empty() && !latest.empty()) return;
  if (latest.empty())
    throw std::runtime_error("experiment x " + std::to_string(workers) + ": the search recorded no trial in " +
                             journal.file().string());
  size_t failed = 0;
  std::string reasons;
  for (const auto& [error, trials] : trialsByError) {
    failed += trials.size();
    reasons += "\n  " + std::to_string(trials.size()) + " trial(s) (" + trials.front() + (trials.size() > 1 ? ", ..." : "") +
               "): " + error;
  }
  throw std::runtime_error("experiment x " + std::to_string(workers) + ": " + std::to_string(failed) + " of " +
                           std::to_string(latest.size()) + " trials failed, so this size measured nothing (" +
                           journal.file().string() + "):" + reasons);
}

}  // namespace

ScalingStudyResult runScalingStudy(const ScalingStudyOptions& o, Reporter& reporter) {
  if (o.config.empty() || !fs::is_regular_file(o.config)) throw InputError("--config " + o.config + " is not a readable file");
  std::vector<int> sizes = o.workers;
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (sizes.empty() || sizes.front() < 1) throw InputError("--workers: a list of positive sizes, e.g. 1,2,4");
  ScalingStudyOptions absolute = o;
  absolute.config = fs::absolute(o.config).string();
  if (!o.data.empty()) absolute.data = fs::absolute(o.data).string();
  const fs::path out = fs::absolute(o.out);
  ScalingReport report;
  const LinkInput intra = linkInput(nvlinkAssumption(), o.intraAlphaUs, o.intraGBps, o.intraGiven, "--intra-alpha-us/--intra-gbps");
  const LinkInput inter =
      linkInput(infinibandEdrAssumption(), o.interAlphaUs, o.interGBps, o.interGiven, "--inter-alpha-us/--inter-gbps");
  report.model = {{"overlap", o.overlap}, {"nodes", o.nodes}, {"gpus_per_node_predicted", o.gpusPerNode},
                  {"intra_node", {{"alpha_us", intra.cost.alphaSeconds * 1e6}, {"gb_per_s", intra.cost.bytesPerSecond / 1e9}}},
                  {"inter_node", {{"alpha_us", inter.cost.alphaSeconds * 1e6}, {"gb_per_s", inter.cost.bytesPerSecond / 1e9}}}};
  for (const LinkInput* link : {&intra, &inter})
    for (auto& input : link->inputs()) report.inputs.push_back(input);
  MedsegOverheads medsegOverheads;  // the README's measurement unless this study measures it

  if (o.mode == "data" || o.mode == "both") {
    DataParallelModel model;
    model.overlap = o.overlap;
    model.intraNode = intra.cost;
    model.interNode = inter.cost;
    report.inputs.push_back({"overlap", o.overlap, "", "assumed: share of communication hidden behind backward (--overlap)", false});
    std::map<int, MeasuredSize> measured = measureSizes(absolute, RunMode::Data, sizes, 0, out, "data", "step_seconds", reporter);
    // This machine's ranks talk over the link measured here (when 2 or more ranks ran); sizes beyond
    // it over the assumed NVLink / InfiniBand.
    DataParallelModel here = model;
    nlohmann::json probe;
    if (sizes.back() > 1) {
      if (const auto link = measuredLink(measured[sizes.back()].medianRun, probe)) {
        here.intraNode = link->cost;
        for (auto& input : link->inputs()) report.inputs.push_back(input);
      }
      if (!probe.is_null()) report.model["this_machine_link"] = probe;  // the fit, or why there is none
    }
    for (int ranks : sizes) {
      const auto metrics = readResultJson(measured[ranks].medianRun, "metrics.json");
      ScalingRow row;
      row.mode = "data";
      row.workers = ranks;
      row.seconds = metrics.at("step_seconds").get<double>();
      row.communicationSeconds = metrics.at("communication_seconds").get<double>();
      row.computeSeconds = metrics.at("compute_seconds").get<double>();
      row.runSeconds = measured[ranks].runs;
      if (model.computeSecondsPerStep <= 0) {  // the smallest run calibrates the model
        model.computeSecondsPerStep = std::max(1e-9, row.computeSeconds);
        model.modelBytes = 4.0 * metrics.at("parameters").get<double>();
        here.computeSecondsPerStep = model.computeSecondsPerStep;
        here.modelBytes = model.modelBytes;
        report.model["compute_seconds_per_step"] = model.computeSecondsPerStep;
        report.model["gradient_bytes"] = model.modelBytes;
        report.inputs.push_back({"data.compute_seconds_per_step", model.computeSecondsPerStep, "s",
                                 "measured: compute time per step of the " + std::to_string(ranks) + "-rank run here", true});
        report.inputs.push_back({"data.gradient_bytes", model.modelBytes, "B", "measured: 4 x the model's parameters", true});
      }
      const int nodes = std::max(1, std::min(o.nodes, ranks));
      auto predictWithCeiling = [&](double ceilingEfficiency) {
        DataParallelModel atThisSize = here;
        atThisSize.computeSlowdownAtOnce = slowdownFromCeiling(ceilingEfficiency);
        return predictDataParallel(atThisSize, nodes, (ranks + nodes - 1) / nodes);
      };
      if (ranks > 1) {  // the ranks share this machine: its ceiling for that many at once
        const MachineCeiling ceiling = measureCeiling(absolute, RunMode::Data, ranks, out, report, reporter);
        row.ceilingEfficiency = ceiling.efficiency();
        const auto [lowest, highest] = ceiling.efficiencyRange();
        row.predictedSpeedupLow = predictWithCeiling(lowest).speedup;
        row.predictedSpeedupHigh = predictWithCeiling(highest).speedup;
      }
      const auto prediction = predictWithCeiling(ranks > 1 ? row.ceilingEfficiency : 1.0);
      row.predictedSpeedup = prediction.speedup;
      row.predictedEfficiency = prediction.efficiency;
      report.rows.push_back(row);
    }
    for (int ranks : beyond(o.predictWorkers, sizes.back())) {
      const int gpus = std::max(1, o.gpusPerNode);
      const int nodes = (ranks + gpus - 1) / gpus;
      const auto prediction = predictDataParallel(model, nodes, std::min(ranks, gpus));
      ScalingRow row;
      row.mode = "data";
      row.workers = prediction.ranks;
      row.measured = false;
      row.predictedSpeedup = prediction.speedup;
      row.predictedEfficiency = prediction.efficiency;
      report.rows.push_back(row);
    }
  }
  if (o.mode == "experiment" || o.mode == "both") {
    ExperimentParallelModel model;
    // One coordinator rank plus `workers` trial workers.
    const std::map<int, MeasuredSize> measured =
        measureSizes(absolute, RunMode::Experiment, sizes, 1, out, "experiment", "seconds", reporter,
                     [](const fs::path& run, int workers) {
                       ResultsJournal journal(run / "results.jsonl");
                       journal.load();
                       requireFinishedTrials(journal, workers);
                     });
    for (int workers : sizes) {
      const fs::path folder = measured.at(workers).medianRun;
      const auto metrics = readResultJson(folder, "metrics.json");
      ScalingRow row;
      row.mode = "experiment";
      row.workers = workers;
      row.seconds = metrics.at("seconds").get<double>();
      row.runSeconds = measured.at(workers).runs;
      ResultsJournal journal(folder / "results.jsonl");
      journal.load();
      const TrialTimes times = trialTimes(journal);
      row.trialOverheadShare = times.overheadShare();
      report.model["trial_times_" + std::to_string(workers)] = times.toJson();
      reporter.log("experiment x " + std::to_string(workers) + ": start-up + data load " +
                   percent(times.warmOverheadShare()) + " of a warm trial's time, " + percent(times.overheadShare()) +
                   " with the " + std::to_string(times.coldTrials) + " worker start(s) of " +
                   fixedDecimals(times.meanColdStartupSeconds(), 2) + " s each");
      if (model.trialSeconds.empty()) {  // the smallest run's trials calibrate the model
        // The trials' own work; start-up and data load are the model's separate, measured terms.
        for (const auto& record : journal.records())
          model.trialSeconds.push_back(record.trainingSeconds + record.validationSeconds);
        model.startupSeconds = times.warmStartupSeconds();
        model.workerStartSeconds = std::max(0.0, times.meanColdStartupSeconds() - model.startupSeconds);
        model.dataLoadSeconds = times.meanDataLoadSeconds();
        report.model["trial_seconds"] = model.trialSeconds;
        report.model["startup_seconds"] = model.startupSeconds;
        report.model["worker_start_seconds"] = model.workerStartSeconds;
        report.model["data_load_seconds"] = model.dataLoadSeconds;
        const std::string journalName = (folder / "results.jsonl").string();
        report.inputs.push_back({"experiment.startup_seconds", model.startupSeconds, "s",
                                 "measured: mean warm trial start-up in " + journalName, true});
        report.inputs.push_back({"experiment.data_load_seconds", model.dataLoadSeconds, "s",
                                 "measured: mean trial data load in " + journalName, true});
        report.inputs.push_back({"experiment.worker_start_seconds", model.workerStartSeconds, "s",
                                 "measured: a cold trial's start-up beyond a warm one's, once per worker, in " + journalName, true});
        // The seed-grid reference with MedSeg's overheads uses the start-up measured now.
        medsegOverheads.startupSeconds = model.startupSeconds;
        medsegOverheads.startupSource = "measured: mean warm trial start-up in " + journalName;
        medsegOverheads.dataLoadShare = times.overheadShare();
        medsegOverheads.dataLoadShareSource = "measured: (start-up + data load) / trial time in " + journalName;
      }
      const auto base = predictExperimentParallel(model, sizes.front());
      auto predictWithCeiling = [&](double ceilingEfficiency) {
        ExperimentParallelModel atThisSize = model;
        atThisSize.slowdownAtOnce = slowdownFromCeiling(ceilingEfficiency);
        return base.makespanSeconds / predictExperimentParallel(atThisSize, workers).makespanSeconds;
      };
      if (workers > 1) {  // the workers share this machine: its ceiling for that many trials at once
        const MachineCeiling ceiling = measureCeiling(absolute, RunMode::Experiment, workers, out, report, reporter);
        row.ceilingEfficiency = ceiling.efficiency();
        const auto [lowest, highest] = ceiling.efficiencyRange();
        row.predictedSpeedupLow = predictWithCeiling(lowest);
        row.predictedSpeedupHigh = predictWithCeiling(highest);
      }
      row.predictedSpeedup = predictWithCeiling(workers > 1 ? row.ceilingEfficiency : 1.0);
      row.predictedEfficiency = row.predictedSpeedup * sizes.front() / workers;
      report.rows.push_back(row);
    }
    const auto base = predictExperimentParallel(model, sizes.front());
    for (int workers : beyond(o.predictWorkers, sizes.back())) {
      ScalingRow row;
      row.mode = "experiment";
      row.workers = workers;
      row.measured = false;
      row.predictedSpeedup = base.makespanSeconds / predictExperimentParallel(model, workers).makespanSeconds;
      row.predictedEfficiency = row.predictedSpeedup * sizes.front() / workers;
      report.rows.push_back(row);
    }
  }
  report.references = seedStudyReferences(SeedStudyInputs{}, medsegOverheads);
  report.seedSensitivity = seedStudySensitivity(SeedStudyInputs{});
  for (auto& input : report.references.back().inputs) report.inputs.push_back(input);
  report.computeMeasuredSpeedups();
  report.write(out);
  return {std::move(report), out};
}

}  // namespace medseg::cluster
