#pragma once
// One nnU-Net v2 trained model, loaded for a run: the configuration's networks, one per fold, and the
// case pipeline nnU-Net's predictor runs (NnunetPreprocessing, NnunetSlidingWindow, then the logits
// resampled back, made probabilities, decided and put back into the input's grid).
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/plugin/InferencePlugin.h"
#include "plugins/nnunet/NnunetModelFolder.h"
#include "plugins/nnunet/NnunetNetwork.h"
#include "plugins/nnunet/NnunetSlidingWindow.h"

namespace medseg::nnunet {

// The plugin's infer parameters (manifest.json), read from the host's resolved values.
struct NnunetRunOptions {
  std::string configuration = "3d_fullres";
  std::vector<int> folds;                      // empty: every fold with the checkpoint
  std::string checkpoint = "checkpoint_final.pth";
  bool mirror = true;
  double tileStepSize = 0.5;
  bool gaussian = true;
  bool wholeVolume = false;
  std::string precision = "fp32";
  int64_t passBatch = 0;                       // network passes a forward; 0: chosen on the first passes (PassBatchChooser)
  static NnunetRunOptions fromParameters(const nlohmann::json& parameters);
};

// The model's contract (channels, label names) from its folder alone, without the checkpoints.
plugin::ModelContract nnunetContract(const NnunetModelFolder& model);

class NnunetSegmenter : public plugin::Segmenter {
 public:
  explicit NnunetSegmenter(const plugin::InferenceSetup& setup);
  const plugin::ModelContract& contract() const override { return contract_; }
  nlohmann::json describe() const override;
  plugin::Segmentation segment(const ImageVolume& image, const plugin::Prompts& prompts, plugin::RunContext& context) override;

 private:
  SlidingWindowSettings windowSettings() const;
  NetworkForward forwardOf(const NnunetNetwork& network) const;
  // The averaged float16 logits of every fold over the preprocessed case.
  torch::Tensor ensembleLogits(const torch::Tensor& data, plugin::RunContext& context);

  NnunetModelFolder model_;
  NnunetRunOptions options_;
  NnunetConfiguration configuration_;
  std::vector<NnunetNetwork> networks_;  // one per fold
  std::vector<int> folds_;
  std::vector<int64_t> mirrorAxes_;      // the checkpoint's allowed axes when mirroring is on
  PassBatchChooser passBatches_{0, 1};   // chosen on the first case's passes, kept for the next
  torch::Device device_ = torch::kCPU;
  bool bf16_ = false;
  std::string precisionDescription_;
  plugin::ModelContract contract_;
  bool probabilities_ = false;
};

}  // namespace medseg::nnunet
