#include "cluster/infer/DistributedInference.h"

#if MEDSEG_HAVE_MPI
#include <mpi.h>

#include <chrono>
#include <map>

#include "cluster/infer/CaseDealing.h"
#include "cluster/infer/MaskMetrics.h"
#include "cluster/parallel/MpiEnvironment.h"
#include "core/dataset/Dataset.h"
#include "core/eval/MetricsReport.h"
#include "core/infer/InferenceJob.h"
#include "core/infer/InferencePlan.h"
#include "core/util/AtomicFile.h"
#include "core/util/Elapsed.h"

namespace medseg::cluster {

namespace fs = std::filesystem;

nlohmann::json DistributedInferenceResult::toJson() const {
  return {{"cases", cases},   {"present", present}, {"segmented", segmented},
          {"failed", failed}, {"failures_bad_input", failuresAreBadInput}, {"scored", scored},
          {"seconds", seconds}};
}

DistributedInferenceResult runDistributedInference(const DistributedInferenceOptions& o, Reporter& reporter) {
  const auto start = std::chrono::steady_clock::now();
  const fs::path masks = o.runDir / "masks";
  InferenceOptions inference = o.inference;
  inference.output = masks;
  // Every rank plans the same cases and orders them the same way; the order is handed to the job as
  // its case list, which it keeps.
  const std::vector<InferenceCase> ordered = orderLargestFirst(planInference(inference), caseVoxels);
  inference.cases.clear();
  for (const auto& job : ordered) inference.cases.push_back(job.entry.id);

  DistributedInferenceResult result;
  result.cases = static_cast<int64_t>(ordered.size());
  const ClaimFiles claims(o.runDir / "claims");
  if (o.rank == 0) {
    fs::create_directories(masks);
    claims.reset();
    for (const auto& job : ordered) {
      removeStaleTemporaries(job.labelsOut);  // a killed attempt's half-written masks
      std::error_code ec;
      if (fs::exists(job.labelsOut, ec)) ++result.present;
    }
    if (result.present > 0)
      reporter.log(std::to_string(result.present) + " of " + std::to_string(result.cases) +
                   " mask(s) already written by an earlier attempt; segmenting the rest");
  }
  mpi::checkMpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier (claims ready)");

  RankCaseDealer dealer(claims, o.runDir / "progress.jsonl", o.rank, inference.device);
  if (!o.plugins) throw std::logic_error("runDistributedInference: no plugin registry given");
  const InferenceSummary mine = runInference(inference, *o.plugins, reporter, &dealer);

  long long counts[3] = {mine.succeeded, mine.failed, mine.failuresAreBadInput ? 0 : 1};
  long long totals[3] = {0, 0, 0};
  mpi::checkMpi(MPI_Allreduce(counts, totals, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce (infer counts)");
  long long present = result.present;
  mpi::checkMpi(MPI_Bcast(&present, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast (masks present)");
  result.present = present;
  result.segmented = totals[0];
  result.failed = totals[1];
  result.failuresAreBadInput = totals[2] == 0;

  long long scored = 0;
  if (o.rank == 0) {
    // References from the data set itself (planned cases carry no labels).
    const Dataset dataset = loadDataset(inference.input);
    std::map<std::string, fs::path> references;
    for (const auto* list : {&dataset.training, &dataset.test})
      for (const auto& entry : *list)
        if (!entry.label.empty()) references[entry.id] = entry.label;
    std::vector<MaskReference> cases;
    for (const auto& job : ordered)
      cases.push_back({job.entry.id, job.labelsOut, references.count(job.entry.id) ? references[job.entry.id] : fs::path(),
                       job.entry.images});
    const MaskMetrics metrics = evaluateMasks(cases, labelSchemeByName(o.labelScheme));
    if (!metrics.evaluated.empty()) writeFileAtomically(o.runDir / "metrics.csv", metricsCsv(metrics.evaluated));
    scored = static_cast<long long>(metrics.evaluated.size());
    result.scored = scored;
    result.seconds = secondsSince(start);
    nlohmann::json document = result.toJson();
    document["kind"] = "infer";
    document["model"] = inference.model.string();
    document["plugin"] = mine.plugin;
    document["data"] = inference.input.string();
    document["subset"] = inference.subset;
    document["label_scheme"] = o.labelScheme;
    document["case_results"] = metrics.cases;
    if (!metrics.evaluated.empty()) document["summary"] = summarizeMetrics(metrics.evaluated).toJson();
    writeFileAtomically(o.runDir / "metrics.json", document.dump(2) + "\n");
  }
  mpi::checkMpi(MPI_Bcast(&scored, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast (scored)");
  result.scored = scored;
  result.seconds = secondsSince(start);
  return result;
}

}  // namespace medseg::cluster
#endif
