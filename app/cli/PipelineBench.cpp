#include "app/cli/PipelineBench.h"

#include <filesystem>
#include <iostream>
#include <sstream>

#include "cluster/submit/Backend.h"
#include "cluster/submit/LocalBackend.h"
#include "cluster/submit/ResultFiles.h"
#include "cluster/submit/ShellQuote.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string joinNumbers(const std::vector<double>& values) {
  std::ostringstream out;
  for (size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << values[i];
  return out.str();
}

json benchConfig(const PipelineBenchOptions& o, int64_t patch) {
  return {{"seed", 1},
          {"device", "cpu"},
          {"targets", "labels"},
          {"patch_size", {patch, patch, patch}},
          {"batch_size", o.batch},
          {"epochs", 1},
          {"steps_per_epoch", 1},
          {"network",
           {{"in_channels", 4}, {"out_channels", 4}, {"depth", o.depth}, {"base_filters", o.baseFilters}, {"norm", o.norm},
            {"deep_supervision", false}}},
          {"optimizer", {{"name", "adam"}, {"lr", 1e-3}}},
          {"loss", {{"batch_dice", false}}},
          {"loader", {{"workers", 0}}}};
}

// One measured job, ranks of medseg-worker --mode model under mpirun here, in `folder`; returns `resultFile`.
json runJob(const PipelineBenchOptions& o, int ranks, const fs::path& folder, const json& config, std::vector<std::string> args,
            const std::string& resultFile, Reporter& reporter) {
  throwIfInterrupted("pipeline benchmark");
  if (fs::exists(folder)) throw InputError(folder.string() + " already exists; remove it or choose another --out");
  fs::create_directories(folder / "logs");
  writeFileAtomically(folder / "config.json", config.dump(2) + "\n");
  cluster::BackendOptions backend;
  backend.workerProgram = o.worker;
  std::vector<std::string> worker{cluster::resolveWorkerProgram(backend), "--run-dir", folder.string(), "--mode", "model", "--config",
                                  (folder / "config.json").string()};
  worker.insert(worker.end(), args.begin(), args.end());
  const auto argv = cluster::mpirunArgv({o.mpirun, ranks, "", true, worker});
  if (reporter.json())
    reporter.emit({{"event", "log"}, {"message", cluster::shellJoin(argv)}});
  else
    reporter.log(folder.filename().string() + ": " + std::to_string(ranks) + " rank(s) ...");
  cluster::runLocalJob(argv, folder, folder.filename().string());
  return cluster::readResultJson(folder, resultFile);
}

std::vector<std::string> planArgs(const PipelineBenchOptions& o, int64_t microBatches) {
  std::vector<std::string> args{"--task", "bench", "--micro-batches", std::to_string(microBatches), "--schedule", o.schedule, "--fit-stages",
                                std::to_string(o.stages), "--fit-max-edge", std::to_string(o.maxFitEdge), "--bench-steps",
                                std::to_string(o.steps)};
  if (o.checkpoint) args.push_back("--recompute");
  if (!o.memoryPerDeviceMb.empty()) args.insert(args.end(), {"--memory-per-device", joinNumbers(o.memoryPerDeviceMb)});
  return args;
}

double maxOf(const json& values) {
  double most = 0.0;
  for (const auto& v : values) most = std::max(most, v.get<double>());
  return most;
}

json trainingSection(const PipelineBenchOptions& o, const fs::path& out, Reporter& reporter) {
  json section;
  // The single process trains the whole batch at once (one stage, one micro-batch), whatever the budget.
  PipelineBenchOptions unlimited = o;
  unlimited.memoryPerDeviceMb.clear();
  section["single"] = runJob(unlimited, 1, out / "train-1", benchConfig(o, o.patch), planArgs(unlimited, 1), "bench.json", reporter);
  section["pipeline"] =
      runJob(o, o.stages, out / ("train-" + std::to_string(o.stages)), benchConfig(o, o.patch), planArgs(o, o.microBatches), "bench.json", reporter);
  section["peak_rss_ratio"] = maxOf(section["pipeline"]["peak_rss_mb_per_rank"]) / maxOf(section["single"]["peak_rss_mb_per_rank"]);
  const json& fits = section["pipeline"]["fit"];
  if (fits.empty() || o.skipFitCheck) return section;
  section["fit"] = fits;
  const int64_t edge = fits.back().value("largest_patch", int64_t{0});
  if (edge <= 0) return section;
  // Validate the model: K stages at the largest patch they are modelled to fit, measured; and one
  // process at the same patch, which the model says does not fit.
  json check;
  check["patch"] = edge;
  check["budget_mb"] = o.memoryPerDeviceMb;
  // The stages the partitioner chose for that patch, so the run measures exactly the modelled split.
  std::string split;
  const json& stages = fits.back()["partition"]["stages"];
  for (size_t s = 1; s < stages.size(); ++s) split += (split.empty() ? "" : ",") + stages[s]["blocks"][0].get<std::string>();
  std::vector<std::string> args = planArgs(o, o.microBatches);
  args.insert(args.end(), {"--split", split});
  check["pipeline"] = runJob(o, o.stages, out / ("fit-" + std::to_string(o.stages) + "-stages"), benchConfig(o, edge), args,
                             "bench.json", reporter);
  const double budget = o.memoryPerDeviceMb.empty() ? 0.0 : o.memoryPerDeviceMb.front();
  check["pipeline_fits_measured"] = maxOf(check["pipeline"]["peak_rss_mb_per_rank"]) <= budget;
  unlimited.steps = 1;  // the single process is over budget by design: measure it anyway
  check["single"] = runJob(unlimited, 1, out / "fit-1-stage", benchConfig(o, edge), planArgs(unlimited, 1), "bench.json", reporter);
  check["single_peak_mb"] = maxOf(check["single"]["peak_rss_mb_per_rank"]);
  section["fit_check"] = check;
  return section;
}

