#pragma once
// Training and inference of the U-Net as a pipeline of stages — the model-parallel counterpart of
// plugins/unet3d/train/TrainingEngine. This process runs some of the stages (MPI: one per rank; one process
// with several devices: all of them) and exchanges bundles with the others through a PipelineChannel.
//
// step(batch): the batch is cut into plan.microBatches equal micro-batches; every local stage runs
// its schedule (PipelineSchedule.h); the last stage computes the loss of each micro-batch (core/train
// Loss) divided by M, so gradients accumulate over micro-batches to those of the whole batch — equal
// to a single-process step when the loss is per sample (loss.batch_dice false, instance/group norm).
// Gradient-norm clipping uses the norm over all stages (one allreduce), then each stage's optimiser
// updates its own parameters with the scheduled learning rate. Every process builds the whole
// network from config.seed (identical weights to a single-process UNet3d); only its stages' layers
// move to their devices and train.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "plugins/unet3d/pipeline/PipelineChannel.h"
#include "plugins/unet3d/pipeline/PipelinePlan.h"
#include "plugins/unet3d/pipeline/PipelineStage.h"
#include "plugins/unet3d/train/DataLoader.h"
#include "plugins/unet3d/train/Loss.h"
#include "plugins/unet3d/train/TrainingEngine.h"

namespace medseg::unet3d {

class PipelineEngine {
 public:
  // localStages: the stage indices this process runs, devices[i] the device of localStages[i].
  PipelineEngine(const TrainConfig& config, const PipelinePlan& plan, std::vector<int> localStages,
                 std::vector<torch::Device> devices, std::unique_ptr<PipelineChannel> channel);

  // One training step (every process of the pipeline calls it with the same batch; stage 0 uses the
  // images, the last stage the targets). The loss and gradient norm are known on every process.
  StepStats step(const Batch& batch);

  // Inference logits [N,K,D,H,W] of images [N,C,D,H,W], sent through the stages one sample at a
  // time (so stages overlap on consecutive samples). Called on the process of stage 0, which gets the
  // logits; with stages on other processes, those run serveInference() until finishInference().
  torch::Tensor infer(const torch::Tensor& images);
  void serveInference();
  void finishInference();
  bool runsFirstStage() const;

  // Parameters (and gradients of the last step, as "grad:<name>") of every stage, by UNet3d name,
  // collected on the process of stage 0 (others get an empty map). Every process must call it.
  std::map<std::string, torch::Tensor> gatherToFirst(bool withGradients);
  // Copies a trained network's weights (same configuration) into every local stage.
  void loadWeights(UNet3d source);
  // The whole network with every stage's current weights, on stage 0's process (CPU); others: nullptr.
  UNet3d gatherNetwork();

  const PipelinePlan& plan() const { return plan_; }
  const std::vector<BlockSpec>& blocks() const { return blocks_; }
  std::vector<PipelineStage>& stages() { return stages_; }
  // The optimiser of stages()[localIndex] (its state goes into that stage's resumable checkpoint).
  torch::optim::Optimizer& optimizer(size_t localIndex) { return *optimizers_.at(localIndex); }
  PipelineChannel& channel() { return *channel_; }
  const TrainConfig& config() const { return config_; }
  UNet3d network() const { return network_; }
  int64_t stepIndex() const { return step_; }
  void setStepIndex(int64_t step) { step_ = step; }

 private:
  PipelineStage* localStage(int index);

  TrainConfig config_;
  PipelinePlan plan_;
  std::vector<BlockSpec> blocks_;
  UNet3d network_{nullptr};
  std::vector<PipelineStage> stages_;
  std::vector<std::unique_ptr<torch::optim::Optimizer>> optimizers_;
  std::unique_ptr<PipelineChannel> channel_;
  SegmentationLoss loss_;
  int64_t step_ = 0;
};

// Every stage in this process, stage s on devices[s] (CPU devices work too: same code, tests).
std::unique_ptr<PipelineEngine> makeLocalPipeline(const TrainConfig& config, const PipelinePlan& plan,
                                                  const std::vector<torch::Device>& devices);

}  // namespace medseg::unet3d
