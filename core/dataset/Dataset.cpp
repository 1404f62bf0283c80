#include "core/dataset/Dataset.h"

#include "core/dataset/BratsLayout.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <iterator>
#include <set>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/util/AtomicFile.h"

namespace medseg {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kMaxDatasetJsonBytes = 64u << 20;  // real MSD/nnU-Net files are a few hundred kB

[[noreturn]] void fail(const std::string& message) { throw DatasetError("dataset.json: " + message); }

std::string typeName(const json& value) {
  if (value.is_number_integer()) return "an integer";
  if (value.is_number()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  if (value.is_boolean()) return "a boolean";
  return "null";
}

const json& requireField(const json& object, const std::string& field, const std::string& where) {
  const auto it = object.find(field);
  if (it == object.end()) fail("missing required field '" + where + field + "'");
  return *it;
}

std::string requireString(const json& value, const std::string& field) {
  if (!value.is_string()) fail(field + " must be a string, found " + typeName(value));
  return value.get<std::string>();
}

std::string optionalString(const json& object, const std::string& field) {
  const auto it = object.find(field);
  if (it == object.end() || it->is_null()) return {};
  return requireString(*it, field);
}

int requireInt(const json& value, const std::string& field) {
  if (!value.is_number_integer()) fail(field + " must be an integer, found " + typeName(value));
  const auto v = value.get<int64_t>();
  if (v < 0 || v > 100000000) fail(field + " = " + std::to_string(v) + " is out of range");
  return static_cast<int>(v);
}

int optionalInt(const json& object, const std::string& field) {
  const auto it = object.find(field);
  if (it == object.end() || it->is_null()) return -1;
  return requireInt(*it, field);
}

// A plain decimal number as written in JSON keys ("0", "12"); callers check uniqueness.
bool parseIndex(const std::string& text, int& value) {
  if (text.empty() || text.size() > 6) return false;
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  value = std::stoi(text);
  return true;
}

std::pair<size_t, size_t> lineAndColumn(const std::string& text, size_t byte) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

std::string readDatasetJsonFile(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_directory(file.parent_path(), ec))
    throw DatasetError("data-set folder " + file.parent_path().string() + " does not exist or is not a folder");
  if (!fs::exists(file, ec))
    throw DatasetError("no dataset.json in " + file.parent_path().string() +
                       ": a data-set folder needs one (MSD or nnU-Net v2 format), or BraTS case folders as the "
                       "challenge ships them (BraTS2021_00000/BraTS2021_00000_flair.nii.gz, BraTS-GLI-00000-000/...-t2f.nii.gz)");
  try {
    return readTextFile(file, kMaxDatasetJsonBytes);
  } catch (const std::exception& e) {
    throw DatasetError(std::string("dataset.json: ") + e.what());
  }
}

json parseDatasetJsonText(const std::string& text, const fs::path& file) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    const auto [line, column] = lineAndColumn(text, e.byte > 0 ? e.byte - 1 : 0);
    std::string detail = e.what();
    const auto colon = detail.find(": ");
    if (colon != std::string::npos) detail = detail.substr(colon + 2);
    throw DatasetError(file.string() + " is not valid JSON: line " + std::to_string(line) + ", column " +
                       std::to_string(column) + ": " + detail);
  } catch (const json::exception& e) {  // out_of_range: a number like 9e999999 overflows a double
    throw DatasetError(file.string() + " is not valid JSON: " + e.what());
  }
}

// {"0": "FLAIR", "1": "T1w"} -> names in channel order; keys must be exactly 0..C-1.
std::vector<std::string> parseChannelMap(const json& map, const std::string& field) {
  if (!map.is_object()) fail(field + " must be an object like {\"0\": \"FLAIR\"}, found " + typeName(map));
  if (map.empty()) fail(field + " is empty: at least one channel is needed");
  std::map<int, std::string> byIndex;
  for (auto it = map.begin(); it != map.end(); ++it) {
    int index = 0;
    if (!parseIndex(it.key(), index)) fail(field + " key '" + it.key() + "' is not a channel number (0, 1, ...)");
    if (!byIndex.emplace(index, requireString(it.value(), field + "[\"" + it.key() + "\"]")).second)
      fail(field + " names channel " + std::to_string(index) + " twice");
  }
  std::vector<std::string> names;
  for (const auto& [index, name] : byIndex) {
    if (index != static_cast<int>(names.size()))
      fail(field + " keys must be 0.." + std::to_string(byIndex.size() - 1) + " without gaps; channel " +
           std::to_string(names.size()) + " is missing");
    names.push_back(name);
  }
  return names;
}

