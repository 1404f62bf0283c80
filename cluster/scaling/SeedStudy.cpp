#include "cluster/scaling/SeedStudy.h"

#include <cmath>

#include "cluster/search/SearchSpace.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {
namespace {

const char* kPaper = "Berral et al., IPDPS Workshops 2022 (arXiv:2110.15884)";

double trainingCases(const SeedStudyInputs& seed) { return std::round(seed.cases * (1.0 - seed.validationShare)); }
double dataSetBytes(const SeedStudyInputs& seed) { return seed.cases * seed.bytesPerCase; }

ReferenceCurve curve(std::string name, std::string label, const ExperimentParallelModel& model, const std::vector<int>& workers,
                     std::vector<ModelInput> inputs) {
  ReferenceCurve c{std::move(name), std::move(label), {}, std::move(inputs)};
  for (int w : workers) c.points.push_back(predictExperimentParallel(model, w));
  return c;
}

}  // namespace

int SeedStudyInputs::stepsPerEpoch() const {
  return static_cast<int>(std::ceil(trainingCases(*this) / std::max(1, batchPerGpu)));
}

std::vector<double> SeedStudyInputs::trialWorkSeconds() const {
  std::vector<double> work;
  for (const Trial& trial : SearchSpace::preset("seed-study-32").trials()) {
    const bool groupNorm = trial.params.value("norm", std::string()) == "group";
    work.push_back(epochs * stepsPerEpoch() * stepSecondsBatchNorm * (groupNorm ? groupNormStepFactor : 1.0));
  }
  return work;
}

const std::vector<SeedAssumption>& seedStudyAssumptions() {
  static const std::vector<SeedAssumption> assumptions{
      {"seed.validation_share", "",
       "held-out share of the 484 cases; 0.2 is the usual 80/20 split (one fold of nnU-Net's 5-fold cross-validation); "
       "the paper's split is not restated",
       [](const SeedStudyInputs& s) { return s.validationShare; }, [](SeedStudyInputs& s, double v) { s.validationShare = v; }},
      {"seed.epochs", "",
       "a fixed budget, the same for every trial; the speed-up depends on it only through the share of start-up and reads",
       [](const SeedStudyInputs& s) { return double(s.epochs); },
       [](SeedStudyInputs& s, double v) { s.epochs = std::max(1, int(std::lround(v))); }},
      {"seed.step_seconds_batch_norm", "s",
       "one training step of batch 2 on a V100 for the 0.4 M-parameter 3-D U-Net; an estimate, not a measurement: it sets "
       "the work that start-up and reads are weighed against",
       [](const SeedStudyInputs& s) { return s.stepSecondsBatchNorm; },
       [](SeedStudyInputs& s, double v) { s.stepSecondsBatchNorm = v; }},
      {"seed.group_norm_step_factor", "",
       "TF Addons GroupNormalization (reshape + moments, unfused) against cuDNN's fused BatchNorm: the grid's only "
       "spread of trial durations (varied as its excess over 1)",
       [](const SeedStudyInputs& s) { return s.groupNormStepFactor; },
       [](SeedStudyInputs& s, double v) { s.groupNormStepFactor = v; }, true},
      {"seed.startup_seconds", "s",
       "a new Ray actor process per trial: Python and TensorFlow imported from the parallel file system, CUDA and cuDNN "
       "initialised; an estimate",
       [](const SeedStudyInputs& s) { return s.startupSeconds; }, [](SeedStudyInputs& s, double v) { s.startupSeconds = v; }},
      {"seed.node_read_bytes_per_second", "B/s",
       "one GPFS client per node shared by its 4 trials; a single client's streaming read is of the order of 1-3 GB/s",
       [](const SeedStudyInputs& s) { return s.nodeReadBytesPerSecond; },
       [](SeedStudyInputs& s, double v) { s.nodeReadBytesPerSecond = v; }}};
  return assumptions;
}

