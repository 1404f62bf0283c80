#include "plugins/unet3d/train/TrainConfig.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include <c10/core/ScalarType.h>

#include "core/dataset/Dataset.h"
#include "core/util/AtomicFile.h"
#include "core/util/ConfigDocument.h"
#include "core/util/Interrupt.h"
#include "core/util/JsonNumbers.h"

namespace medseg {
namespace {

using nlohmann::json;

// Reads one JSON object section, remembering which keys were consumed so the rest can be reported
// as unknown. Every error names the full dotted key.
class SectionReader {
 public:
  SectionReader(const json& object, std::string prefix) : object_(object), prefix_(std::move(prefix)) {
    if (!object_.is_object()) throw InputError("training config: " + where() + " must be a mapping of keys to values");
  }
  ~SectionReader() = default;

  std::string key(const std::string& name) const { return prefix_.empty() ? name : prefix_ + "." + name; }
  bool has(const std::string& name) {
    used_.insert(name);
    return object_.contains(name) && !object_.at(name).is_null();
  }
  const json& raw(const std::string& name) {
    used_.insert(name);
    return object_.at(name);
  }

  // Finite only: YAML can spell .inf and .nan, which no setting means and config.json (JSON) could
  // not even write back.
  double number(const std::string& name, double fallback) {
    if (!has(name)) return fallback;
    const auto& v = object_.at(name);
    if (!v.is_number()) fail(name, "a number", v);
    if (!std::isfinite(v.get<double>())) fail(name, "a finite number", v);
    return v.get<double>();
  }
  int64_t integer(const std::string& name, int64_t fallback) {
    if (!has(name)) return fallback;
    const auto& v = object_.at(name);
    if (const auto whole = wholeNumber(v)) return *whole;
    fail(name, "a whole number", v);
  }
  bool boolean(const std::string& name, bool fallback) {
    if (!has(name)) return fallback;
    const auto& v = object_.at(name);
    if (!v.is_boolean()) fail(name, "true or false", v);
    return v.get<bool>();
  }
  std::string text(const std::string& name, const std::string& fallback) {
    if (!has(name)) return fallback;
    const auto& v = object_.at(name);
    if (!v.is_string()) fail(name, "a string", v);
    return v.get<std::string>();
  }
  std::string choice(const std::string& name, const std::string& fallback, const std::vector<std::string>& allowed) {
    const std::string value = text(name, fallback);
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw InputError("training config: " + key(name) + " must be one of " + list + ", got \"" + value + "\"");
    }
    return value;
  }
  std::vector<double> numbers(const std::string& name, std::vector<double> fallback, size_t expectedSize = 0) {
    if (!has(name)) return fallback;
    const auto& v = object_.at(name);
    if (!v.is_array()) fail(name, "a list of numbers", v);
    std::vector<double> out;
    for (const auto& item : v) {
      if (!item.is_number()) fail(name, "a list of numbers", v);
      if (!std::isfinite(item.get<double>())) fail(name, "a list of finite numbers", v);
      out.push_back(item.get<double>());
    }
    if (expectedSize && out.size() != expectedSize)
      throw InputError("training config: " + key(name) + " needs " + std::to_string(expectedSize) + " values, got " +
                       std::to_string(out.size()));
    return out;
  }
  std::vector<int64_t> integers(const std::string& name, std::vector<int64_t> fallback, size_t expectedSize,
                                int64_t lowest = std::numeric_limits<int64_t>::min(),
                                int64_t highest = std::numeric_limits<int64_t>::max()) {
    if (!has(name)) return fallback;
    const auto& v = object_.at(name);
    if (!v.is_array()) fail(name, "a list of whole numbers", v);
    std::vector<int64_t> out;
    for (const auto& item : v) {
      const auto whole = wholeNumber(item, lowest, highest);
      if (!whole)
        fail(name, "a list of whole numbers in " + std::to_string(lowest) + ".." + std::to_string(highest), v);
      out.push_back(*whole);
    }
    if (expectedSize && !out.empty() && out.size() != expectedSize)
      throw InputError("training config: " + key(name) + " needs " + std::to_string(expectedSize) +
                       " values (z, y, x), got " + std::to_string(out.size()));
    return out;
  }
  // Throws for any key that no reader asked for.
  void rejectUnknownKeys(const std::set<std::string>& alsoKnown = {}) const {
    for (auto it = object_.begin(); it != object_.end(); ++it) {
      if (used_.count(it.key()) || alsoKnown.count(it.key())) continue;
      std::string known;
      for (const auto& k : used_) known += (known.empty() ? "" : ", ") + k;
      for (const auto& k : alsoKnown) known += ", " + k;
      throw InputError("training config: unknown key \"" + key(it.key()) + "\" (known keys" +
                       (prefix_.empty() ? "" : " in " + prefix_) + ": " + known + ")");
    }
  }