int labelValue(const json& value, const std::string& field) {
  if (!value.is_number_integer()) fail(field + " must be an integer label value, found " + typeName(value));
  const auto v = value.get<int64_t>();
  if (v < 0 || v > 255) fail(field + " = " + std::to_string(v) + " is outside 0..255 (labels are stored as uint8)");
  return static_cast<int>(v);
}

// MSD writes {"0": "background", "1": "edema"}; nnU-Net v2 writes {"background": 0, "edema": 1} and
// may name regions {"whole_tumor": [1, 2, 3]}. Either style is accepted in either layout.
void parseLabels(const json& map, Dataset& dataset) {
  const std::string field = "labels";
  if (!map.is_object()) fail(field + " must be an object, found " + typeName(map));
  if (map.empty()) fail(field + " is empty: at least the background label 0 is needed");
  const bool msdStyle = map.begin().value().is_string();
  std::vector<std::pair<std::string, std::vector<int>>> regions;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string entry = field + "[\"" + it.key() + "\"]";
    if (msdStyle) {
      int value = 0;
      if (!parseIndex(it.key(), value) || value > 255)
        fail(field + " key '" + it.key() + "' is not a label value 0..255 (MSD style is {\"1\": \"edema\"})");
      if (!dataset.labels.emplace(value, requireString(it.value(), entry)).second)
        fail(field + " names value " + std::to_string(value) + " twice");
    } else if (it.value().is_array()) {
      std::vector<int> values;
      for (size_t i = 0; i < it.value().size(); ++i)
        values.push_back(labelValue(it.value()[i], entry + "[" + std::to_string(i) + "]"));
      if (values.empty()) fail(entry + " is an empty region");
      regions.emplace_back(it.key(), values);
    } else {
      if (it.value().is_string())
        fail(entry + " mixes label styles: use {\"1\": \"edema\"} (MSD) or {\"edema\": 1} (nnU-Net) throughout");
      const int value = labelValue(it.value(), entry);
      if (!dataset.labels.emplace(value, it.key()).second)
        fail(field + " gives value " + std::to_string(value) + " to both '" + dataset.labels[value] + "' and '" +
             it.key() + "'");
    }
  }
  for (const auto& [name, values] : regions) {
    for (int v : values) dataset.labels.emplace(v, name);  // a region's values are valid label values
    dataset.regions[name] = values;
  }
  if (!dataset.labels.count(0)) fail(field + " must include the background value 0");
}

fs::path resolveEntry(const fs::path& root, const std::string& relative, const std::string& field) {
  try {
    return resolveInsideDataset(root, relative);
  } catch (const DatasetError& e) {
    fail(field + ": " + e.what());
  }
}

// MSD "training": [{"image": "./imagesTr/X.nii.gz", "label": "./labelsTr/X.nii.gz"}].
std::vector<CaseEntry> parseMsdCases(const json& list, const std::string& field, const Dataset& dataset,
                                     bool labelled) {
  if (!list.is_array()) fail(field + " must be an array, found " + typeName(list));
  std::vector<CaseEntry> cases;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = field + "[" + std::to_string(i) + "]";
    const json& item = list[i];
    std::string image, label;
    if (item.is_string() && !labelled) {
      image = item.get<std::string>();  // MSD test lists are plain paths
    } else if (item.is_object()) {
      image = requireString(requireField(item, "image", where + "."), where + ".image");
      if (labelled) label = requireString(requireField(item, "label", where + "."), where + ".label");
    } else {
      fail(where + " must be " + std::string(labelled ? "an object {\"image\", \"label\"}" : "a path string") +
           ", found " + typeName(item));
    }
    CaseEntry entry;
    entry.images.push_back(resolveEntry(dataset.root, image, where + (item.is_object() ? ".image" : "")));
    if (labelled) entry.label = resolveEntry(dataset.root, label, where + ".label");
    entry.id = caseIdFromFileName(entry.images.front(), dataset.fileEnding);
    if (entry.id.empty()) fail(where + ": cannot derive a case id from '" + image + "'");
    cases.push_back(std::move(entry));
  }
  return cases;
}

