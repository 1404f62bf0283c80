#pragma once
// MedSeg's plugin interfaces (Qt Creator extensionsystem style: small, versioned, JSON metadata).
// A plugin is a Qt plugin (QPluginLoader) whose root object implements one or more of these; the
// interface id carries the major version, so an incompatible plugin is reported, never loaded.
// The CLI and the studio load the same plugins through PluginManager.
#include <QtPlugin>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset/Dataset.h"
#include "core/util/Progress.h"

namespace medseg {

// Where data sets come from: folders in a known layout, generators, remote archives.
class DatasetSourceInterface {
 public:
  virtual ~DatasetSourceInterface() = default;
  virtual std::string sourceId() const = 0;  // "msd", "synthetic", ...
  virtual bool canOpen(const std::filesystem::path& location) const = 0;
  virtual Dataset open(const std::filesystem::path& location) const = 0;
  // Sources that create data (generators) return true and implement create(); others throw.
  virtual bool canCreate() const { return false; }
  virtual Dataset create(const std::filesystem::path& location, const nlohmann::json& options, Reporter& reporter) const;
};

struct TrainRequest {
  std::filesystem::path config;        // JSON or YAML; may be empty (defaults from the data set)
  std::filesystem::path dataset;
  std::filesystem::path runDirectory;
  bool resume = false;
  std::vector<std::string> overrides;  // "key=value"
};

struct TrainOutcome {
  std::filesystem::path bestCheckpoint;
  std::filesystem::path lastCheckpoint;
  nlohmann::json summary;              // best Dice, epochs, seconds, ...
};

class TrainerInterface {
 public:
  virtual ~TrainerInterface() = default;
  virtual std::string trainerId() const = 0;  // "unet3d"
  virtual TrainOutcome train(const TrainRequest& request, Reporter& reporter) = 0;
};

struct InferRequest {
  std::filesystem::path model;
  std::filesystem::path input;
  std::filesystem::path output;
  nlohmann::json options = nlohmann::json::object();  // roi, overlap, whole_volume, tta, ...
};

class InferenceInterface {
 public:
  virtual ~InferenceInterface() = default;
  virtual std::string inferenceId() const = 0;  // "unet3d", "torchscript"
  virtual bool canLoad(const std::filesystem::path& model) const = 0;
  // Segments every image in the request; returns the per-case summary.
  virtual nlohmann::json infer(const InferRequest& request, Reporter& reporter) = 0;
};

}  // namespace medseg

#define MEDSEG_DATASET_SOURCE_IID "org.medseg.DatasetSource/1"
#define MEDSEG_TRAINER_IID "org.medseg.Trainer/1"
#define MEDSEG_INFERENCE_IID "org.medseg.Inference/1"
Q_DECLARE_INTERFACE(medseg::DatasetSourceInterface, MEDSEG_DATASET_SOURCE_IID)
Q_DECLARE_INTERFACE(medseg::TrainerInterface, MEDSEG_TRAINER_IID)
Q_DECLARE_INTERFACE(medseg::InferenceInterface, MEDSEG_INFERENCE_IID)
