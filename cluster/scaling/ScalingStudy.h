#pragma once
// A strong scaling study on this machine, as `medseg scaling` runs it: each mode at each size through
// mpirun + medseg-worker (sizes interleaved, the median run of each the measurement), the machine's
// ceiling for that many ranks or trials at once, and the performance model fed with what was measured
// here (compute per step, the allreduce link fitted from MPI_Allreduce timings, trial start-up and data
// load from the journal) predicting the measured sizes and those beyond this machine with the link
// constants it has to assume, each input labelled with its source; every report also carries the
// seed-study reference curves (SeedStudy.h). Measurement and model live here; the command only parses
// its flags and prints the report.
#include <filesystem>
#include <string>
#include <vector>

#include "cluster/scaling/PerformanceModel.h"
#include "cluster/scaling/ScalingReport.h"
#include "core/util/Progress.h"

namespace medseg::cluster {

// What `medseg scaling` measures and how the model is fed (the command's flags).
struct ScalingStudyOptions {
  std::string mode = "data";
  std::vector<int> workers{1, 2};
  std::string config, data, out, worker, mpirun = "mpirun";
  std::vector<std::string> overrides;
  double overlap = 0.5;
  double intraAlphaUs = kNvlinkDefault.alphaSeconds * 1e6, intraGBps = kNvlinkDefault.bytesPerSecond / 1e9;
  double interAlphaUs = kInfinibandEdrDefault.alphaSeconds * 1e6, interGBps = kInfinibandEdrDefault.bytesPerSecond / 1e9;
  int nodes = 1;
  std::vector<int> predictWorkers{4, 8, 16, 32};  // sizes beyond this machine: predicted only
  int gpusPerNode = 4;                             // how predicted sizes are spread over nodes
  bool intraGiven = false, interGiven = false;     // link constants from the command line
  double timeoutMinutes = 30.0;
  int repeats = 1;                                 // runs per size (interleaved); the median is the measurement
};

struct ScalingStudyResult {
  ScalingReport report;
  std::filesystem::path out;  // scaling.csv, scaling.json, scaling.svg and one folder per run
};

// Runs the study into options.out; InputError for unusable options, a failed run names its log.
ScalingStudyResult runScalingStudy(const ScalingStudyOptions& options, Reporter& reporter);

}  // namespace medseg::cluster
