#include "support/ModelFileChecks.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "plugins/unet3d/nn/ModelCheckpoint.h"
#include "plugins/unet3d/train/TrainingCheckpoint.h"
#include "plugins/unet3d/train/TrainingEngine.h"

namespace medseg::test {
namespace {

// Parameters, then buffers, by name.
std::vector<std::pair<std::string, torch::Tensor>> namedTensorsOf(const std::filesystem::path& file) {
  UNet3d model = loadModelForInference(file);
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (const auto& item : model->named_parameters()) tensors.emplace_back(item.key(), item.value().detach().clone());
  for (const auto& item : model->named_buffers()) tensors.emplace_back(item.key(), item.value().clone());
  return tensors;
}

std::vector<torch::optim::AdamParamState> adamStateOf(const std::filesystem::path& checkpoint) {
  TrainingEngine engine(TrainConfig::fromJson(readTrainingState(checkpoint).config), torch::kCPU);
  loadTrainingCheckpoint(checkpoint, engine.model(), engine.optimizer());
  std::vector<torch::optim::AdamParamState> states;
  for (const auto& p : engine.model()->parameters())
    states.push_back(static_cast<torch::optim::AdamParamState&>(
        *engine.optimizer().state().at(c10::guts::to_string(p.unsafeGetTensorImpl()))));
  return states;
}

void compareParameters(const std::filesystem::path& a, const std::filesystem::path& b, double* maxDifference) {
  const auto first = loadModelForInference(a, nullptr, torch::kDouble)->parameters();
  const auto second = loadModelForInference(b, nullptr, torch::kDouble)->parameters();
  ASSERT_EQ(first.size(), second.size()) << a << " and " << b << " hold different networks";
  ASSERT_FALSE(first.empty());
  for (size_t i = 0; i < first.size(); ++i) {
    ASSERT_EQ(first[i].sizes(), second[i].sizes()) << "parameter " << i << " of " << a << " and " << b;
    ASSERT_EQ(first[i].scalar_type(), torch::kDouble);  // read as asked, whatever the file stores
    *maxDifference = std::max(*maxDifference, (first[i] - second[i]).abs().max().item<double>());
  }
}

}  // namespace

void expectIdenticalWeights(const std::filesystem::path& expected, const std::filesystem::path& actual) {
  const auto a = namedTensorsOf(expected), b = namedTensorsOf(actual);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_TRUE(torch::equal(a[i].second, b[i].second)) << a[i].first << " differs between " << expected << " and " << actual;
  }
}

void expectIdenticalAdamState(const std::filesystem::path& expected, const std::filesystem::path& actual) {
  const auto a = adamStateOf(expected), b = adamStateOf(actual);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i] == b[i]) << "Adam state of parameter " << i << " differs";
}

void loadForInference(const std::filesystem::path& model) { (void)loadModelForInference(model); }

double maxParameterDifference(const std::filesystem::path& a, const std::filesystem::path& b) {
  double maxDifference = 0.0;
  compareParameters(a, b, &maxDifference);
  return maxDifference;
}

void writeUntrainedModel(const std::filesystem::path& file, const ModelDescription& description) {
  UNet3d model(description.network);
  saveModel(file, model, description);
}

}  // namespace medseg::test
