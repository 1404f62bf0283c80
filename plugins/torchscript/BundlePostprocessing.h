#pragma once
// A bundle's post-processing on its network's output, in the bundle's own order (MonaiBundle::
// postprocessing), each step as MONAI 1.4 defines it (monai/transforms/post/array.py,
// post/dictionary.py Invertd):
//   Activationsd   softmax over the channels, or sigmoid
//   AsDiscreted    argmax (one channel of class indices), to_onehot, threshold (value >= threshold),
//                  rounding "torchrounding" (half to even), in that order
//   Invertd        the preprocessing's spatial transforms undone (BundlePreprocessing::undo), resampling
//                  nearest when nearest_interp (MONAI's default), else with each Spacingd's own mode
//   KeepLargestConnectedComponentd   ConnectedComponents.h
//   CastToTyped    the values cast to the dtype (utility/array.py CastToType) and back to float32
//   Lambdad        a published lambda's C++ step (BundleLambdas.h)
//   SqueezeDimd    the channel axis of a one-channel output: nothing changes in the labels
// So an argmax before Invertd inverts labels, a softmax the bundle never asks for is never applied, and
// a bundle without Invertd (only Orientationd / CropForegroundd, which need no interpolation) has its
// final output put back on the source grid voxel for voxel.
#include <torch/torch.h>

#include "plugins/torchscript/BundleTransforms.h"
#include "plugins/torchscript/MonaiBundle.h"

namespace medseg::torchscript {

struct PostprocessedOutput {
  torch::Tensor output;  // [K, X, Y, Z] on the source grid, as the post-processing leaves it
  torch::Tensor scores;  // the output before its first discretisation, on the source grid (when asked for)
};

// outputs [K, ...] on the preprocessed grid. InputError when to_onehot meets a label outside its classes.
PostprocessedOutput postprocess(const MonaiBundle& bundle, const torch::Tensor& outputs,
                                const BundlePreprocessing& preprocessing, bool keepScores);

// The label map [X, Y, Z] (uint8) MedSeg reads from the post-processed output (MonaiBundle's OutputForm).
torch::Tensor labelsFrom(const MonaiBundle& bundle, const torch::Tensor& output);

}  // namespace medseg::torchscript
