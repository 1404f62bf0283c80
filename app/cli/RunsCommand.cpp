// `medseg runs`: the cluster runs under a runs folder and their states (refreshed from the back-end:
// process, Slurm or ssh host); `medseg runs show RUN` details one run (an infer run: its returned
// masks with their metrics); `medseg runs cancel RUN`. A
// queued run with no launcher behind it after --launcher-timeout seconds (its submission died before
// starting anything) is marked failed, so no run stays queued forever.
#include <iomanip>
#include <iostream>

#include "app/cli/CommandRegistry.h"
#include "cluster/infer/ReturnedMasks.h"
#include "cluster/submit/Backend.h"
#include "cluster/submit/ResultFiles.h"
#include "core/util/Interrupt.h"

namespace medseg::cli {
namespace {

namespace fs = std::filesystem;
using namespace medseg::cluster;

struct RunsOptions {
  std::string runRoot = "runs";
  std::string slurmBin;
  std::string run;
  double launcherTimeoutSeconds = 300.0;  // longer than an sbatch or ssh launch may take
};

// The back-end a run was launched with, reaching its host the way submit did (run.json's launch record).
std::unique_ptr<Backend> backendFor(const RunDirectory& run, const RunsOptions& o, double commandTimeoutSeconds) {
  const auto document = run.stateDocument();
  BackendOptions given;
  given.slurmBinDir = o.slurmBin;
  given.commandTimeoutSeconds = commandTimeoutSeconds;
  return makeBackend(document.value("backend", std::string("local")), withRecordedLaunch(document, given));
}

// Asks the run's back-end for news; a back-end that cannot be reached leaves the state as recorded.
std::string refreshState(RunDirectory& run, const RunsOptions& o, std::string* note) {
  try {
    if (isTerminal(run.failIfLauncherNeverStarted(o.launcherTimeoutSeconds))) return toString(run.state());
    return toString(backendFor(run, o, 20.0)->poll(run));
  } catch (const std::exception& error) {
    if (note) *note = error.what();
    return run.stateDocument().value("state", std::string("unknown"));
  }
}

fs::path locateRun(const RunsOptions& o) {
  const fs::path direct(o.run);
  if (fs::is_regular_file(direct / "run.json")) return direct;
  validateRunName(o.run);
  const fs::path inRoot = fs::path(o.runRoot) / o.run;
  if (fs::is_regular_file(inRoot / "run.json")) return inRoot;
  throw InputError("no run \"" + o.run + "\" under " + o.runRoot + " (see `medseg runs --run-dir " + o.runRoot + "`)");
}

int listRuns(const RunsOptions& o, CliContext& context) {
  auto& reporter = context.reporter();
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& folder : listRunFolders(o.runRoot)) {
    nlohmann::json entry = {{"run", folder.filename().string()}, {"run_dir", folder.string()}};
    try {
      RunDirectory run = RunDirectory::open(folder);
      std::string note;
      entry["state"] = refreshState(run, o, &note);
      const auto document = run.stateDocument();
      const auto spec = run.spec();
      entry["backend"] = document.value("backend", std::string());
      entry["mode"] = toString(spec.mode);
      entry["ranks"] = spec.ranks;
      entry["updated"] = document.value("updated", std::string());
      if (document.contains("job_id")) entry["job_id"] = document["job_id"];
      if (!note.empty()) entry["note"] = note;
    } catch (const std::exception& error) {
      entry["state"] = "unreadable";
      entry["note"] = error.what();
    }
    runs.push_back(entry);
  }
  if (reporter.json()) {
    reporter.emit({{"event", "result"}, {"kind", "runs"}, {"run_root", o.runRoot}, {"runs", runs}});
    return kOk;
  }
  if (runs.empty()) {
    std::cout << "no runs under " << o.runRoot << "\n";
    return kOk;
  }
  std::cout << std::left << std::setw(32) << "run" << std::setw(11) << "state" << std::setw(8) << "backend" << std::setw(12)
            << "mode" << std::setw(7) << "ranks" << "updated\n";
  for (const auto& r : runs) {
    std::cout << std::left << std::setw(32) << r["run"].get<std::string>() << std::setw(11) << r["state"].get<std::string>()
              << std::setw(8) << r.value("backend", std::string("-")) << std::setw(12) << r.value("mode", std::string("-"))
              << std::setw(7) << (r.contains("ranks") ? std::to_string(r["ranks"].get<int>()) : "-")
              << r.value("updated", std::string()) << "\n";
    if (r.contains("note")) std::cout << "    note: " << r["note"].get<std::string>() << "\n";
  }
  return kOk;
}

int showRun(const RunsOptions& o, CliContext& context) {
  RunDirectory run = RunDirectory::open(locateRun(o));
  std::string note;
  refreshState(run, o, &note);
  nlohmann::json result = {{"event", "result"}, {"kind", "run"}, {"run_dir", run.path().string()},
                           {"spec", run.spec().toJson()}, {"status", run.stateDocument()}};
  // Results were written by the run's processes, maybe on other machines: validated before reading.
  for (const auto& [field, file] : {std::pair<const char*, const char*>{"metrics", "metrics.json"},
                                    {"search_report", "search-report.json"}}) {
    std::error_code ec;
    if (!fs::exists(run.path() / file, ec) && !fs::is_symlink(run.path() / file, ec)) continue;
    try {
      result[field] = readResultJson(run.path(), file);
    } catch (const std::exception& error) {
      result[std::string(field) + "_error"] = error.what();
    }
  }
  // Models the run wrote: the same checks (inside the run folder, no links, a size bound, a PyTorch
  // archive) before anyone is pointed at them.
  nlohmann::json models = nlohmann::json::object();
  for (const char* file : {"best.pt", "checkpoint.pt"}) {
    std::error_code ec;
    if (!fs::exists(run.path() / file, ec) && !fs::is_symlink(run.path() / file, ec)) continue;
    try {
      models[file] = resolveResultFile(run.path(), file, ResultKind::Checkpoint, uintmax_t{16} << 30).string();
    } catch (const std::exception& error) {
      models[file] = {{"error", error.what()}};
    }
  }
  if (!models.empty()) result["models"] = models;
  try {
    const nlohmann::json masks = listReturnedMasks(run.path());
    if (!masks.empty()) result["masks"] = masks;
  } catch (const std::exception& error) {
    result["masks_error"] = error.what();
  }
  nlohmann::json logs = nlohmann::json::array();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run.logsDir(), ec))
    if (entry.is_regular_file()) logs.push_back(entry.path().filename().string());
  result["logs"] = logs;
  if (!note.empty()) result["note"] = note;
  if (context.reporter().json()) {
    context.reporter().emit(result);
    return kOk;
  }
  std::cout << "run      " << run.path().filename().string() << "\nfolder   " << run.path().string() << "\nstate    "
            << result["status"]["state"].get<std::string>() << "\nspec     " << result["spec"].dump() << "\n";
  for (const auto& [key, value] : result["status"].items())
    if (key != "state" && key != "history") std::cout << std::left << std::setw(9) << key << value.dump() << "\n";
  std::cout << "history\n";
  for (const auto& h : result["status"]["history"])
    std::cout << "  " << h.value("time", std::string()) << "  " << h.value("state", std::string())
              << (h.contains("message") ? "  " + h["message"].get<std::string>() : "") << "\n";
  if (result.contains("metrics")) std::cout << "metrics  " << result["metrics"].dump(2) << "\n";
  if (result.contains("metrics_error")) std::cout << "metrics  refused: " << result["metrics_error"].get<std::string>() << "\n";
  if (result.contains("search_report"))
    std::cout << "best     " << result["search_report"].value("best_trial", std::string()) << " (Dice "
              << result["search_report"].value("best_dice", -1.0) << ")\n";
  for (const auto& [file, model] : models.items())
    std::cout << "model    " << file << "  "
              << (model.is_string() ? model.get<std::string>() : "refused: " + model["error"].get<std::string>()) << "\n";
  if (result.contains("masks")) {
    std::cout << "masks    " << result["masks"].size() << "\n";
    for (const auto& mask : result["masks"]) {
      std::cout << "  " << std::left << std::setw(20) << mask["case"].get<std::string>();
      if (mask.contains("metrics"))
        for (const auto& region : mask["metrics"]["regions"])
          std::cout << " " << region["region"].get<std::string>() << " " << std::fixed << std::setprecision(3)
                    << region["dice"].get<double>();
      std::cout << "  " << mask["mask"].get<std::string>() << "\n";
    }
  }
  if (result.contains("masks_error")) std::cout << "masks    refused: " << result["masks_error"].get<std::string>() << "\n";
  std::cout << "logs     " << logs.dump() << "\n";
  return kOk;
}

