#pragma once
// A bundle's post-processing transforms (those on its output key, in order) read into the steps MedSeg
// runs (MonaiBundle::postprocessing, run by BundlePostprocessing.h), what the output holds after them
// (MonaiBundle::form) and the labels the mask holds, named from the metadata (MonaiBundle::labels):
//   Activationsd                    softmax / sigmoid
//   AsDiscreted                     argmax, to_onehot, threshold, rounding, in MONAI's order
//   Invertd                         the preprocessing's spatial transforms undone (only "@preprocessing")
//   KeepLargestConnectedComponentd  ConnectedComponents.h
//   CastToTyped                     the values cast to dtype and back (a whole-number dtype only once
//                                   the output is discrete)
//   Lambdad                         a lambda the zoo published (BundleLambdas.h), else refused quoting it
//   SqueezeDimd                     dim 0 of a one-channel output (the labels stay), last but SaveImaged
//   SaveImaged, EnsureTyped, ToTensord   change nothing MedSeg writes
// Labels: regions (threshold, sigmoid) are channel c -> label c + 1 named by channel_def; class labels
// (argmax, softmax) are c -> c named by label_def, else channel_def; a published lambda's labels are
// named by the channel that decides them (brats_mri_segmentation: 1 Tumor core, 2 Whole tumor,
// 4 Enhancing tumor).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugins/torchscript/MonaiBundle.h"

namespace medseg::torchscript {

// The transforms MedSeg runs in post-processing.
const std::vector<std::string>& postprocessingTransforms();

// Fills b.postprocessing, b.form, b.sigmoid, b.inverted and b.labels from `transforms`, with
// b.preprocessing, b.outputChannels and the names read already. `preprocessing`: the config's
// preprocessing resolved, which Invertd's transform must be. InputError naming the transform, the
// argument and what to change for what MedSeg does not run.
void readPostprocessing(const std::vector<BundleTransform>& transforms, const nlohmann::json& preprocessing,
                        const std::string& source, MonaiBundle& b);

}  // namespace medseg::torchscript