json inferenceSection(const PipelineBenchOptions& o, const fs::path& out, Reporter& reporter) {
  std::vector<std::string> args{"--task", "infer"};
  if (o.inferSize.size() == 3)
    args.insert(args.end(), {"--infer-size", std::to_string(o.inferSize[0]) + "," + std::to_string(o.inferSize[1]) + "," +
                                                 std::to_string(o.inferSize[2])});
  if (!o.model.empty()) args.insert(args.end(), {"--model", fs::absolute(o.model).string()});
  if (!o.data.empty()) args.insert(args.end(), {"--data", fs::absolute(o.data).string(), "--cases", std::to_string(o.cases)});
  if (o.roi > 0) args.insert(args.end(), {"--roi", std::to_string(o.roi)});
  args.insert(args.end(), {"--overlap", std::to_string(o.overlap)});
  json section;
  section["single"] = runJob(o, 1, out / "infer-1", benchConfig(o, o.patch), args, "infer.json", reporter);
  section["pipeline"] = runJob(o, o.stages, out / ("infer-" + std::to_string(o.stages)), benchConfig(o, o.patch), args, "infer.json", reporter);
  return section;
}

void printSummary(const json& r, const PipelineBenchOptions& o) {
  std::cout.precision(4);
  if (r.contains("training")) {
    const auto& t = r["training"];
    std::cout << "training, patch " << o.patch << "^3, batch " << o.batch << ":\n"
              << "  1 process        step " << t["single"]["step_seconds"].get<double>() << " s, peak RSS "
              << t["single"]["peak_rss_mb_per_rank"].dump() << " MB\n"
              << "  " << o.stages << " stages         step " << t["pipeline"]["step_seconds"].get<double>() << " s, peak RSS per rank "
              << t["pipeline"]["peak_rss_mb_per_rank"].dump() << " MB (modelled " << t["pipeline"]["modelled_mb_per_stage"].dump()
              << "), stages " << t["pipeline"]["plan"]["stages"].dump() << "\n";
    if (t.contains("fit")) {
      std::cout << "  largest patch within " << joinNumbers(o.memoryPerDeviceMb) << " MiB per device:";
      for (const auto& f : t["fit"]) std::cout << "  " << f["stages"] << " stage(s): " << f["largest_patch"] << "^3";
      std::cout << "\n";
    }
    if (t.contains("fit_check"))
      std::cout << "  measured at " << t["fit_check"]["patch"] << "^3: " << o.stages << " stages peak RSS "
                << t["fit_check"]["pipeline"]["peak_rss_mb_per_rank"].dump() << " MB, 1 process "
                << t["fit_check"]["single_peak_mb"].get<double>() << " MB\n";
  }
  if (r.contains("inference"))
    for (const char* which : {"single", "pipeline"}) {
      const auto& i = r["inference"][which];
      std::cout << "inference, " << i["ranks"] << " rank(s), peak RSS " << i["peak_rss_mb_per_rank"].dump() << " MB\n";
      for (const auto& c : i["cases"]) {
        std::cout << "  " << c["case"].get<std::string>() << " whole volume " << c["whole_volume"]["seconds"].get<double>()
                  << " s (WT Dice " << c["whole_volume"]["dice"]["WT"].get<double>() << ")";
        if (c.contains("sliding_window"))
          std::cout << ", sliding window " << c["sliding_window"]["seconds"].get<double>() << " s, " << c["sliding_window"]["windows"]
                    << " windows (WT Dice " << c["sliding_window"]["dice"]["WT"].get<double>() << ")";
        std::cout << "\n";
      }
      if (!i["volume"].is_null())
        std::cout << "  " << i["volume"]["size"].dump() << " x4 in one pass: " << i["volume"]["seconds"].get<double>() << " s\n";
    }
}

}  // namespace

int runPipelineBench(const PipelineBenchOptions& o, CliContext& context) {
  Reporter& reporter = context.reporter();
  if (o.stages < 2) throw InputError("--stages: a pipeline needs at least 2 stages (1 is the single-process baseline it is compared with)");
  if (!o.data.empty() && o.model.empty())
    throw InputError("--data: inference Dice needs a trained --model (e.g. best.pt of `medseg train` or `medseg demo`)");
  const fs::path out = fs::absolute(o.out);
  fs::create_directories(out);
  json result = {{"event", "result"}, {"kind", "bench-pipeline"}, {"stages", o.stages}, {"out", out.string()},
                 {"micro_batches", o.microBatches}, {"schedule", o.schedule}, {"checkpoint", o.checkpoint}};
  if (!o.skipTrain) result["training"] = trainingSection(o, out, reporter);
  if (!o.skipInfer) result["inference"] = inferenceSection(o, out, reporter);
  writeFileAtomically(out / "pipeline-bench.json", result.dump(2) + "\n");
  if (context.json)
    reporter.emit(result);
  else
    printSummary(result, o);
  return kOk;
}

}  // namespace medseg::cli
