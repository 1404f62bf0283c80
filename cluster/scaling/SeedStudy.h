#pragma once
// The seed study as performance-model inputs, and the two reference predictions every scaling
// report carries: the seed's 32-trial grid on its 32 GPUs (a) with the seed's own per-trial
// overheads, to check the model against the speed-up it measured, and (b) with MedSeg's measured
// overheads, to say what MedSeg would reach on the same GPUs.
//
// Seed study: J. L. Berral, O. Aranda, J. L. Dominguez, J. Torres, "Distributing Deep Learning
// Hyperparameter Tuning for 3D Medical Image Segmentation", IPDPS Workshops 2022 (arXiv:2110.15884):
// TensorFlow + Ray Tune, a 0.4 M-parameter 3-D U-Net on the MSD brain-tumour set, 32 trials on
// 8 nodes x 4 V100 (MareNostrum CTE-POWER), experiment-parallel speed-up x12 to x14 on 32 GPUs.
//
// Why the seed lost more than half of 32: every trial is a new process that starts Python,
// TensorFlow and CUDA, and re-reads the float32 data set from the shared file system every epoch;
// the four trials of a node divide the node's file-system client bandwidth, so a trial reads four
// times slower with 32 GPUs busy than alone. And with 32 trials on 32 GPUs the makespan is the
// longest trial: the GroupNorm half of the grid (unfused in TF) sets it. MedSeg removes the first
// two (warm workers, a float16 cache read once per trial); the grid's spread remains.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/scaling/ModelInput.h"
#include "cluster/scaling/PerformanceModel.h"

namespace medseg::cluster {

// Every number with its source; "assumed" ones are stated estimates, not taken from the paper: their
// reasons are in seedStudyAssumptions() and SeedStudySensitivity.h shows how far each one moves the
// prediction.
struct SeedStudyInputs {
  // Hardware (paper): 8 nodes x 4 V100, one trial per GPU.
  int nodes = 8;
  int gpusPerNode = 4;
  // Data (MSD Task01 BrainTumour): 484 labelled cases, each 4 MRI modalities + 1 label map of
  // 240x240x155 voxels, held as float32 by the seed's loader: 5 x 35.7 MB = 178.6 MB ("about 175 MB").
  int cases = 484;
  double bytesPerCase = 5.0 * 240 * 240 * 155 * 4;
  double validationShare = 0.2;       // assumed: an 80/20 split; training steps cover the 80 %
  int batchPerGpu = 2;                // paper: batch 2 per GPU
  double parameters = 0.4e6;          // paper: 0.4 M-parameter U-Net (not used for time: no allreduce in a 1-GPU trial)
  // Training time per trial (assumed, the same for every trial of the grid: a fixed epoch budget).
  int epochs = 20;                    // assumed: fixed budget; cancels out of the speed-up but for start-up's share
  double stepSecondsBatchNorm = 0.25; // assumed: one step of batch 2 on a V100 for a 0.4 M-parameter 3-D U-Net
  double groupNormStepFactor = 1.3;   // assumed: TF Addons GroupNormalization (reshape + moments, unfused) vs
                                      // cuDNN's fused BatchNorm; the grid's only duration spread
  // Overheads.
  double startupSeconds = 45.0;       // assumed: new Ray actor process + Python/TF import from GPFS + CUDA/cuDNN init
  double nodeReadBytesPerSecond = 2e9;// assumed: one GPFS client per node (a single-stream reader reaches 1-3 GB/s)
  bool rereadEveryEpoch = true;       // README: the seed re-read every case from the shared file system each epoch
  // Published result the model is checked against.
  double measuredSpeedupLow = 12.0, measuredSpeedupHigh = 14.0;

  int gpus() const { return nodes * gpusPerNode; }
  int stepsPerEpoch() const;
  // Each trial's training work on one GPU, in the grid's dispatch order (SearchSpace preset
  // "seed-study-32": learning rate x norm x beta2 x amsgrad; only the norm changes the step time).
  std::vector<double> trialWorkSeconds() const;
  std::vector<ModelInput> inputs() const;
};

// One assumed constant of SeedStudyInputs: named once, with its unit, the reason for its value and
// how to read and set it, so that the model's inputs and the sensitivity table cannot disagree.
struct SeedAssumption {
  std::string name;    // "seed.startup_seconds"
  std::string unit;
  std::string reason;  // why this value: the estimate's basis, in words a reader can check
  double (*get)(const SeedStudyInputs&);
  void (*set)(SeedStudyInputs&, double);
  // How "halved" and "doubled" apply: to the value itself, or to its excess over 1 for a ratio that
  // cannot go below 1 (a slow-down factor).
  bool variesExcessOverOne = false;
};
const std::vector<SeedAssumption>& seedStudyAssumptions();

// MedSeg's per-trial overheads: start-up of a warm worker's trial (journal) and the preprocessed
// cache read once per trial through the same node file-system client as the seed's reads.
struct MedsegOverheads {
  double startupSeconds = 0.003;      // measured: warm trial start-up, 8-trial grid on 2 vCPUs, 2026-12-03 (README)
  std::string startupSource = "measured: mean warm trial start-up in the journal of an 8-trial grid on 2 vCPUs, "
                              "2026-12-03 (README, medseg scaling --mode experiment)";
  double dataLoadShare = 0.0;         // measured (start-up + data load) / trial time, for the record; 0: not measured
  std::string dataLoadShareSource;
  double cacheBytesPerSourceByte = 0.13 / 0.52;  // measured: float16 cache 0.13 MB vs 0.52 MB float32 per case
                                                 // (README, synthetic 32^3 cases; cropping not credited)
  bool readOncePerTrial = true;       // design: a trial loads the cache when it starts and keeps it for all epochs
  std::vector<ModelInput> inputs() const;
};

ExperimentParallelModel seedOverheadModel(const SeedStudyInputs& seed);
ExperimentParallelModel medsegOverheadModel(const SeedStudyInputs& seed, const MedsegOverheads& medseg);

// A predicted speed-up curve (never measured) with the inputs it was computed from.
struct ReferenceCurve {
  std::string name;   // "seed_overheads" | "medseg_overheads"
  std::string label;  // for legends
  std::vector<ExperimentParallelPrediction> points;
  std::vector<ModelInput> inputs;
  const ExperimentParallelPrediction& at(int workers) const;  // InputError when not computed
  nlohmann::json toJson() const;
};

// Worker counts 1, 2, 4, ... up to the seed's 32 GPUs.
std::vector<int> seedStudyWorkerCounts(const SeedStudyInputs& seed);
std::vector<ReferenceCurve> seedStudyReferences(const SeedStudyInputs& seed, const MedsegOverheads& medseg);

}  // namespace medseg::cluster
