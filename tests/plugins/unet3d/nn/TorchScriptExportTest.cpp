// The TorchScript export (plugins/unet3d/nn/TorchScriptExport): the module gives the network's logits for every
// layout the U-Net has (norms, residual blocks with and without projection, depths, slopes), the
// written sidecar holds the checkpoint's description (the torchscript plugin's tests run the file), and Debian's
// Python PyTorch (torch.jit.load) gives the same logits from the file.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "plugins/unet3d/infer/Predictor.h"
#include "plugins/unet3d/nn/TorchScriptExport.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "support/TestSupport.h"
#include "support/TinyData.h"
#include "support/TinyModels.h"
#include "support/MissingComponent.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;

torch::Tensor seededInput(std::vector<int64_t> shape, uint64_t seed, torch::ScalarType dtype = torch::kFloat) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return torch::randn(shape, generator, torch::TensorOptions().dtype(dtype));
}

// Freshly built norms are the identity (unit scale, zero shift, zero mean and unit variance): random
// values make a misplaced or missing norm parameter visible in the logits.
void randomiseNorms(UNet3dImpl& network, uint64_t seed) {
  torch::NoGradGuard noGrad;
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  for (auto& item : network.named_parameters())
    if (item.key().find(".norm.") != std::string::npos)
      item.value().copy_(torch::rand(item.value().sizes(), generator, item.value().options()) + 0.5);
  for (auto& item : network.named_buffers())
    if (item.key().find("running_") != std::string::npos)
      item.value().copy_(torch::rand(item.value().sizes(), generator, item.value().options()) + 0.5);
}

