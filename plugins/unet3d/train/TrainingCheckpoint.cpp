#include "plugins/unet3d/train/TrainingCheckpoint.h"

#include <ATen/CPUGeneratorImpl.h>

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

constexpr const char* kStateKey = "train/state";
constexpr const char* kOptimizerKey = "train/optimizer";
constexpr const char* kRngKey = "train/torch_rng";

torch::serialize::InputArchive openTrainingArchive(const std::filesystem::path& file) {
  std::string kind;
  auto archive = openCheckpointArchive(file, &kind);
  if (kind != "training")
    throw InputError(file.string() + " is a MedSeg " + kind +
                     " file without training state; resume from the run folder's checkpoint.pt");
  return archive;
}

TrainingState readState(torch::serialize::InputArchive& archive, const std::filesystem::path& file) {
  c10::IValue value;
  if (!archive.try_read(kStateKey, value) || !value.isString())
    throw InputError(file.string() + ": training checkpoint has no training state");
  try {
    return parseTrainingState(value.toStringRef());
  } catch (const InputError& error) {
    throw InputError(file.string() + ": " + error.what());
  }
}

}  // namespace

void saveTrainingCheckpoint(const std::filesystem::path& file, UNet3d& model, torch::optim::Optimizer& optimizer,
                            const ModelDescription& description, const TrainingState& state) {
  torch::serialize::OutputArchive archive;
  writeModelEntries(archive, model, description, "training");
  writeOptimizerEntry(archive, kOptimizerKey, optimizer);
  archive.write(kStateKey, c10::IValue(state.toJson().dump()));
  writeGeneratorEntry(archive, kRngKey);
  writeArchiveAtomically(file, archive);
}

TrainingState readTrainingState(const std::filesystem::path& file) {
  auto archive = openTrainingArchive(file);
  return readState(archive, file);
}

TrainingState loadTrainingCheckpoint(const std::filesystem::path& file, UNet3d& model, torch::optim::Optimizer& optimizer) {
  auto archive = openTrainingArchive(file);
  const auto state = readState(archive, file);
  readModelWeights(archive, model, file);
  readOptimizerEntry(archive, kOptimizerKey, optimizer, file);
  restoreGeneratorEntry(archive, kRngKey);
  return state;
}

void writeOptimizerEntry(torch::serialize::OutputArchive& archive, const std::string& key, torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive state;
  optimizer.save(state);
  archive.write(key, state);
}

void readOptimizerEntry(torch::serialize::InputArchive& archive, const std::string& key, torch::optim::Optimizer& optimizer,
                        const std::filesystem::path& file) {
  torch::serialize::InputArchive state;
  if (!archive.try_read(key, state)) throw InputError(file.string() + ": checkpoint has no optimizer state (" + key + ")");
  try {
    optimizer.load(state);
  } catch (const c10::Error& error) {
    throw InputError(file.string() + ": optimizer state does not match the configured optimizer: " +
                     error.msg().substr(0, 200));
  }
}

void writeGeneratorEntry(torch::serialize::OutputArchive& archive, const std::string& key) {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  archive.write(key, generator.get_state(), /*is_buffer=*/true);
}

void restoreGeneratorEntry(torch::serialize::InputArchive& archive, const std::string& key) {
  torch::Tensor state;
  if (!archive.try_read(key, state, /*is_buffer=*/true)) return;
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state.to(torch::kCPU));
}

}  // namespace medseg
