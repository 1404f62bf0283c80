#pragma once
// A Lambdad's func is Python, which MedSeg cannot run. The model zoo's published lambdas are recognised
// by their text, normalised (the leading "$" and all white space dropped, the parameter renamed x), and
// run as the equivalent C++ step; any other lambda is refused quoting it (MonaiBundle.h).
//   brats_mri_segmentation (configs/inference.json, postprocessing, after AsDiscreted threshold 0.5):
//     lambda x: torch.where(x[[2]] > 0, 4, torch.where(x[[0]] > 0, 1, torch.where(x[[1]] > 0, 2, 0)))
//   its three region channels (tumour core, whole tumour, enhancing tumour) as one channel of BraTS
//   labels: 4 where channel 2 > 0, else 1 where channel 0 > 0, else 2 where channel 1 > 0, else 0.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace medseg::torchscript {

// One channel of labels from channels tested in order: the first rule whose channel is > `above` gives
// its label, none gives `otherwise` (nested torch.where calls).
struct ChannelsToLabels {
  struct Rule {
    int64_t channel = 0;
    double above = 0.0;
    int64_t label = 0;
  };
  std::vector<Rule> rules;
  int64_t otherwise = 0;
  std::string published;  // the bundle whose lambda it is
  // What the written labels are, when the lambda writes a known convention (brats_mri_segmentation:
  // BraTS 2018's 1 NCR/NET, 2 ED, 4 ET); empty: each label is named after the channel deciding it.
  std::map<int64_t, std::string> labelNames;

  // outputs [C, ...] -> [1, ...] float32 labels.
  torch::Tensor apply(const torch::Tensor& outputs) const;
};

// The lambda's text normalised: no "$", no white space, its parameter named x; "" when it is no lambda.
std::string normalisedLambda(const std::string& func);

// The step for a published lambda, nullopt for any other text.
std::optional<ChannelsToLabels> publishedLambda(const std::string& func);

}  // namespace medseg::torchscript