double maxAbsDifference(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

TEST(TorchScriptExport, ModuleGivesTheNetworksLogitsForEveryLayout) {
  // float64 on both sides, so the bound holds on every CPU whatever kernels oneDNN picks.
  const std::vector<nlohmann::json> layouts = {
      {{"depth", 3}, {"base_filters", 4}, {"norm", "instance"}},
      {{"depth", 3}, {"base_filters", 4}, {"norm", "batch"}, {"residual", true}, {"leaky_slope", 0.2}},
      {{"depth", 2}, {"base_filters", 6}, {"norm", "group"}, {"residual", true}, {"in_channels", 3}},
      {{"depth", 3}, {"base_filters", 4}, {"max_filters", 6}, {"deep_supervision", true}, {"out_channels", 2}},
      {{"depth", 1}, {"base_filters", 3}, {"in_channels", 1}},
  };
  uint64_t seed = 1;
  for (const auto& layout : layouts) {
    SCOPED_TRACE(layout.dump());
    torch::manual_seed(seed);
    UNet3d network(UNetConfig::fromJson(layout));
    network->to(torch::kDouble);
    randomiseNorms(*network, ++seed);
    network->eval();
    torch::NoGradGuard noGrad;
    auto module = toTorchScript(*network);
    EXPECT_FALSE(module.is_training());
    const int64_t edge = 2 * network->config().sizeDivisor();
    const auto input = seededInput({2, network->config().inChannels, edge, edge, edge}, ++seed, torch::kDouble);
    const auto expected = network->forward(input);
    const auto actual = module.forward({input}).toTensor();
    ASSERT_EQ(actual.sizes(), expected.sizes());
    EXPECT_LE(maxAbsDifference(actual, expected), 1e-12);
    // Deep-supervision heads stay behind; every other tensor travels under its C++ name.
    int64_t exported = 0;
    for (const auto& parameter : module.named_parameters()) {
      EXPECT_TRUE(torch::equal(parameter.value, network->named_parameters()[parameter.name])) << parameter.name;
      ++exported;
    }
    int64_t used = 0;
    for (const auto& parameter : network->named_parameters())
      if (parameter.key().rfind("heads.", 0) != 0 || parameter.key().rfind("heads.0.", 0) == 0) ++used;
    EXPECT_EQ(exported, used);
  }
}

TEST(TorchScriptExport, WrittenModelAndSidecarSegmentAsTheCheckpointDoes) {
  test::ScratchDir dir("torchscript-export");
  const auto description = test::tinyRegionsDescription();
  torch::manual_seed(7);
  UNet3d network(description.network);
  randomiseNorms(*network, 8);
  saveModel(dir / "best.pt", network, description);

  const auto result = exportTorchScript(dir / "best.pt", dir / "model.pt");
  EXPECT_EQ(result.model, dir / "model.pt");
  EXPECT_EQ(result.sidecar, dir / "model.pt.json");
  EXPECT_EQ(result.bytes, static_cast<int64_t>(fs::file_size(dir / "model.pt")));
  EXPECT_LE(result.maxAbsDifference, 1e-5);
  EXPECT_GT(result.maxAbsLogit, 0.0);
  const auto sidecar = nlohmann::json::parse(readTextFile(result.sidecar));
  EXPECT_EQ(ModelDescription::fromJson(sidecar).toJson(), description.toJson());
  EXPECT_EQ(sidecar["size_divisor"], 2);

  // That the written model segments as the checkpoint does is the torchscript plugin's test
  // (tests/plugins/torchscript/SidecarSegmenterTest.cpp), which runs it.
}

TEST(TorchScriptExport, RefusesItsOwnCheckpointAsOutputAndForeignFiles) {
  test::ScratchDir dir("torchscript-export-bad");
  const auto description = test::tinyRegionsDescription();
  UNet3d network(description.network);
  saveModel(dir / "best.pt", network, description);
  const auto before = readTextFile(dir / "best.pt");
  EXPECT_THROW(exportTorchScript(dir / "best.pt", dir / "best.pt"), InputError);
  EXPECT_EQ(readTextFile(dir / "best.pt"), before);
  std::ofstream(dir / "notes.txt") << "not a model";
  EXPECT_THROW(exportTorchScript(dir / "notes.txt", dir / "model.pt"), InputError);
  EXPECT_THROW(exportTorchScript(dir / "missing.pt", dir / "model.pt"), InputError);
  EXPECT_FALSE(fs::exists(dir / "model.pt"));
  EXPECT_FALSE(fs::exists(dir / "model.pt.json"));
}

// Debian's python3 with python3-torch; the first python3 on PATH may be another installation.
std::string debianPython() { return fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3"; }

void writeRaw(const fs::path& file, const torch::Tensor& tensor) {
  const auto contiguous = tensor.contiguous();
  writeFileAtomically(file, std::string(static_cast<const char*>(contiguous.data_ptr()),
                                        static_cast<size_t>(contiguous.numel()) * contiguous.element_size()));
}

// Loads the exported file with torch.jit.load, runs it on the raw float32 input and prints the
// largest difference from each raw reference, the embedded description's class names, and the
// output shape; references are compared in Python so the logits need not travel back.
constexpr const char* kPythonCheck = R"PY(
import json, sys, torch
model_path, input_path, shape, *references = sys.argv[1:]
extra = {"medseg_description.json": ""}
model = torch.jit.load(model_path, _extra_files=extra)
model.eval()
def raw(path, shape):
    return torch.frombuffer(bytearray(open(path, "rb").read()), dtype=torch.float32).reshape(shape)
x = raw(input_path, [int(v) for v in shape.split(",")])
with torch.no_grad():
    y = model(x)
print("shape", ",".join(str(v) for v in y.shape))
for path in references:
    print("difference", float((y - raw(path, list(y.shape))).abs().max()))
print("classes", ",".join(json.loads(extra["medseg_description.json"])["class_names"]))
)PY";

TEST(TorchScriptExport, PythonTorchJitLoadGivesTheSameLogits) {
  const std::string python = debianPython();
  const auto probe = test::runProgram({python, "-c", "import torch"});
  if (probe.exitCode != 0) MEDSEG_MISSING_COMPONENT(std::string(python) + " cannot import torch (Debian package python3-torch): " + probe.output);

  test::ScratchDir dir("torchscript-export-python");
  const auto description = test::tinyRegionsDescription();
  torch::manual_seed(11);
  UNet3d network(description.network);
  randomiseNorms(*network, 12);
  saveModel(dir / "best.pt", network, description);
  exportTorchScript(dir / "best.pt", dir / "model.pt");

  torch::NoGradGuard noGrad;
  auto loaded = loadModelForInference(dir / "best.pt");
  auto script = torch::jit::load((dir / "model.pt").string());
  script.eval();
  const auto input = seededInput({1, 2, 16, 16, 16}, 13);
  const auto fromNetwork = loaded->forward(input);
  const auto fromScript = script.forward({input}).toTensor();
  EXPECT_LE(maxAbsDifference(fromNetwork, fromScript), 1e-5);
  writeRaw(dir / "input.f32", input);
  writeRaw(dir / "network.f32", fromNetwork);
  writeRaw(dir / "script.f32", fromScript);
  writeFileAtomically(dir / "check.py", kPythonCheck);

  const auto run = test::runProgram({python, (dir / "check.py").string(), (dir / "model.pt").string(),
                                     (dir / "input.f32").string(), "1,2,16,16,16", (dir / "network.f32").string(),
                                     (dir / "script.f32").string()});
  ASSERT_EQ(run.exitCode, 0) << run.output;
  std::istringstream lines(run.output);
  std::string key, value;
  std::vector<double> differences;
  std::string shape, classes;
  while (lines >> key >> value) {
    if (key == "shape") shape = value;
    if (key == "difference") differences.push_back(std::stod(value));
    if (key == "classes") classes = value;
  }
  EXPECT_EQ(shape, "1,3,16,16,16") << run.output;
  EXPECT_EQ(classes, "WT,TC,ET") << run.output;
  ASSERT_EQ(differences.size(), 2u) << run.output;
  EXPECT_LE(differences[0], 1e-5) << "Python vs the C++ network\n" << run.output;
  EXPECT_LE(differences[1], 1e-5) << "Python vs the C++ TorchScript module\n" << run.output;
}

}  // namespace
}  // namespace medseg