 private:
  std::string where() const { return prefix_.empty() ? "the document" : "\"" + prefix_ + "\""; }
  [[noreturn]] void fail(const std::string& name, const std::string& expected, const json& found) const {
    throw InputError("training config: " + key(name) + " must be " + expected + ", got " +
                     found.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  const json& object_;
  std::string prefix_;
  std::set<std::string> used_;
};

void require(bool condition, const std::string& message) {
  if (!condition) throw InputError("training config: " + message);
}

// Depth of the deepest array or object, found without recursion (the document may be hostile).
size_t nestingDepth(const json& document) {
  size_t deepest = 0;
  std::vector<std::pair<const json*, size_t>> pending{{&document, 1}};
  while (!pending.empty()) {
    const auto [node, depth] = pending.back();
    pending.pop_back();
    if (!node->is_structured()) continue;
    deepest = std::max(deepest, depth);
    if (deepest > kMaxConfigDepth) break;
    for (const auto& child : *node) pending.emplace_back(&child, depth + 1);
  }
  return deepest;
}

const json& sectionOrEmpty(SectionReader& reader, const std::string& name) {
  static const json empty = json::object();
  return reader.has(name) ? reader.raw(name) : empty;
}

// The range a number (or each number of a list) must lie in; an end may be open or absent.
struct Bounds {
  std::optional<double> low, high;
  bool lowOpen = false, highOpen = false;

  bool admits(double value) const {
    if (low && (lowOpen ? value <= *low : value < *low)) return false;
    if (high && (highOpen ? value >= *high : value > *high)) return false;
    return true;
  }
  std::string text() const {
    std::ostringstream out;
    out.precision(6);
    if (low && high) out << "in " << (lowOpen ? "(" : "[") << *low << ", " << *high << (highOpen ? ")" : "]");
    else if (low) out << (lowOpen ? "> " : ">= ") << *low;
    else if (high) out << (highOpen ? "< " : "<= ") << *high;
    return out.str();
  }
};
Bounds anyValue() { return {}; }
Bounds atLeast(double low) { return {low, std::nullopt, false, false}; }
Bounds above(double low) { return {low, std::nullopt, true, false}; }
Bounds within(double low, double high) { return {low, high, false, false}; }      // [low, high]
Bounds withinBelow(double low, double high) { return {low, high, false, true}; }  // [low, high)
Bounds aboveWithin(double low, double high) { return {low, high, true, false}; }  // (low, high]

enum class Kind { Integer, Number, Boolean, Text, Choice, Numbers, Integers };

using Getter = std::function<json(const TrainConfig&)>;
using Setter = std::function<void(TrainConfig&, const json&)>;
struct Access {
  Getter get;
  Setter set;
};

// A member of TrainConfig, or of one of its sections, as a JSON value.
template <typename T>
Access member(T TrainConfig::*field) {
  return {[field](const TrainConfig& c) { return json(c.*field); },
          [field](TrainConfig& c, const json& value) { c.*field = value.get<T>(); }};
}
template <typename Section, typename T>
Access member(Section TrainConfig::*section, T Section::*field) {
  return {[section, field](const TrainConfig& c) { return json(c.*section.*field); },
          [section, field](TrainConfig& c, const json& value) { c.*section.*field = value.get<T>(); }};
}

// One key of the training document: its place, what it may hold and where it lives in TrainConfig.
// The table below is the one declaration of the keys TrainConfig reads and writes; the defaults are
// TrainConfig's member initialisers (TrainConfig.h), which a default-constructed config writes out.
struct Field {
  std::string section;  // "" for the top level
  std::string name;
  Kind kind;
  Access access;
  Bounds bounds{};                    // numbers, and each value of a list
  std::vector<std::string> choices{};  // Choice
  size_t count = 0;                   // lists: the number of values (0: any; Integers may also be empty)
  std::string note{};                 // what a bound's special value means, for the error message

  std::string key() const { return section.empty() ? name : section + "." + name; }
};

const std::vector<Field>& fields() {
  using C = TrainConfig;
  static const std::vector<Field> table = {
      {"", "data", Kind::Text, member(&C::data)},
      {"", "seed", Kind::Integer, member(&C::seed), atLeast(0)},
      {"", "threads", Kind::Integer, member(&C::threads), within(0, 1024), {}, 0, "(0: every core)"},
      {"", "batch_shards", Kind::Integer, member(&C::batchShards), within(0, 1024), {}, 0, "(0: automatic)"},
      {"", "device", Kind::Choice, member(&C::device), {}, {"auto", "cpu", "cuda"}},
      {"", "mixed_precision", Kind::Boolean, member(&C::mixedPrecision)},
      {"", "cpu_bf16", Kind::Boolean, member(&C::cpuBf16)},
      {"", "dtype", Kind::Choice,
       {[](const C& c) { return json(computeDtypeName(c.dtype)); },
        [](C& c, const json& v) { c.dtype = v == "float64" ? ComputeDtype::Float64 : ComputeDtype::Float32; }},
       {}, {"float32", "float64"}},
      {"", "targets", Kind::Choice,
       {[](const C& c) { return json(targetModeName(c.targets)); },
        [](C& c, const json& v) { c.targets = parseTargetMode(v.get<std::string>()); }},
       {}, {"regions", "labels"}},
      {"", "patch_size", Kind::Integers, member(&C::patchSize), within(1, 1024), {}, 3},
      {"", "batch_size", Kind::Integer, member(&C::batchSize), within(1, 1024)},
      {"", "epochs", Kind::Integer, member(&C::epochs), atLeast(1)},
      {"", "steps_per_epoch", Kind::Integer, member(&C::stepsPerEpoch), atLeast(1)},
      {"", "max_minutes", Kind::Number, member(&C::maxMinutes), atLeast(0), {}, 0, "(0: no budget)"},
      {"", "checkpoint_every_steps", Kind::Integer, member(&C::checkpointEverySteps), atLeast(0), {}, 0, "(0: at epoch ends)"},
      {"", "allow_non_finite", Kind::Boolean, member(&C::allowNonFinite)},
      {"", "init_weights", Kind::Text, member(&C::initWeights)},
      {"sampler", "foreground_fraction", Kind::Number, member(&C::sampler, &SamplerConfig::foregroundFraction), within(0, 1)},
      {"augmentation", "enabled", Kind::Boolean, member(&C::augmentation, &AugmentationConfig::enabled)},
      {"augmentation", "flip_probability", Kind::Number, member(&C::augmentation, &AugmentationConfig::flipProbability), within(0, 1)},
      {"augmentation", "rotate90_probability", Kind::Number, member(&C::augmentation, &AugmentationConfig::rotate90Probability),
       within(0, 1)},
      {"augmentation", "intensity_scale", Kind::Number, member(&C::augmentation, &AugmentationConfig::intensityScale),
       withinBelow(0, 1)},
      {"augmentation", "intensity_shift", Kind::Number, member(&C::augmentation, &AugmentationConfig::intensityShift), atLeast(0)},
      {"augmentation", "gamma_probability", Kind::Number, member(&C::augmentation, &AugmentationConfig::gammaProbability),
       within(0, 1)},
      {"augmentation", "gamma_range", Kind::Numbers, member(&C::augmentation, &AugmentationConfig::gammaRange), above(0), {}, 2},
      {"loss", "dice_weight", Kind::Number, member(&C::loss, &LossConfig::diceWeight), atLeast(0)},
      {"loss", "ce_weight", Kind::Number, member(&C::loss, &LossConfig::ceWeight), atLeast(0)},
      {"loss", "smooth", Kind::Number, member(&C::loss, &LossConfig::smooth), atLeast(0)},
      {"loss", "batch_dice", Kind::Boolean, member(&C::loss, &LossConfig::batchDice)},
      {"optimizer", "name", Kind::Choice, member(&C::optimizer, &OptimizerConfig::name), {}, {"sgd", "adam", "adamw"}},
      {"optimizer", "lr", Kind::Number, member(&C::optimizer, &OptimizerConfig::lr), aboveWithin(0, 10)},
      {"optimizer", "weight_decay", Kind::Number, member(&C::optimizer, &OptimizerConfig::weightDecay), atLeast(0)},
      {"optimizer", "momentum", Kind::Number, member(&C::optimizer, &OptimizerConfig::momentum), withinBelow(0, 1)},
      {"optimizer", "nesterov", Kind::Boolean, member(&C::optimizer, &OptimizerConfig::nesterov)},
      {"optimizer", "betas", Kind::Numbers, member(&C::optimizer, &OptimizerConfig::betas), withinBelow(0, 1), {}, 2},
      {"optimizer", "eps", Kind::Number, member(&C::optimizer, &OptimizerConfig::eps), above(0)},
      {"optimizer", "amsgrad", Kind::Boolean, member(&C::optimizer, &OptimizerConfig::amsgrad)},
      {"optimizer", "grad_clip", Kind::Number, member(&C::optimizer, &OptimizerConfig::gradClip), atLeast(0), {}, 0,
       "(0: no clipping)"},
      {"schedule", "name", Kind::Choice, member(&C::schedule, &ScheduleConfig::name), {}, {"poly", "cosine", "constant"}},
      {"schedule", "exponent", Kind::Number, member(&C::schedule, &ScheduleConfig::exponent), above(0)},
      {"schedule", "warmup_steps", Kind::Integer, member(&C::schedule, &ScheduleConfig::warmupSteps), atLeast(0)},
      {"schedule", "min_lr", Kind::Number, member(&C::schedule, &ScheduleConfig::minLr), atLeast(0)},
      {"validation", "cases", Kind::Integer, member(&C::validation, &ValidationConfig::cases), atLeast(0), {}, 0,
       "(0: use validation.fraction)"},
      {"validation", "fraction", Kind::Number, member(&C::validation, &ValidationConfig::fraction), withinBelow(0, 1)},
      {"validation", "shuffle", Kind::Boolean, member(&C::validation, &ValidationConfig::shuffle)},
      {"validation", "every_epochs", Kind::Integer, member(&C::validation, &ValidationConfig::everyEpochs), atLeast(1)},
      {"validation", "roi", Kind::Integers, member(&C::validation, &ValidationConfig::roi), within(1, 1024), {}, 3},
      {"validation", "overlap", Kind::Number, member(&C::validation, &ValidationConfig::overlap), withinBelow(0, 1)},
      {"validation", "mirror", Kind::Boolean, member(&C::validation, &ValidationConfig::mirror)},
      {"loader", "workers", Kind::Integer, member(&C::loader, &LoaderConfig::workers), within(0, 64), {}, 0,
       "(0: batches prepared in the training thread)"},
      {"loader", "prefetch", Kind::Integer, member(&C::loader, &LoaderConfig::prefetch), within(1, 64)},
  };
  return table;
}

// The network section is UNetConfig's (it reads and checks its keys), laid over the config's default.
const std::vector<std::string> kNetworkKeys = {"in_channels", "out_channels", "depth", "base_filters", "max_filters",
                                               "norm", "leaky_slope", "residual", "deep_supervision"};

// The field's value from its section, its type and bounds checked.
json readField(SectionReader& reader, const Field& field) {
  const std::string& name = field.name;
  json value;
  switch (field.kind) {
    case Kind::Integer: value = reader.integer(name, 0); break;
    case Kind::Number: value = reader.number(name, 0); break;
    case Kind::Boolean: value = reader.boolean(name, false); break;
    case Kind::Text: value = reader.text(name, ""); break;
    case Kind::Choice: value = reader.choice(name, "", field.choices); break;
    case Kind::Numbers: value = reader.numbers(name, {}, field.count); break;
    case Kind::Integers: value = reader.integers(name, {}, field.count); break;
  }
  const bool list = value.is_array();
  for (const json& number : list ? value : json::array({value})) {
    if (!number.is_number() || field.bounds.admits(number.get<double>())) continue;
    throw InputError("training config: " + field.key() + (list ? " values" : "") + " must be " + field.bounds.text() +
                     (field.note.empty() ? "" : " " + field.note) + ", got " + value.dump());
  }
  return value;
}

// The network section over the config's default network (deep supervision on), checked by UNetConfig.
void readNetwork(SectionReader& top, TrainConfig& c) {
  const json& section = sectionOrEmpty(top, "network");
  SectionReader r(section, "network");
  c.inChannelsSet = r.has("in_channels");
  c.outChannelsSet = r.has("out_channels");
  json merged = c.network.toJson();
  for (const auto& key : kNetworkKeys)
    if (r.has(key)) merged[key] = r.raw(key);
  r.rejectUnknownKeys();
  try {
    c.network = UNetConfig::fromJson(merged);
  } catch (const InputError& error) {
    throw InputError(std::string("training config: ") + error.what());
  }
}

std::vector<std::string> textList(SectionReader& top, const std::string& name) {
  try {
    return top.raw(name).get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception&) {
    throw InputError("training config: " + name + " must be a list of strings");
  }
}

// Resolved fields, present in config.json and checkpoints.
void readResolved(SectionReader& top, TrainConfig& c) {
  if (top.has("class_names")) c.classNames = textList(top, "class_names");
  if (top.has("modalities")) c.modalities = textList(top, "modalities");
  if (!top.has("regions")) return;
  const auto& regions = top.raw("regions");
  require(regions.is_array(), "regions must be a list of {name, labels}");
  for (const auto& item : regions) {
    SectionReader r(item, "regions[]");
    RegionDefinition region;
    region.name = r.text("name", "");
    require(!region.name.empty(), "every region needs a name");
    if (r.has("labels"))
      for (int64_t value : r.integers("labels", {}, 0, 0, 255)) region.labels.push_back(static_cast<int>(value));
    require(!region.labels.empty(), "region \"" + region.name + "\" needs a non-empty labels list");
    r.rejectUnknownKeys();
    c.regions.push_back(region);
  }
}

// What one key's bounds cannot say: rules between keys.
void checkAcrossKeys(const TrainConfig& c) {
  const auto& o = c.optimizer;
  require(!(o.nesterov && o.name == "sgd" && o.momentum == 0), "optimizer.nesterov needs momentum > 0");
  require(c.loss.diceWeight + c.loss.ceWeight > 0, "loss weights must not both be 0");
  require(c.augmentation.gammaRange[0] <= c.augmentation.gammaRange[1],
          "augmentation.gamma_range must be [low, high] with low <= high");
  require(c.schedule.minLr <= o.lr, "schedule.min_lr must be in [0, optimizer.lr]");
  for (int64_t edge : c.patchSize)
    require(edge % c.network.sizeDivisor() == 0,
            "patch_size edges must be multiples of 2^(depth-1) = " + std::to_string(c.network.sizeDivisor()));
}

}  // namespace

TrainConfig loadTrainConfig(const std::filesystem::path& file, const std::vector<std::string>& overrides) {
  auto document = readConfigDocument(file);
  if (document.is_object()) document.erase("search");  // a search config trains its base configuration
  for (const auto& assignment : overrides) applyOverride(document, assignment);
  try {
    return TrainConfig::fromJson(document);
  } catch (const InputError& error) {
    throw InputError(file.string() + ": " + error.what());
  }
}

const char* computeDtypeName(ComputeDtype dtype) { return dtype == ComputeDtype::Float64 ? "float64" : "float32"; }

c10::ScalarType TrainConfig::scalarType() const {
  return dtype == ComputeDtype::Float64 ? c10::ScalarType::Double : c10::ScalarType::Float;
}

TrainConfig TrainConfig::fromJson(const nlohmann::json& document) {
  require(nestingDepth(document) <= kMaxConfigDepth,
          "the document is nested deeper than " + std::to_string(kMaxConfigDepth) + " levels");
  TrainConfig c;
  SectionReader top(document, "");
  std::vector<std::string> sections;  // in table order
  for (const Field& field : fields())
    if (!field.section.empty() && std::find(sections.begin(), sections.end(), field.section) == sections.end())
      sections.push_back(field.section);
  for (const Field& field : fields())
    if (field.section.empty() && top.has(field.name)) field.access.set(c, readField(top, field));
  readNetwork(top, c);
  {
    const json& section = sectionOrEmpty(top, "preprocessing");
    SectionReader r(section, "preprocessing");
    r.rejectUnknownKeys({"crop_to_foreground", "zscore_over_brain", "target_spacing"});
    c.preprocessing = PreprocessingConfig::fromJson(section);
  }
  for (const auto& name : sections) {
    SectionReader r(sectionOrEmpty(top, name), name);
    for (const Field& field : fields())
      if (field.section == name && r.has(field.name)) field.access.set(c, readField(r, field));
    r.rejectUnknownKeys();
  }
  readResolved(top, c);
  top.rejectUnknownKeys();
  checkAcrossKeys(c);
  return c;
}

nlohmann::json TrainConfig::toJson() const {
  json document = json::object();
  for (const Field& field : fields()) {
    json& place = field.section.empty() ? document : document[field.section];
    place[field.name] = field.access.get(*this);
  }
  json networkSection = network.toJson();
  if (!inChannelsSet) networkSection.erase("in_channels");
  if (!outChannelsSet) networkSection.erase("out_channels");
  document["network"] = networkSection;
  document["preprocessing"] = preprocessing.toJson();
  if (!classNames.empty()) document["class_names"] = classNames;
  if (!modalities.empty()) document["modalities"] = modalities;
  if (!regions.empty()) {
    json regionList = json::array();
    for (const auto& r : regions) regionList.push_back({{"name", r.name}, {"labels", r.labels}});
    document["regions"] = regionList;
  }
  return document;
}

ModelDescription TrainConfig::modelDescription() const {
  ModelDescription d;
  d.network = network;
  d.preprocessing = preprocessing;
  d.targets = targets;
  d.classNames = classNames;
  if (targets == TargetMode::Regions)
    for (const auto& r : regions) d.regionLabels.push_back(r.labels);
  if (!patchSize.empty()) d.patchSize = patchSize;
  d.modalities = modalities;
  return d;
}

void resolveWithDataset(TrainConfig& config, const Dataset& dataset) {
  const std::string source = dataset.jsonPath().string();
  // Input channels: one per modality.
  if (!dataset.modalities.empty()) {
    const auto channels = static_cast<int64_t>(dataset.modalities.size());
    if (config.inChannelsSet && config.network.inChannels != channels)
      throw InputError("training config: network.in_channels is " + std::to_string(config.network.inChannels) + " but " +
                       source + " lists " + std::to_string(channels) + " modalities; remove the key to derive it");
    config.network.inChannels = channels;
    config.modalities = dataset.modalities;
  }
  config.inChannelsSet = true;
  // Outputs: label values 0..K-1, or regions.
  std::vector<int> values;
  for (const auto& [value, name] : dataset.labels) values.push_back(value);
  if (config.targets == TargetMode::Labels) {
    config.classNames.clear();
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] != static_cast<int>(i))
        throw InputError(source + ": labels must be 0..K-1 without gaps for targets: labels (found label " +
                         std::to_string(values[i]) + " at position " + std::to_string(i) + "); use targets: regions");
      config.classNames.push_back(dataset.labels.at(values[i]));
    }
    if (config.classNames.empty()) config.classNames = {"background", "edema", "non-enhancing", "enhancing"};
  } else {
    config.regions.clear();
    for (const auto& [name, labels] : dataset.regions) config.regions.push_back({name, labels});
    if (config.regions.empty()) {
      // BraTS convention: whole tumour, tumour core, enhancing tumour.
      config.regions = {{"WT", {1, 2, 3}}, {"TC", {2, 3}}, {"ET", {3}}};
    } else {
      std::stable_sort(config.regions.begin(), config.regions.end(),
                       [](const auto& a, const auto& b) { return a.labels.size() > b.labels.size(); });
    }
    config.classNames.clear();
    for (const auto& r : config.regions) config.classNames.push_back(r.name);
  }
  const auto outputs = static_cast<int64_t>(config.classNames.size());
  if (config.outChannelsSet && config.network.outChannels != outputs)
    throw InputError("training config: network.out_channels is " + std::to_string(config.network.outChannels) +
                     " but the data set gives " + std::to_string(outputs) + " " +
                     (config.targets == TargetMode::Labels ? "classes" : "regions") + "; remove the key to derive it");
  config.network.outChannels = outputs;
  config.outChannelsSet = true;
}

