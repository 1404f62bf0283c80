#pragma once
// Distributed inference (`medseg submit --mode infer`): the cases of a data set segmented by all ranks
// of an MPI job with one trained model, each rank loading it once on its own device. Cases are dealt
// dynamically, largest first (CaseDealing.h); every case goes through the job `medseg infer` runs
// (core/infer/InferenceJob: the same preprocessing, windows and mask writer, source geometry, atomic
// write), into RUN/masks/<case>.nii.gz. Resuming a run folder segments only the cases whose masks
// are missing. At the end rank 0 scores the masks against the data set's labels where it has them
// (MaskMetrics.h) into RUN/metrics.csv and RUN/metrics.json.
#if MEDSEG_HAVE_MPI
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/infer/InferenceOptions.h"
#include "core/plugin/PluginRegistry.h"
#include "core/util/Progress.h"

namespace medseg::cluster {

struct DistributedInferenceOptions {
  plugin::PluginRegistry* plugins = nullptr;  // where the job's inference plugin is found
  InferenceOptions inference;  // model, input (the data set), subset, window options, device, threads; output is set here
  std::filesystem::path runDir;
  int rank = 0;                // this process' rank in MPI_COMM_WORLD
  std::string labelScheme = "brats";
};

struct DistributedInferenceResult {
  int64_t cases = 0;           // in the subset
  int64_t present = 0;         // masks an earlier attempt had written (not segmented again)
  int64_t segmented = 0;       // by this attempt, over all ranks
  int64_t failed = 0;          // cases that failed in this attempt, over all ranks
  bool failuresAreBadInput = true;
  int64_t scored = 0;          // cases in metrics.csv
  double seconds = 0.0;
  nlohmann::json toJson() const;
};

// Collective over MPI_COMM_WORLD; every rank returns the same counts.
DistributedInferenceResult runDistributedInference(const DistributedInferenceOptions& options, Reporter& reporter);

}  // namespace medseg::cluster
#endif
