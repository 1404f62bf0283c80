#pragma once
// A MONAI bundle as MONAI lays it out, read without running any of its Python:
//   <bundle>/configs/metadata.json   "network_data_format": inputs (num_channels, channel_def,
//                                    spatial_shape) and outputs (num_channels, channel_def: label names)
//   <bundle>/configs/inference.json  (or .yaml) "preprocessing", "inferer", "postprocessing"
//   <bundle>/models/model.ts         the network alone, as TorchScript
// or a lone TorchScript file whose "metadata.json" extra file holds the metadata (MONAI's
// `ckpt_export` writes it there), run without transforms.
//
// Transforms are MONAI's dictionary transforms, named by "_target_" ("Orientationd" or
// "monai.transforms.Orientationd"); only the allow-listed ones run, in C++ (BundleTransforms.h). Any
// other "_target_" is refused by name, so a bundle never runs half its pipeline. "@key" values refer to
// the config's top-level keys; "$" expressions are taken only when they are plain literals ("$[96,96,96]").
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace medseg::torchscript {

struct BundleTransform {
  std::string name;       // without "monai.transforms."
  nlohmann::json args;    // its other keys, references resolved
  bool appliesTo(const std::string& key) const;  // "keys" names it (or there are no keys)
};

struct BundleInferer {
  bool slidingWindow = true;        // SlidingWindowInferer; false: SimpleInferer (the whole input at once)
  std::vector<int64_t> roi;         // in the network's axis order; -1: the whole axis
  int64_t windowBatch = 1;
  double overlap = 0.25;            // MONAI's default
  bool gaussian = false;            // mode "gaussian" (MONAI's default "constant")
};

struct MonaiBundle {
  std::filesystem::path folder;     // empty for a lone TorchScript file
  std::filesystem::path modelFile;
  std::string name, version;
  std::string inputKey = "image", outputKey = "pred";
  int64_t inputChannels = 0;              // 0: not stated
  std::vector<std::string> inputNames;    // channel_def of the input, by index
  int64_t outputChannels = 0;
  std::vector<std::string> outputNames;   // channel_def of the output, by index
  std::vector<BundleTransform> preprocessing, postprocessing;
  BundleInferer inferer;

  // How outputs become labels: argmax (label = channel index, channel 0 background) or a threshold
  // per channel (channel i -> label i + 1), after softmax or sigmoid when the bundle asks for them.
  bool softmax = false, sigmoid = false;
  bool argmax = true;
  double threshold = 0.5;
};

// A folder with configs/metadata.json and models/model.ts.
bool isBundleFolder(const std::filesystem::path& path);
// A TorchScript archive carrying an "extra/metadata.json" with "network_data_format".
bool hasEmbeddedMetadata(const std::filesystem::path& file);
// InputError naming the file and the key: no metadata, no network_data_format, an unknown
// transform, a "$" expression that is not a literal, a value of the wrong type.
MonaiBundle readBundle(const std::filesystem::path& path);

}  // namespace medseg::torchscript