std::array<int64_t, 3> medianShape(const std::vector<std::array<int64_t, 3>>& caseShapes) {
  std::array<int64_t, 3> median{0, 0, 0};
  if (caseShapes.empty()) return median;
  for (size_t axis = 0; axis < 3; ++axis) {
    std::vector<int64_t> edges;
    for (const auto& shape : caseShapes) edges.push_back(shape[axis]);
    std::nth_element(edges.begin(), edges.begin() + static_cast<long>(edges.size() / 2), edges.end());
    median[axis] = edges[edges.size() / 2];
  }
  return median;
}

void resolvePatchSize(TrainConfig& config, const std::vector<std::array<int64_t, 3>>& caseShapes) {
  if (!config.patchSize.empty() || caseShapes.empty()) return;
  const int64_t divisor = config.network.sizeDivisor();
  const std::array<int64_t, 3> medians = medianShape(caseShapes);
  config.patchSize.clear();
  for (size_t axis = 0; axis < 3; ++axis) {
    const int64_t median = medians[axis];
    // Round up so one patch covers a median case, but never beyond 128 (memory).
    int64_t edge = (median + divisor - 1) / divisor * divisor;
    edge = std::min<int64_t>(edge, std::max<int64_t>(divisor, 128 / divisor * divisor));
    config.patchSize.push_back(std::max(edge, divisor));
  }
}

