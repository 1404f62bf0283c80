#pragma once
// A MONAI bundle as MONAI lays it out, read without running any of its Python:
//   <bundle>/configs/metadata.json   "network_data_format": inputs (num_channels, channel_def,
//                                    spatial_shape) and outputs (num_channels, channel_def or label_def:
//                                    the names of the channels or of the label values)
//   <bundle>/configs/inference.json  (or .yaml / .yml) "preprocessing", "inferer", "postprocessing";
//                                    or several config files merged as `monai.bundle run` merges its
//                                    --config_file list (the plugin parameter bundle_config)
//   <bundle>/models/model.ts         the network alone, as TorchScript
// or a lone TorchScript file as MONAI's `ckpt_export` writes it: "metadata.json" and the config
// ("inference.json") as extra files. A lone file without an inference.json is refused: its pre- and
// post-processing are unknown, and running the network without them gives a wrong mask.
//
// Components are MONAI's, named by "_target_" ("Orientationd" or "monai.transforms.Orientationd");
// only the allow-listed ones run, and each of their arguments is either done as MONAI 1.4 does it or
// refused by name (TransformArguments.h), all checked here, before the model is loaded. The bundle's own
// Python classes ("scripts.transforms.MyTransform") are refused with their name; a Lambdad runs only
// where its lambda is one the zoo published (BundleLambdas.h). Config syntax: BundleConfigFiles.h
// (files, merges, macros), ConfigReferences.h (references), ConfigExpression.h ("$" expressions).
#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugins/torchscript/BundleLambdas.h"
#include "plugins/torchscript/ConnectedComponents.h"
#include "plugins/torchscript/TransformArguments.h"

namespace medseg::torchscript {

struct BundleInferer {
  enum Kind { Sliding, Simple, Slice } kind = Sliding;  // SlidingWindowInferer, SimpleInferer, SliceInferer
  std::vector<int64_t> roi;               // roi_size in the network's axis order; <= 0: the whole axis
  int64_t windowBatch = 1;
  double overlap = 0.25;                  // MONAI's default
  bool gaussian = false;                  // mode "gaussian" (MONAI's default "constant")
  std::array<double, 3> sigmaScale{0.125, 0.125, 0.125};
  std::string padding = "constant";       // padding_mode of inputs smaller than the window
  double padValue = 0.0;                  // cval
  int64_t sliceAxis = 0;                  // SliceInferer's spatial_dim: the axis its 2-D network slides along
};

// One step of the bundle's post-processing on the network's output, in the bundle's order.
struct PostStep {
  enum Kind { Softmax, Sigmoid, Argmax, OneHot, Threshold, Round, Invert, KeepLargest, Cast, Relabel, Squeeze } kind;
  double threshold = 0.5;   // Threshold: value >= threshold -> 1
  int64_t classes = 0;      // OneHot
  bool nearest = true;      // Invert: Invertd's nearest_interp
  KeepLargestComponent keep{};   // KeepLargest: KeepLargestConnectedComponentd
  std::string dtype;             // Cast: CastToTyped's dtype ("float32", "uint8", ...)
  ChannelsToLabels relabel{};    // Relabel: a published Lambdad
};

// A label value a mask can hold (not 0) and its name, from the metadata.
struct BundleLabel {
  int value = 0;
  std::string name;
};

// What the post-processed output holds, and so how MedSeg reads labels from it:
//   Scores    logits or probabilities (the bundle never discretises): MedSeg takes the argmax, or with a
//             sigmoid each channel >= 0.5 as a region
//   Labels    one channel of class indices (AsDiscreted argmax): the label is the value
//   OneHot    one channel per class (argmax then to_onehot): the label is the channel set
//   Regions   one binary channel per region (threshold): channel i is label i + 1, painted from the
//             largest region to the smallest so nested regions keep their own label
// (a published Lambdad and SqueezeDimd leave Labels: one channel whose values are the labels)
enum class OutputForm { Scores, Labels, OneHot, Regions };

struct MonaiBundle {
  std::filesystem::path folder;     // empty for a lone TorchScript file
  std::filesystem::path modelFile;
  std::vector<std::string> configs; // the config files read, in merge order
  std::string name, version;
  std::string inputKey = "image", outputKey = "pred";
  int64_t inputChannels = 0;              // 0: not stated
  std::vector<std::string> inputNames;    // channel_def of the input, by index
  int64_t outputChannels = 0;
  std::vector<std::string> outputNames;   // channel_def (else label_def) of the output, by index
  std::vector<std::string> labelNames;    // label_def (else channel_def) of the output, by label value
  std::vector<BundleTransform> preprocessing;  // those applying to inputKey
  BundleInferer inferer;
  std::vector<PostStep> postprocessing;        // those applying to outputKey
  bool inverted = false;   // the post-processing has Invertd; else spatial steps are undone on the final output
  OutputForm form = OutputForm::Scores;
  bool sigmoid = false;    // the last activation was a sigmoid (Scores read as regions)
  std::vector<BundleLabel> labels;  // the labels the mask holds, named (PostprocessingSteps.h)

  bool regions() const { return form == OutputForm::Regions || (form == OutputForm::Scores && sigmoid); }
};

// A folder with configs/metadata.json and models/model.ts.
bool isBundleFolder(const std::filesystem::path& path);
// A TorchScript archive carrying an "extra/metadata.json" with "network_data_format".
bool hasEmbeddedMetadata(const std::filesystem::path& file);
// InputError naming the file, the place, the component, the argument and its value: no metadata, no
// network_data_format, an unknown component or argument, a value of the wrong type, a "$" expression
// where a value is needed, a value MedSeg does not run. `configs`: the config files to merge, in order,
// relative to the bundle folder (empty: configs/inference.json, .yaml or .yml); a lone model.ts takes none.
MonaiBundle readBundle(const std::filesystem::path& path, const std::vector<std::string>& configs = {});

}  // namespace medseg::torchscript
