#pragma once
// `medseg bench --pipeline`: the model-parallel benchmark (LAMP), run here through mpirun +
// medseg-worker --mode model:
//  1. training at one patch size, 1 rank (single process: one stage, the whole network) and K ranks
//     (K pipeline stages): step time and peak RSS per rank next to the partitioner's modelled bytes;
//  2. the largest cubic patch that fits --memory-per-device with 1 .. K stages (partitioner's memory
//     model from the measured profile), validated by a K-rank training run at that patch;
//  3. inference with 1 and K ranks: whole-volume vs sliding-window time and Dice on labelled cases
//     (--data, with a trained --model for meaningful Dice) and one pass over a random volume of
//     --infer-size (240,240,155: a whole BraTS image).
// Everything is written under --out (one folder per run + pipeline-bench.json) and printed (JSON with --json).
#include <string>
#include <vector>

#include "app/cli/CliContext.h"

namespace medseg::cli {

struct PipelineBenchOptions {
  int stages = 2;
  std::vector<double> memoryPerDeviceMb;
  int64_t microBatches = 2;
  std::string schedule = "gpipe";
  bool checkpoint = false;
  int64_t baseFilters = 16, depth = 4;
  std::string norm = "instance";
  int64_t batch = 2, patch = 64, steps = 2;
  std::vector<int64_t> inferSize{240, 240, 155};
  int64_t roi = 0;            // sliding window edge; 0: the patch
  double overlap = 0.5;
  std::string model, data;    // inference: trained model and labelled cases
  int64_t cases = 1;
  std::string out = "pipeline-bench";
  std::string worker, mpirun = "mpirun";
  bool skipTrain = false, skipInfer = false, skipFitCheck = false;
  int64_t maxFitEdge = 256;
};

int runPipelineBench(const PipelineBenchOptions& options, CliContext& context);

}  // namespace medseg::cli
