// The JSON inside a checkpoint: the model description (network, preprocessing, targets, classes) and
// the training state with its resolved config, as `medseg infer` and `medseg train --resume` read them.
#include "plugins/unet3d/nn/ModelDescription.h"
#include "plugins/unet3d/train/TrainConfig.h"
#include "plugins/unet3d/train/TrainingState.h"
#include "fuzz/FuzzTargets.h"

namespace medseg::fuzz {

void checkpointMetadata(const uint8_t* data, size_t size) {
  const std::string text = asText(data, size);
  acceptedOrRefused([&] {
    const ModelDescription description = parseModelDescription(text);
    // saveModel writes toJson(); a model that was accepted once must load again.
    try {
      (void)parseModelDescription(description.toJson().dump());
    } catch (const InputError& error) {
      throw InvariantViolation(std::string("an accepted description does not read back: ") + error.what());
    }
  });
  acceptedOrRefused([&] {
    const TrainingState state = parseTrainingState(text);
    (void)TrainConfig::fromJson(state.config);  // what --resume does next
  });
}

}  // namespace medseg::fuzz