std::vector<ModelInput> SeedStudyInputs::inputs() const {
  std::vector<ModelInput> list{
      {"seed.gpus", static_cast<double>(gpus()), "", std::string(kPaper) + ": 8 nodes x 4 V100, one trial per GPU", false, true},
      {"seed.trials", 32, "", "SearchSpace preset seed-study-32 (lr x norm x beta2 x amsgrad), the paper's grid", false, true},
      {"seed.cases", static_cast<double>(cases), "", "MSD Task01 BrainTumour labelled cases", false, true},
      {"seed.bytes_per_case", bytesPerCase, "B", "4 modalities + label, 240x240x155 float32 (README: about 175 MB)", false, true},
      {"seed.batch_per_gpu", static_cast<double>(batchPerGpu), "", std::string(kPaper) + ": batch 2 per GPU", false, true}};
  for (const SeedAssumption& a : seedStudyAssumptions())
    list.push_back({a.name, a.get(*this), a.unit, "assumed (stated estimate, not from the paper): " + a.reason, false});
  list.push_back({"seed.reads_per_trial", rereadEveryEpoch ? static_cast<double>(epochs) : 1.0, "",
                  "README: the seed re-read the float32 cases from the shared file system every epoch", false, true});
  list.push_back({"seed.measured_speedup_low", measuredSpeedupLow, "", std::string(kPaper) + ": x12 to x14 on 32 GPUs", false, true});
  list.push_back({"seed.measured_speedup_high", measuredSpeedupHigh, "", std::string(kPaper) + ": x12 to x14 on 32 GPUs", false, true});
  return list;
}

std::vector<ModelInput> MedsegOverheads::inputs() const {
  std::vector<ModelInput> list{
      {"medseg.startup_seconds", startupSeconds, "s", startupSource, true},
      {"medseg.cache_bytes_per_source_byte", cacheBytesPerSourceByte, "",
       "measured: float16 cache 0.13 MB vs 0.52 MB float32 per synthetic 32^3 case (README); cropping not credited", true},
      {"medseg.reads_per_trial", readOncePerTrial ? 1.0 : 0.0, "",
       "design: a trial loads the cache once when it starts (data_load_seconds in the journal)", false}};
  if (dataLoadShare > 0)
    list.push_back({"medseg.trial_overhead_share", dataLoadShare, "", dataLoadShareSource, true});
  return list;
}

ExperimentParallelModel seedOverheadModel(const SeedStudyInputs& seed) {
  ExperimentParallelModel model;
  model.trialSeconds = seed.trialWorkSeconds();
  model.startupSeconds = seed.startupSeconds;
  model.sharedRead.bytes = dataSetBytes(seed);
  model.sharedRead.readsPerTrial = seed.rereadEveryEpoch ? seed.epochs : 1.0;
  model.sharedRead.nodeBytesPerSecond = seed.nodeReadBytesPerSecond;
  model.sharedRead.trialsPerNode = seed.gpusPerNode;
  return model;
}

ExperimentParallelModel medsegOverheadModel(const SeedStudyInputs& seed, const MedsegOverheads& medseg) {
  ExperimentParallelModel model = seedOverheadModel(seed);  // the same trials on the same GPUs and file system
  model.startupSeconds = medseg.startupSeconds;
  model.sharedRead.bytes = dataSetBytes(seed) * medseg.cacheBytesPerSourceByte;
  model.sharedRead.readsPerTrial = medseg.readOncePerTrial ? 1.0 : seed.epochs;
  return model;
}

const ExperimentParallelPrediction& ReferenceCurve::at(int workers) const {
  for (const auto& point : points)
    if (point.workers == workers) return point;
  throw InputError("reference curve " + name + " has no prediction for " + std::to_string(workers) + " workers");
}

nlohmann::json ReferenceCurve::toJson() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : points)
    list.push_back({{"workers", p.workers}, {"predicted_speedup", p.speedup}, {"predicted_efficiency", p.efficiency},
                    {"makespan_seconds", p.makespanSeconds}, {"serial_seconds", p.serialSeconds}});
  return {{"name", name}, {"label", label}, {"kind", "predicted"}, {"points", list}, {"inputs", cluster::toJson(inputs)}};
}

std::vector<int> seedStudyWorkerCounts(const SeedStudyInputs& seed) {
  std::vector<int> workers;
  for (int w = 1; w < seed.gpus(); w *= 2) workers.push_back(w);
  workers.push_back(seed.gpus());
  return workers;
}

std::vector<ReferenceCurve> seedStudyReferences(const SeedStudyInputs& seed, const MedsegOverheads& medseg) {
  const auto workers = seedStudyWorkerCounts(seed);
  std::vector<ModelInput> medsegInputs = seed.inputs();
  for (auto& input : medseg.inputs()) medsegInputs.push_back(input);
  return {curve("seed_overheads", "seed grid, seed overheads (predicted)", seedOverheadModel(seed), workers, seed.inputs()),
          curve("medseg_overheads", "seed grid, MedSeg overheads (predicted)", medsegOverheadModel(seed, medseg), workers,
                std::move(medsegInputs))};
}

}  // namespace medseg::cluster
