#pragma once
// One training run spread over the ranks of an MPI communicator (data parallelism). Every rank holds
// the whole (small, preprocessed) training set and an identical model (weights broadcast from rank
// 0); at step s the global batch is the samples s·B .. s·B+B-1 (B = ranks x batch_size, each sample
// drawn from its own seeded generator, DataLoader.h), and rank r trains on its slice r·b .. r·b+b-1.
// Gradients are averaged by GradientAllreducer during backward, so the update equals that of one
// process with batch B — bit for bit up to float summation order (with per-sample losses and norms:
// loss.batch_dice false, instance/group norm). Validation cases are shared out over the ranks and
// their Dice sums reduced. Rank 0 alone writes the run folder (config.json, checkpoint.pt, best.pt,
// metrics.jsonl, metrics.json); every rank writes timings/rank-<r>.json. A run killed part way (a
// rank died, the job hit its time limit) continues from checkpoint.pt with options.resume.
#if MEDSEG_HAVE_MPI
#include <mpi.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/train/TrainConfig.h"
#include "core/util/Progress.h"

namespace medseg::cluster {

struct DataParallelOptions {
  std::filesystem::path runDir;       // written by rank 0 of comm; empty: write nothing (search trials)
  MPI_Comm comm = MPI_COMM_WORLD;
  size_t bucketBytes = 25u << 20;
  bool overlap = true;                // reduce buckets during backward
  bool validate = true;
  // Continue runDir/checkpoint.pt (written by an earlier, interrupted or killed run): every rank
  // loads it (the run folder is on a file system all ranks see), so weights and optimizer state
  // agree; batches depend only on (seed, step), so the continuation is the run that was cut off.
  bool resume = false;
  // After each validated epoch (same value on every rank); return false to stop (successive halving).
  // Called on every rank; only rank 0's answer counts, it is broadcast.
  std::function<bool(int64_t epoch, double wholeTumourDice)> onValidation;
  int globalRankForLogs = 0;
};

struct DataParallelResult {
  int64_t steps = 0, epochs = 0;
  int ranks = 1;
  double seconds = 0.0;                // whole run on rank 0, data loading included
  double loadSeconds = 0.0;            // loading + preprocessing
  double meanStepSeconds = 0.0;        // wall time per step (batch making excluded)
  double meanCommunicationSeconds = 0.0;  // blocked in MPI per step
  double meanComputeSeconds = 0.0;     // step minus communication
  double finalLoss = 0.0;
  double wholeTumourDice = -1.0;       // last validation
  double bestWholeTumourDice = -1.0;
  std::map<std::string, double> dice;
  bool stoppedEarly = false;
  int64_t parameters = 0;
  nlohmann::json toJson() const;
};

// config: as loaded (data set path set); resolved here against the data set.
DataParallelResult trainDataParallel(TrainConfig config, const DataParallelOptions& options, Reporter& reporter);

}  // namespace medseg::cluster
#endif