void requireUniqueIds(const std::vector<CaseEntry>& cases, const std::string& field) {
  std::set<std::string> seen;
  for (const auto& c : cases)
    if (!seen.insert(c.id).second)
      fail(field + " lists case '" + c.id + "' more than once (case ids come from the image file names)");
}

// imagesTr/<case>_<cccc><ending>: the case id and channel number, or false for other files.
bool splitChannelFile(const std::string& name, const std::string& ending, std::string& caseId, int& channel) {
  if (name.empty() || name.front() == '.') return false;  // hidden files, macOS "._" resource forks
  if (name.size() <= ending.size() + 5 || name.compare(name.size() - ending.size(), ending.size(), ending) != 0)
    return false;
  const std::string stem = name.substr(0, name.size() - ending.size());
  const std::string digits = stem.substr(stem.size() - 4);
  if (stem[stem.size() - 5] != '_' || !parseIndex(digits, channel)) return false;
  caseId = stem.substr(0, stem.size() - 5);
  return !caseId.empty();
}

fs::path channelPath(const fs::path& folder, const std::string& caseId, int channel, const std::string& ending) {
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "_%04d", channel);
  return folder / (caseId + suffix + ending);
}

// nnU-Net v2: cases are the files present. Every case gets the expected path of each of its C
// channels (missing ones are findings for the check) plus any extra channel file found.
std::vector<CaseEntry> discoverNnUNetCases(const Dataset& dataset, const std::string& imagesDir,
                                           const std::string& labelsDir) {
  const fs::path folder = dataset.root / imagesDir;
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return {};
  std::map<std::string, std::set<int>> channelsByCase;
  for (const auto& item : fs::directory_iterator(folder, ec)) {
    std::string caseId;
    int channel = 0;
    if (item.is_directory(ec) ||
        !splitChannelFile(item.path().filename().string(), dataset.fileEnding, caseId, channel))
      continue;
    channelsByCase[caseId].insert(channel);
  }
  if (ec) throw DatasetError("cannot list " + folder.string() + ": " + ec.message());
  std::vector<CaseEntry> cases;
  const int expected = static_cast<int>(dataset.modalities.size());
  for (const auto& [caseId, found] : channelsByCase) {
    CaseEntry entry;
    entry.id = caseId;
    std::set<int> channels = found;
    for (int c = 0; c < expected; ++c) channels.insert(c);
    for (int c : channels) {
      const std::string relative = channelPath(imagesDir, caseId, c, dataset.fileEnding).string();
      entry.images.push_back(resolveEntry(dataset.root, relative, imagesDir + " file"));
    }
    if (!labelsDir.empty())
      entry.label = resolveEntry(dataset.root, labelsDir + "/" + caseId + dataset.fileEnding, labelsDir + " file");
    cases.push_back(std::move(entry));
  }
  return cases;
}

// nnU-Net v2's optional explicit file list: "dataset": {"case": {"images": [...], "label": "..."}}.
std::vector<CaseEntry> parseNnUNetFileList(const json& list, const Dataset& dataset) {
  if (!list.is_object()) fail("dataset must be an object {case: {images, label}}, found " + typeName(list));
  std::vector<CaseEntry> cases;
  for (auto it = list.begin(); it != list.end(); ++it) {
    const std::string where = "dataset[\"" + it.key() + "\"]";
    if (!it.value().is_object()) fail(where + " must be an object, found " + typeName(it.value()));
    const json& images = requireField(it.value(), "images", where + ".");
    if (!images.is_array() || images.empty()) fail(where + ".images must be a non-empty array of paths");
    CaseEntry entry;
    entry.id = it.key();
    for (size_t i = 0; i < images.size(); ++i) {
      const std::string field = where + ".images[" + std::to_string(i) + "]";
      entry.images.push_back(resolveEntry(dataset.root, requireString(images[i], field), field));
    }
    entry.label = resolveEntry(dataset.root, requireString(requireField(it.value(), "label", where + "."), where + ".label"),
                               where + ".label");
    cases.push_back(std::move(entry));
  }
  return cases;
}