CaseSplit splitCases(size_t caseCount, const TrainConfig& config) {
  std::vector<size_t> order(caseCount);
  std::iota(order.begin(), order.end(), size_t{0});
  if (config.validation.shuffle) {
    std::mt19937_64 rng(config.seed * 0x9E3779B97F4A7C15ull + 17);
    for (size_t i = order.size(); i > 1; --i) {
      std::uniform_int_distribution<size_t> pick(0, i - 1);
      std::swap(order[i - 1], order[pick(rng)]);
    }
  }
  size_t validationCount = config.validation.cases > 0
                               ? static_cast<size_t>(config.validation.cases)
                               : static_cast<size_t>(static_cast<double>(caseCount) * config.validation.fraction + 0.5);
  if (caseCount < 2 && validationCount > 0)
    throw InputError("training needs at least 2 labelled cases to hold some out for validation; found " +
                     std::to_string(caseCount) + " (set validation.fraction: 0 to train without validation)");
  if (validationCount >= caseCount)
    throw InputError("validation takes " + std::to_string(validationCount) + " of " + std::to_string(caseCount) +
                     " cases, leaving none to train on; lower validation.cases or validation.fraction");
  CaseSplit split;
  split.train.assign(order.begin(), order.end() - static_cast<long>(validationCount));
  split.validation.assign(order.end() - static_cast<long>(validationCount), order.end());
  std::sort(split.train.begin(), split.train.end());
  std::sort(split.validation.begin(), split.validation.end());
  return split;
}

}  // namespace medseg
