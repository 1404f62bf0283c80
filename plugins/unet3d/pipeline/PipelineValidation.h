#pragma once
// Inference and Dice through a pipeline, shared by pipeline training (validation) and the inference
// task: sliding-window or whole-volume logits with the pipeline as the window forward function, and
// the per-output and whole-tumour Dice exactly as plugins/unet3d/train/Validation computes them.
#include <map>
#include <string>

#include <torch/torch.h>

#include "plugins/unet3d/pipeline/PipelineEngine.h"
#include "core/nn/SlidingWindow.h"
#include "plugins/unet3d/train/TrainConfig.h"

namespace medseg::unet3d {

// image [C,D,H,W] -> logits [K,D,H,W] (CPU), on the process of stage 0 (the others serve).
torch::Tensor pipelineLogits(PipelineEngine& engine, const torch::Tensor& image, const SlidingWindowOptions& window);
// The window that covers the whole image in one pass (padded to the network's size divisor).
SlidingWindowOptions wholeVolumeWindow(const torch::Tensor& image, int64_t sizeDivisor);
// Dice of each output (labels mode: foreground classes) and "WT" of logits against labels [D,H,W].
std::map<std::string, double> caseDice(const torch::Tensor& logits, const torch::Tensor& labels, const TrainConfig& config);

}  // namespace medseg::unet3d