void loadMsd(const json& doc, Dataset& dataset) {
  dataset.layout = DatasetLayout::MSD;
  const auto modality = doc.find("modality");
  dataset.modalities = modality != doc.end() ? parseChannelMap(*modality, "modality")
                                             : parseChannelMap(requireField(doc, "channel_names", ""), "channel_names");
  parseLabels(requireField(doc, "labels", ""), dataset);
  dataset.declaredNumTraining = optionalInt(doc, "numTraining");
  dataset.declaredNumTest = optionalInt(doc, "numTest");
  for (const char* field : {"tensorImageSize", "reference", "licence", "release"}) optionalString(doc, field);
  dataset.training = parseMsdCases(requireField(doc, "training", ""), "training", dataset, true);
  requireUniqueIds(dataset.training, "training");
  const auto test = doc.find("test");
  if (test != doc.end() && !test->is_null()) {
    dataset.test = parseMsdCases(*test, "test", dataset, false);
    requireUniqueIds(dataset.test, "test");
  }
}

void loadNnUNetV2(const json& doc, Dataset& dataset) {
  dataset.layout = DatasetLayout::NnUNetV2;
  dataset.modalities = parseChannelMap(requireField(doc, "channel_names", ""), "channel_names");
  parseLabels(requireField(doc, "labels", ""), dataset);
  dataset.declaredNumTraining = requireInt(requireField(doc, "numTraining", ""), "numTraining");
  dataset.fileEnding = requireString(requireField(doc, "file_ending", ""), "file_ending");
  if (dataset.fileEnding.empty() || dataset.fileEnding.front() != '.' ||
      dataset.fileEnding.find('/') != std::string::npos)
    fail("file_ending must look like \".nii.gz\", found \"" + dataset.fileEnding + "\"");
  const auto order = doc.find("regions_class_order");
  if (order != doc.end() && !order->is_array()) fail("regions_class_order must be an array, found " + typeName(*order));
  if (!dataset.regions.empty() && order == doc.end())
    fail("labels define regions, so regions_class_order is required (nnU-Net v2 region-based training)");
  const auto files = doc.find("dataset");
  dataset.training = files != doc.end() ? parseNnUNetFileList(*files, dataset)
                                        : discoverNnUNetCases(dataset, "imagesTr", "labelsTr");
  dataset.test = discoverNnUNetCases(dataset, "imagesTs", "");
}

// Case paths come as root / "imagesTr/X.nii.gz" (what loadDataset returns, root absolute or not),
// as absolute paths under root, or already relative to root.
fs::path relativeToRoot(const fs::path& root, const fs::path& path) {
  const fs::path normalRoot = root.lexically_normal();
  const fs::path normalPath = path.lexically_normal();
  auto r = normalRoot.begin(), p = normalPath.begin();
  for (; r != normalRoot.end() && p != normalPath.end() && *r == *p; ++r, ++p) {}
  const bool underRoot = r == normalRoot.end() || (std::next(r) == normalRoot.end() && r->empty());
  if (underRoot) return normalPath.lexically_relative(normalRoot);
  if (path.is_absolute()) return normalPath.lexically_relative(fs::absolute(root).lexically_normal());
  return normalPath;
}

std::string relativeForJson(const Dataset& dataset, const fs::path& path, const std::string& caseId) {
  const fs::path relative = relativeToRoot(dataset.root, path);
  const std::string text = relative.generic_string();
  if (text.empty() || text == "." || text.rfind("..", 0) == 0 || relative.is_absolute())
    throw DatasetError("cannot write dataset.json for " + dataset.root.string() + ": case '" + caseId + "' file " +
                       path.string() + " is not inside the data-set folder");
  return text.rfind("./", 0) == 0 ? text : "./" + text;
}

}  // namespace

