#include "core/dataset/AddTrainingCase.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/io/Provenance.h"
#include "core/util/AtomicFile.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

void checkId(const std::string& id) {
  const bool ok = !id.empty() && id.size() <= 128 && id.front() != '.' &&
                  std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-' || c == '.'; });
  if (!ok) throw DatasetError("case id '" + id + "' is not usable: letters, digits, '_', '-' and '.' only, not starting with '.'");
}

std::set<int> labelValues(const LabelVolume& labels) {
  std::vector<bool> present(256, false);
  for (uint8_t v : labels.data) present[v] = true;
  std::set<int> values;
  for (int v = 1; v < 256; ++v)
    if (present[size_t(v)]) values.insert(v);
  return values;
}

// The case against the data set it joins: channels, label values and, where both name a label, names.
void checkAgainst(const Dataset& dataset, const NewTrainingCase& c) {
  const fs::path json = dataset.jsonPath();
  if (!dataset.modalities.empty() && int64_t(dataset.modalities.size()) != c.image->channels)
    throw DatasetError("the image has " + std::to_string(c.image->channels) + " channels but " + json.string() + " declares " +
                       std::to_string(dataset.modalities.size()) + " (" + [&] {
                         std::string names;
                         for (const auto& m : dataset.modalities) names += (names.empty() ? "" : ", ") + m;
                         return names;
                       }() + "); add it to a data set of its own channels");
  for (size_t ch = 0; ch < dataset.modalities.size() && ch < c.modalities.size(); ++ch)
    if (lower(dataset.modalities[ch]) != lower(c.modalities[ch]))
      throw DatasetError("channel " + std::to_string(ch) + " is '" + c.modalities[ch] + "' in the image but '" +
                         dataset.modalities[ch] + "' in " + json.string() + "; the channels must come in the data set's order");
  for (int value : labelValues(*c.labels)) {
    const auto declared = dataset.labels.find(value);
    if (declared == dataset.labels.end())
      throw DatasetError("the mask uses label " + std::to_string(value) + ", which " + json.string() +
                         " does not declare; relabel it or add the label to dataset.json first");
    const auto named = c.labelNames.find(value);
    if (named != c.labelNames.end() && !named->second.empty() && lower(named->second) != lower(declared->second))
      throw DatasetError("label " + std::to_string(value) + " is '" + named->second + "' in the mask but '" + declared->second +
                         "' in " + json.string() + "; the same value must mean the same tissue");
  }
}

Dataset newMsdDataset(const fs::path& root, const NewTrainingCase& c) {
  Dataset dataset;
  dataset.root = root;
  dataset.layout = DatasetLayout::MSD;
  dataset.name = root.filename().string();
  dataset.description = "Cases added by MedSeg Studio";
  dataset.modalities = c.modalities;
  if (int64_t(dataset.modalities.size()) != c.image->channels) {
    dataset.modalities.clear();
    for (int64_t ch = 0; ch < c.image->channels; ++ch) dataset.modalities.push_back("channel " + std::to_string(ch));
  }
  dataset.labels[0] = "background";
  for (int value : labelValues(*c.labels)) {
    const auto named = c.labelNames.find(value);
    dataset.labels[value] = named != c.labelNames.end() && !named->second.empty() ? named->second : "label " + std::to_string(value);
  }
  return dataset;
}

std::string freeId(const Dataset& dataset, const std::string& wished) {
  std::set<std::string> taken;
  for (const auto& e : dataset.training) taken.insert(e.id);
  for (const auto& e : dataset.test) taken.insert(e.id);
  std::string id = wished;
  for (int n = 2; taken.count(id) || fs::exists(dataset.root / "labelsTr" / (id + dataset.fileEnding)); ++n)
    id = wished + "_" + std::to_string(n);
  return id;
}

// nnU-Net v2 keeps only the count in dataset.json (cases are found by file name): rewrite it in place,
// keeping every other field as the file has it.
void updateNnUNetCount(const Dataset& dataset) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(readTextFile(dataset.jsonPath(), 16u << 20));
  doc["numTraining"] = dataset.training.size();
  writeFileAtomically(dataset.jsonPath(), doc.dump(4) + "\n");
}

}  // namespace

CaseEntry addTrainingCase(const fs::path& root, const NewTrainingCase& c) {
  if (!c.image || !c.labels) throw DatasetError("a training case needs an image and a mask");
  if (c.labels->size != c.image->size)
    throw DatasetError("the mask (" + describeSize(c.labels->size) + ") is not on the image's grid (" + describeSize(c.image->size) + ")");
  checkId(c.id);
  if (labelValues(*c.labels).empty()) throw DatasetError("the mask is empty: a training case needs labelled voxels");
  const bool exists = fs::exists(root / "dataset.json");
  Dataset dataset = exists ? loadDataset(root) : newMsdDataset(root, c);
  if (exists) checkAgainst(dataset, c);
  CaseEntry entry;
  entry.id = freeId(dataset, c.id);
  fs::create_directories(root / "imagesTr");
  fs::create_directories(root / "labelsTr");
  entry.label = root / "labelsTr" / (entry.id + dataset.fileEnding);
  if (dataset.layout == DatasetLayout::MSD) {
    entry.images = {root / "imagesTr" / (entry.id + dataset.fileEnding)};
    writeImage(*c.image, entry.images.front());
  } else {
    for (int64_t ch = 0; ch < c.image->channels; ++ch) {
      char suffix[16];
      std::snprintf(suffix, sizeof suffix, "_%04d", int(ch));
      entry.images.push_back(root / "imagesTr" / (entry.id + suffix + dataset.fileEnding));
      writeImage(extractChannel(*c.image, ch), entry.images.back());
    }
  }
  writeLabels(*c.labels, entry.label);
  if (!c.provenance.is_null()) writeProvenanceBeside(c.provenance, entry.label);
  dataset.training.push_back(entry);
  if (dataset.layout == DatasetLayout::MSD) writeMsdDatasetJson(dataset);
  else updateNnUNetCount(dataset);
  return entry;
}

}  // namespace medseg
