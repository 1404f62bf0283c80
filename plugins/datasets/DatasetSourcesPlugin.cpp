#include "plugins/datasets/DatasetSourcesPlugin.h"

#include "core/dataset/SynthGenerator.h"
#include "core/util/Interrupt.h"

namespace medseg::plugins {

bool FolderDatasetSource::canOpen(const std::filesystem::path& location) const {
  std::error_code ec;
  return std::filesystem::is_regular_file(location / "dataset.json", ec);
}

Dataset FolderDatasetSource::open(const std::filesystem::path& location) const { return loadDataset(location); }

Dataset FolderDatasetSource::create(const std::filesystem::path& location, const nlohmann::json& options,
                                    Reporter& reporter) const {
  SynthOptions synth;
  synth.outputDir = location;
  synth.cases = options.value("cases", synth.cases);
  synth.testCases = options.value("test_cases", synth.testCases);
  synth.seed = options.value("seed", synth.seed);
  if (options.contains("size")) {
    const auto& size = options.at("size");
    if (!size.is_array() || size.size() != 3) throw InputError("synthetic data set option \"size\" must be [x, y, z]");
    synth.size = {size[0].get<int64_t>(), size[1].get<int64_t>(), size[2].get<int64_t>()};
  }
  generateSynthDataset(synth, reporter);
  return loadDataset(location);
}

}  // namespace medseg::plugins
