#include "core/dataset/DatasetConversion.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/io/ImageIO.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace fs = std::filesystem;
namespace {

void requireEmptyTarget(const Dataset& source, const fs::path& out) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_empty(out, ec))
    throw DatasetError("--out " + out.string() + " is not empty: converting writes a new data set into an empty folder");
  if (isInsideDataset(source.root, out))
    throw DatasetError("--out " + out.string() + " is inside the source data set " + source.root.string() + "; choose a folder outside it");
}

std::string channelFileName(const std::string& id, size_t channel, const std::string& ending) {
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "_%04zu", channel);
  return id + suffix + ending;
}

// One case written in `layout` under out/<imagesFolder>, its labels (training cases) under out/labelsTr.
CaseEntry convertCase(const CaseEntry& entry, const fs::path& out, const std::string& imagesFolder, DatasetLayout layout) {
  CaseEntry written;
  written.id = entry.id;
  fs::create_directories(out / imagesFolder);
  const ImageVolume image = loadCaseImage(entry);
  if (layout == DatasetLayout::MSD) {
    written.images = {out / imagesFolder / (entry.id + ".nii.gz")};
    writeImage(image, written.images.front());
  } else {
    for (int64_t c = 0; c < image.channels; ++c) {
      written.images.push_back(out / imagesFolder / channelFileName(entry.id, static_cast<size_t>(c), ".nii.gz"));
      writeImage(extractChannel(image, c), written.images.back());
    }
  }
  if (!entry.label.empty()) {
    fs::create_directories(out / "labelsTr");
    written.label = out / "labelsTr" / (entry.id + ".nii.gz");
    writeLabels(loadCaseLabels(entry), written.label);
  }
  return written;
}

void writeNnunetDatasetJson(const Dataset& dataset) {
  nlohmann::ordered_json doc;
  nlohmann::ordered_json channels = nlohmann::ordered_json::object();
  for (size_t c = 0; c < dataset.modalities.size(); ++c) channels[std::to_string(c)] = dataset.modalities[c];
  doc["channel_names"] = channels;
  nlohmann::ordered_json labels = nlohmann::ordered_json::object();
  for (const auto& [value, name] : dataset.labels) labels[value == 0 ? std::string("background") : name] = value;
  doc["labels"] = labels;
  doc["numTraining"] = dataset.training.size();
  doc["file_ending"] = ".nii.gz";
  doc["name"] = dataset.name;
  doc["description"] = dataset.description;
  writeFileAtomically(dataset.jsonPath(), doc.dump(4) + "\n");
}

}  // namespace

Dataset convertDataset(const Dataset& source, const fs::path& out, DatasetLayout layout, Reporter& reporter) {
  if (layout == DatasetLayout::BraTS) throw DatasetError("a data set is converted to MSD or nnU-Net v2, not to a challenge's layout");
  requireEmptyTarget(source, out);
  Dataset converted;
  converted.root = out;
  converted.layout = layout;
  converted.name = source.name;
  converted.description = source.description + " (converted by medseg dataset convert from " + source.root.string() + ")";
  converted.modalities = source.modalities;
  converted.labels = source.labels;
  converted.regions = source.regions;
  Progress progress(reporter, "convert", static_cast<int64_t>(source.training.size() + source.test.size()));
  for (const auto& entry : source.training) {
    throwIfInterrupted("data-set conversion (dataset.json was not written)");
    converted.training.push_back(convertCase(entry, out, "imagesTr", layout));
    progress.advance(1, {{"case", entry.id}});
  }
  for (const auto& entry : source.test) {
    throwIfInterrupted("data-set conversion (dataset.json was not written)");
    converted.test.push_back(convertCase(entry, out, "imagesTs", layout));
    progress.advance(1, {{"case", entry.id}});
  }
  if (layout == DatasetLayout::MSD) writeMsdDatasetJson(converted);
  else writeNnunetDatasetJson(converted);
  return converted;
}

}  // namespace medseg
