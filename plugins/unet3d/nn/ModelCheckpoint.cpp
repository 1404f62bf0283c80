// MedSeg checkpoint file format (version 1)
// ------------------------------------------
// One file written with torch::serialize::OutputArchive (a PyTorch zip archive, readable by
// torch::serialize::InputArchive and by Python's torch.jit.load). Top-level entries:
//   "medseg/format"          string  "medseg-checkpoint"            (identifies the file)
//   "medseg/format_version"  int     1                              (bumped on incompatible change)
//   "medseg/kind"            string  "model" (best.pt, exports) or "training" (checkpoint.pt)
//   "medseg/description"     string  ModelDescription as JSON: network, preprocessing, targets,
//                                    class names, region labels, patch size, modalities
//                                    (and series_patterns when set)
//   "model"                  archive the UNet3d parameters and buffers (torch::nn::Module::save)
// Training checkpoints add (plugins/unet3d/train/TrainingCheckpoint.cpp):
//   "train/optimizer"        archive optimizer state (torch::optim::Optimizer::save)
//   "train/state"            string  JSON: step, epoch, epoch loss sums, best Dice, sampler seed,
//                                    elapsed seconds, the full resolved training config
//   "train/torch_rng"        tensor  CPU default generator state
// Readers check format and version first, so any other file fails with one clear InputError.
#include "plugins/unet3d/nn/ModelCheckpoint.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "core/util/JsonNumbers.h"

namespace medseg {
namespace {

constexpr const char* kFormatKey = "medseg/format";
constexpr const char* kFormatName = "medseg-checkpoint";
constexpr const char* kVersionKey = "medseg/format_version";
constexpr int64_t kFormatVersion = 1;
constexpr const char* kKindKey = "medseg/kind";
constexpr const char* kDescriptionKey = "medseg/description";

std::string notACheckpoint(const std::filesystem::path& file, const std::string& why) {
  return file.string() + " is not a MedSeg checkpoint (" + why +
         "); pass a checkpoint.pt or best.pt written by `medseg train`";
}

// A PyTorch archive is a zip file; checking the magic first gives a clear message for text files,
// NIfTI images and the like before LibTorch's own (cryptic) errors.
void checkZipMagic(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError("cannot open checkpoint " + file.string() + ": no such file or not readable");
  char magic[4] = {0, 0, 0, 0};
  in.read(magic, 4);
  if (in.gcount() != 4 || magic[0] != 'P' || magic[1] != 'K' || magic[2] != 3 || magic[3] != 4)
    throw InputError(notACheckpoint(file, "not a PyTorch archive"));
}

std::string readString(torch::serialize::InputArchive& archive, const char* key, const std::filesystem::path& file) {
  c10::IValue value;
  if (!archive.try_read(key, value) || !value.isString())
    throw InputError(notACheckpoint(file, std::string("entry \"") + key + "\" is missing"));
  return value.toStringRef();
}

}  // namespace

void writeModelEntries(torch::serialize::OutputArchive& archive, UNet3d& model, const ModelDescription& description,
                       const std::string& kind) {
  archive.write(kFormatKey, c10::IValue(std::string(kFormatName)));
  archive.write(kVersionKey, c10::IValue(kFormatVersion));
  archive.write(kKindKey, c10::IValue(kind));
  archive.write(kDescriptionKey, c10::IValue(description.toJson().dump()));
  torch::serialize::OutputArchive weights;
  model->save(weights);
  archive.write("model", weights);
}

torch::serialize::InputArchive openCheckpointArchive(const std::filesystem::path& file, std::string* kind) {
  checkZipMagic(file);
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(file.string(), torch::kCPU);
  } catch (const c10::Error& error) {
    throw InputError(notACheckpoint(file, "unreadable or damaged archive: " + error.msg().substr(0, 200)));
  }
  if (readString(archive, kFormatKey, file) != kFormatName) throw InputError(notACheckpoint(file, "wrong format tag"));
  c10::IValue version;
  if (!archive.try_read(kVersionKey, version) || !version.isInt())
    throw InputError(notACheckpoint(file, "format version missing"));
  if (version.toInt() > kFormatVersion)
    throw InputError(file.string() + " is a MedSeg checkpoint of format version " + std::to_string(version.toInt()) +
                     "; this medseg reads version " + std::to_string(kFormatVersion) + ": upgrade medseg");
  if (kind) *kind = readString(archive, kKindKey, file);
  return archive;
}

ModelDescription readModelDescription(const std::filesystem::path& checkpoint) {
  auto archive = openCheckpointArchive(checkpoint);
  const std::string text = readString(archive, kDescriptionKey, checkpoint);
  try {
    return parseModelDescription(text);
  } catch (const InputError& error) {
    throw InputError(checkpoint.string() + ": " + error.what());
  }
}

namespace {

// Module::load swaps each tensor's storage for the stored one and, when the dtypes differ, reads
// float64 bytes as float32. Copying each stored tensor into the model's own converts instead.
void copyStoredTensors(torch::nn::Module& module, torch::serialize::InputArchive& archive, const std::string& prefix) {
  auto copyInto = [&](const std::string& key, torch::Tensor& own, bool isBuffer) {
    torch::Tensor stored;
    archive.read(key, stored, isBuffer);
    if (stored.sizes() != own.sizes())
      throw InputError("the stored " + prefix + key + " has another shape than this network's");
    own.copy_(stored);
  };
  torch::NoGradGuard noGrad;
  for (auto& item : module.named_parameters(/*recurse=*/false)) copyInto(item.key(), item.value(), false);
  for (auto& item : module.named_buffers(/*recurse=*/false)) copyInto(item.key(), item.value(), true);
  for (const auto& child : module.named_children()) {
    torch::serialize::InputArchive childArchive;
    archive.read(child.key(), childArchive);
    copyStoredTensors(*child.value(), childArchive, prefix + child.key() + ".");
  }
}

}  // namespace

void readModelWeights(torch::serialize::InputArchive& archive, UNet3d& model, const std::filesystem::path& file) {
  torch::serialize::InputArchive weights;
  if (!archive.try_read("model", weights)) throw InputError(notACheckpoint(file, "no model weights"));
  try {
    copyStoredTensors(*model, weights, "");
  } catch (const InputError& error) {
    throw InputError(file.string() + ": weights do not match the network described in the file: " + error.what());
  } catch (const c10::Error& error) {
    throw InputError(file.string() + ": weights do not match the network described in the file: " +
                     error.msg().substr(0, 300));
  }
}

UNet3d loadModelForInference(const std::filesystem::path& checkpoint, ModelDescription* description, torch::ScalarType dtype) {
  auto archive = openCheckpointArchive(checkpoint);
  ModelDescription d;
  try {
    d = parseModelDescription(readString(archive, kDescriptionKey, checkpoint));
  } catch (const InputError& error) {
    throw InputError(checkpoint.string() + ": " + error.what());
  }
  UNet3d model(d.network);
  model->to(dtype);
  readModelWeights(archive, model, checkpoint);
  model->eval();
  if (description) *description = d;
  return model;
}

void saveModel(const std::filesystem::path& file, UNet3d& model, const ModelDescription& description) {
  torch::serialize::OutputArchive archive;
  writeModelEntries(archive, model, description, "model");
  writeArchiveAtomically(file, archive);
}

void writeArchiveAtomically(const std::filesystem::path& file, torch::serialize::OutputArchive& archive) {
  std::ostringstream bytes;
  archive.save_to(bytes);
  writeFileAtomically(file, bytes.str());
}

}  // namespace medseg