int cancelRun(const RunsOptions& o, CliContext& context) {
  RunDirectory run = RunDirectory::open(locateRun(o));
  backendFor(run, o, 60.0)->cancel(run);
  const std::string state = toString(run.state());
  if (context.reporter().json())
    context.reporter().emit({{"event", "result"}, {"kind", "cancel"}, {"run_dir", run.path().string()}, {"state", state}});
  else
    std::cout << run.path().filename().string() << ": " << state << "\n";
  return kOk;
}

void addRuns(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand("runs", "List cluster runs and their states (show RUN, cancel RUN for one run)");
  auto o = std::make_shared<RunsOptions>();
  cmd->add_option("--run-dir", o->runRoot, "Folder holding the run folders")->capture_default_str();
  cmd->add_option("--slurm-bin", o->slurmBin, "Folder of squeue/sacct/scancel (default: the one the run was submitted with, else PATH)");
  cmd->add_option("--launcher-timeout", o->launcherTimeoutSeconds,
                  "Seconds after which a queued run with no launcher process or job is marked failed")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->require_subcommand(0, 1);
  cmd->fallthrough();
  cmd->callback([o, cmd, &context] {
    if (!cmd->get_subcommands().empty()) return;  // show/cancel set the action
    context.action = [o, &context] { return listRuns(*o, context); };
  });
  auto* show = cmd->add_subcommand("show", "Details of one run: spec, state history, metrics, logs");
  show->add_option("run", o->run, "Run name (under --run-dir) or run folder")->required();
  show->callback([o, &context] { context.action = [o, &context] { return showRun(*o, context); }; });
  auto* cancel = cmd->add_subcommand("cancel", "Cancel a queued or running run (kill, scancel or remote kill)");
  cancel->add_option("run", o->run, "Run name (under --run-dir) or run folder")->required();
  cancel->callback([o, &context] { context.action = [o, &context] { return cancelRun(*o, context); }; });
}

const CommandRegistration runsCommandRegistration{"", "runs", &addRuns};

}  // namespace
}  // namespace medseg::cli