const char* layoutName(DatasetLayout layout) {
  switch (layout) {
    case DatasetLayout::MSD: return "MSD";
    case DatasetLayout::NnUNetV2: return "nnU-Net v2";
    case DatasetLayout::BraTS: return "BraTS";
  }
  return "?";
}

std::string caseIdFromFileName(const fs::path& file, const std::string& ending) {
  std::string name = file.filename().string();
  if (!ending.empty() && name.size() > ending.size() &&
      name.compare(name.size() - ending.size(), ending.size(), ending) == 0)
    return name.substr(0, name.size() - ending.size());
  const auto dot = name.find('.', 1);
  return dot == std::string::npos ? name : name.substr(0, dot);
}

bool isInsideDataset(const fs::path& root, const fs::path& path) {
  std::error_code ec;
  const fs::path canonicalRoot = fs::weakly_canonical(root, ec);
  if (ec) return false;
  const fs::path canonicalPath = fs::weakly_canonical(path, ec);
  if (ec) return false;
  auto r = canonicalRoot.begin(), p = canonicalPath.begin();
  for (; r != canonicalRoot.end(); ++r, ++p) {
    if (r->empty()) continue;  // trailing separator of the root
    if (p == canonicalPath.end() || *r != *p) return false;
  }
  return true;
}

fs::path resolveInsideDataset(const fs::path& root, const std::string& relative) {
  if (relative.empty()) throw DatasetError("empty path");
  const fs::path given(relative);
  if (given.is_absolute() || given.has_root_name() || given.has_root_directory())
    throw DatasetError("path '" + relative + "' is absolute; paths must be relative to the data-set folder " +
                       root.string());
  const fs::path normal = given.lexically_normal();
  const std::string text = normal.generic_string();
  if (text == "." || text.empty()) throw DatasetError("path '" + relative + "' names the data-set folder itself, not a file");
  if (text == ".." || text.rfind("../", 0) == 0)
    throw DatasetError("path '" + relative + "' climbs above the data-set folder " + root.string() + " with '..'");
  const fs::path resolved = root / normal;
  if (!isInsideDataset(root, resolved)) {
    std::error_code ec;
    const fs::path target = fs::weakly_canonical(resolved, ec);
    throw DatasetError("path '" + relative + "' leads outside the data-set folder " + root.string() +
                       " through a symbolic link" + (ec ? std::string() : " (to " + target.string() + ")"));
  }
  return resolved;
}

Dataset loadDataset(const fs::path& root) {
  std::error_code ec;
  if (!fs::exists(root / "dataset.json", ec) && isBratsFolder(root)) return loadBratsDataset(root);
  return datasetFromJson(readDatasetJsonFile(root / "dataset.json"), root);
}

bool isDatasetFolder(const fs::path& folder) {
  std::error_code ec;
  return fs::is_regular_file(folder / "dataset.json", ec) || isBratsFolder(folder);
}

Dataset datasetFromJson(const std::string& text, const fs::path& root) {
  Dataset dataset;
  dataset.root = root;
  const json doc = parseDatasetJsonText(text, dataset.jsonPath());
  if (!doc.is_object()) fail("the top level must be an object, found " + typeName(doc));
  dataset.name = optionalString(doc, "name");
  if (dataset.name.empty()) dataset.name = fs::absolute(root).lexically_normal().filename().string();
  dataset.description = optionalString(doc, "description");
  // MSD and nnU-Net v1 list their cases under "training"; nnU-Net v2 discovers them from the folders.
  if (doc.contains("training"))
    loadMsd(doc, dataset);
  else if (doc.contains("channel_names"))
    loadNnUNetV2(doc, dataset);
  else
    fail("neither 'training' (MSD) nor 'channel_names' (nnU-Net v2) is present; is this a data-set folder?");
  return dataset;
}

ImageVolume loadCaseImage(const CaseEntry& entry, const ReadOptions& options) {
  if (entry.images.empty()) throw DatasetError("case '" + entry.id + "' has no image file");
  if (entry.images.size() == 1) return readImage(entry.images.front(), options);
  std::vector<ImageVolume> channels;
  for (const auto& file : entry.images) {
    ImageVolume channel = readImage(file, options);
    if (!channels.empty()) {
      const ImageVolume& first = channels.front();
      if (channel.size != first.size)
        throw DatasetError("case '" + entry.id + "': " + file.filename().string() + " is " +
                           describeSize(channel.size) + " but " + entry.images.front().filename().string() + " is " +
                           describeSize(first.size) + "; all channels of a case must share one grid");
      if (!channel.geometry.sameAs(first.geometry))
        throw DatasetError("case '" + entry.id + "': " + file.filename().string() +
                           " has a different spacing, origin or direction than " +
                           entry.images.front().filename().string() +
                           "; all channels of a case must share one grid (resample them first)");
    }
    channels.push_back(std::move(channel));
  }
  return stackChannels(channels);
}

LabelVolume loadCaseLabels(const CaseEntry& entry, const ReadOptions& options) {
  if (entry.label.empty()) throw DatasetError("case '" + entry.id + "' has no label map (is it a test case?)");
  LabelVolume labels = readLabels(entry.label, options);
  if (entry.storedLabels.empty()) return labels;
  std::array<int, 256> toValue;
  toValue.fill(-1);
  for (const auto& [stored, value] : entry.storedLabels) toValue[static_cast<size_t>(stored)] = value;
  for (auto& v : labels.data) {
    if (toValue[v] < 0) {
      std::string known;
      for (const auto& [stored, value] : entry.storedLabels) known += (known.empty() ? "" : ", ") + std::to_string(stored);
      throw DatasetError(entry.label.string() + ": label value " + std::to_string(v) + " is not one of this data set's (" +
                         known + ")");
    }
    v = static_cast<uint8_t>(toValue[v]);
  }
  return labels;
}

void writeMsdDatasetJson(const Dataset& dataset) {
  nlohmann::ordered_json doc;  // MSD field order, as people read these files
  doc["name"] = dataset.name;
  doc["description"] = dataset.description;
  doc["tensorImageSize"] = dataset.modalities.size() > 1 ? "4D" : "3D";
  nlohmann::ordered_json modality = nlohmann::ordered_json::object();
  for (size_t c = 0; c < dataset.modalities.size(); ++c) modality[std::to_string(c)] = dataset.modalities[c];
  doc["modality"] = modality;
  nlohmann::ordered_json labels = nlohmann::ordered_json::object();
  for (const auto& [value, name] : dataset.labels) labels[std::to_string(value)] = name;
  doc["labels"] = labels;
  doc["numTraining"] = dataset.training.size();
  doc["numTest"] = dataset.test.size();
  nlohmann::ordered_json training = nlohmann::ordered_json::array();
  for (const auto& entry : dataset.training) {
    if (entry.images.size() != 1)
      throw DatasetError("cannot write an MSD dataset.json: case '" + entry.id + "' has " +
                         std::to_string(entry.images.size()) + " image files, MSD needs one 4-D file per case");
    training.push_back(nlohmann::ordered_json{{"image", relativeForJson(dataset, entry.images.front(), entry.id)},
                        {"label", relativeForJson(dataset, entry.label, entry.id)}});
  }
  doc["training"] = training;
  nlohmann::ordered_json test = nlohmann::ordered_json::array();
  for (const auto& entry : dataset.test) {
    if (entry.images.size() != 1)
      throw DatasetError("cannot write an MSD dataset.json: test case '" + entry.id + "' has " +
                         std::to_string(entry.images.size()) + " image files, MSD needs one 4-D file per case");
    test.push_back(relativeForJson(dataset, entry.images.front(), entry.id));
  }
  doc["test"] = test;
  writeFileAtomically(dataset.jsonPath(), doc.dump(4) + "\n");
}

}  // namespace medseg
