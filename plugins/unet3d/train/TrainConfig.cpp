#include "plugins/unet3d/train/TrainConfig.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
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
  c.data = top.text("data", c.data);
  const int64_t seed = top.integer("seed", static_cast<int64_t>(c.seed));
  require(seed >= 0, "seed must be >= 0");
  c.seed = static_cast<uint64_t>(seed);
  c.threads = top.integer("threads", c.threads);
  require(c.threads >= 0 && c.threads <= 1024, "threads must be between 0 (all cores) and 1024");
  c.batchShards = top.integer("batch_shards", c.batchShards);
  require(c.batchShards >= 0 && c.batchShards <= 1024, "batch_shards must be between 0 (automatic) and 1024");
  c.device = top.choice("device", c.device, {"auto", "cpu", "cuda"});
  c.mixedPrecision = top.boolean("mixed_precision", c.mixedPrecision);
  c.cpuBf16 = top.boolean("cpu_bf16", c.cpuBf16);
  c.dtype = top.choice("dtype", computeDtypeName(c.dtype), {"float32", "float64"}) == "float64" ? ComputeDtype::Float64
                                                                                                : ComputeDtype::Float32;
  c.targets = parseTargetMode(top.choice("targets", targetModeName(c.targets), {"regions", "labels"}));
  c.patchSize = top.integers("patch_size", c.patchSize, 3);
  for (int64_t edge : c.patchSize) require(edge >= 1 && edge <= 1024, "patch_size edges must be in 1..1024");
  c.batchSize = top.integer("batch_size", c.batchSize);
  require(c.batchSize >= 1 && c.batchSize <= 1024, "batch_size must be between 1 and 1024");
  c.epochs = top.integer("epochs", c.epochs);
  require(c.epochs >= 1, "epochs must be >= 1");
  c.stepsPerEpoch = top.integer("steps_per_epoch", c.stepsPerEpoch);
  require(c.stepsPerEpoch >= 1, "steps_per_epoch must be >= 1");
  c.maxMinutes = top.number("max_minutes", c.maxMinutes);
  require(c.maxMinutes >= 0, "max_minutes must be >= 0 (0 = no budget)");
  c.checkpointEverySteps = top.integer("checkpoint_every_steps", c.checkpointEverySteps);
  require(c.checkpointEverySteps >= 0, "checkpoint_every_steps must be >= 0");
  c.allowNonFinite = top.boolean("allow_non_finite", c.allowNonFinite);
  c.initWeights = top.text("init_weights", c.initWeights);

  {
    const json& section = sectionOrEmpty(top, "network");
    SectionReader r(section, "network");
    c.inChannelsSet = r.has("in_channels");
    c.outChannelsSet = r.has("out_channels");
    c.network.inChannels = r.integer("in_channels", c.network.inChannels);
    c.network.outChannels = r.integer("out_channels", c.network.outChannels);
    c.network.depth = r.integer("depth", c.network.depth);
    c.network.baseFilters = r.integer("base_filters", c.network.baseFilters);
    c.network.maxFilters = r.integer("max_filters", c.network.maxFilters);
    c.network.norm = r.choice("norm", c.network.norm, {"instance", "batch", "group"});
    c.network.leakySlope = r.number("leaky_slope", c.network.leakySlope);
    c.network.residual = r.boolean("residual", c.network.residual);
    c.network.deepSupervision = r.boolean("deep_supervision", c.network.deepSupervision);
    r.rejectUnknownKeys();
    try {
      c.network = UNetConfig::fromJson(c.network.toJson());
    } catch (const InputError& error) {
      throw InputError(std::string("training config: ") + error.what());
    }
  }
  {
    const json& section = sectionOrEmpty(top, "preprocessing");
    SectionReader r(section, "preprocessing");
    r.rejectUnknownKeys({"crop_to_foreground", "zscore_over_brain", "target_spacing"});
    c.preprocessing = PreprocessingConfig::fromJson(section);
  }
  {
    SectionReader r(sectionOrEmpty(top, "sampler"), "sampler");
    c.sampler.foregroundFraction = r.number("foreground_fraction", c.sampler.foregroundFraction);
    require(c.sampler.foregroundFraction >= 0 && c.sampler.foregroundFraction <= 1,
            "sampler.foreground_fraction must be in [0, 1]");
    r.rejectUnknownKeys();
  }
  {
    auto& a = c.augmentation;
    SectionReader r(sectionOrEmpty(top, "augmentation"), "augmentation");
    a.enabled = r.boolean("enabled", a.enabled);
    a.flipProbability = r.number("flip_probability", a.flipProbability);
    a.rotate90Probability = r.number("rotate90_probability", a.rotate90Probability);
    a.intensityScale = r.number("intensity_scale", a.intensityScale);
    a.intensityShift = r.number("intensity_shift", a.intensityShift);
    a.gammaProbability = r.number("gamma_probability", a.gammaProbability);
    const auto gamma = r.numbers("gamma_range", {a.gammaRange[0], a.gammaRange[1]}, 2);
    a.gammaRange = {gamma[0], gamma[1]};
    r.rejectUnknownKeys();
    for (double p : {a.flipProbability, a.rotate90Probability, a.gammaProbability})
      require(p >= 0 && p <= 1, "augmentation probabilities must be in [0, 1]");
    require(a.intensityScale >= 0 && a.intensityScale < 1, "augmentation.intensity_scale must be in [0, 1)");
    require(a.intensityShift >= 0, "augmentation.intensity_shift must be >= 0");
    require(a.gammaRange[0] > 0 && a.gammaRange[0] <= a.gammaRange[1],
            "augmentation.gamma_range must be [low, high] with 0 < low <= high");
  }
  {
    auto& l = c.loss;
    SectionReader r(sectionOrEmpty(top, "loss"), "loss");
    l.diceWeight = r.number("dice_weight", l.diceWeight);
    l.ceWeight = r.number("ce_weight", l.ceWeight);
    l.smooth = r.number("smooth", l.smooth);
    l.batchDice = r.boolean("batch_dice", l.batchDice);
    r.rejectUnknownKeys();
    require(l.diceWeight >= 0 && l.ceWeight >= 0 && l.diceWeight + l.ceWeight > 0,
            "loss weights must be >= 0 and not both 0");
    require(l.smooth >= 0, "loss.smooth must be >= 0");
  }
  {
    auto& o = c.optimizer;
    SectionReader r(sectionOrEmpty(top, "optimizer"), "optimizer");
    o.name = r.choice("name", o.name, {"sgd", "adam", "adamw"});
    o.lr = r.number("lr", o.lr);
    o.weightDecay = r.number("weight_decay", o.weightDecay);
    o.momentum = r.number("momentum", o.momentum);
    o.nesterov = r.boolean("nesterov", o.nesterov);
    const auto betas = r.numbers("betas", {o.betas[0], o.betas[1]}, 2);
    o.betas = {betas[0], betas[1]};
    o.eps = r.number("eps", o.eps);
    o.amsgrad = r.boolean("amsgrad", o.amsgrad);
    o.gradClip = r.number("grad_clip", o.gradClip);
    r.rejectUnknownKeys();
    require(o.lr > 0 && o.lr < 10, "optimizer.lr must be in (0, 10)");
    require(o.weightDecay >= 0, "optimizer.weight_decay must be >= 0");
    require(o.momentum >= 0 && o.momentum < 1, "optimizer.momentum must be in [0, 1)");
    require(!(o.nesterov && o.name == "sgd" && o.momentum == 0), "optimizer.nesterov needs momentum > 0");
    require(o.betas[0] >= 0 && o.betas[0] < 1 && o.betas[1] >= 0 && o.betas[1] < 1, "optimizer.betas must be in [0, 1)");
    require(o.eps > 0, "optimizer.eps must be > 0");
    require(o.gradClip >= 0, "optimizer.grad_clip must be >= 0 (0 = no clipping)");
  }
  {
    auto& s = c.schedule;
    SectionReader r(sectionOrEmpty(top, "schedule"), "schedule");
    s.name = r.choice("name", s.name, {"poly", "cosine", "constant"});
    s.exponent = r.number("exponent", s.exponent);
    s.warmupSteps = r.integer("warmup_steps", s.warmupSteps);
    s.minLr = r.number("min_lr", s.minLr);
    r.rejectUnknownKeys();
    require(s.exponent > 0, "schedule.exponent must be > 0");
    require(s.warmupSteps >= 0, "schedule.warmup_steps must be >= 0");
    require(s.minLr >= 0 && s.minLr <= c.optimizer.lr, "schedule.min_lr must be in [0, optimizer.lr]");
  }
  {
    auto& v = c.validation;
    SectionReader r(sectionOrEmpty(top, "validation"), "validation");
    v.cases = r.integer("cases", v.cases);
    v.fraction = r.number("fraction", v.fraction);
    v.shuffle = r.boolean("shuffle", v.shuffle);
    v.everyEpochs = r.integer("every_epochs", v.everyEpochs);
    v.roi = r.integers("roi", v.roi, 3);
    v.overlap = r.number("overlap", v.overlap);
    v.mirror = r.boolean("mirror", v.mirror);
    r.rejectUnknownKeys();
    require(v.cases >= 0, "validation.cases must be >= 0 (0 = use validation.fraction)");
    require(v.fraction >= 0 && v.fraction < 1, "validation.fraction must be in [0, 1)");
    require(v.everyEpochs >= 1, "validation.every_epochs must be >= 1");
    require(v.overlap >= 0 && v.overlap < 1, "validation.overlap must be in [0, 1)");
    for (int64_t edge : v.roi) require(edge >= 1, "validation.roi edges must be >= 1");
  }
  {
    auto& l = c.loader;
    SectionReader r(sectionOrEmpty(top, "loader"), "loader");
    l.workers = r.integer("workers", l.workers);
    l.prefetch = r.integer("prefetch", l.prefetch);
    r.rejectUnknownKeys();
    require(l.workers >= 0 && l.workers <= 64, "loader.workers must be in 0..64 (0 = prepare batches in the training thread)");
    require(l.prefetch >= 1 && l.prefetch <= 64, "loader.prefetch must be in 1..64");
  }
  // Resolved fields, present in config.json and checkpoints.
  if (top.has("class_names")) {
    try {
      c.classNames = top.raw("class_names").get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception&) {
      throw InputError("training config: class_names must be a list of strings");
    }
  }
  if (top.has("modalities")) {
    try {
      c.modalities = top.raw("modalities").get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception&) {
      throw InputError("training config: modalities must be a list of strings");
    }
  }
  if (top.has("regions")) {
    const auto& regions = top.raw("regions");
    require(regions.is_array(), "regions must be a list of {name, labels}");
    for (const auto& item : regions) {
      SectionReader r(item, "regions[]");
      RegionDefinition region;
      region.name = r.text("name", "");
      require(!region.name.empty(), "every region needs a name");
      if (r.has("labels"))
        for (int64_t value : r.integers("labels", {}, 0, 0, 255))
          region.labels.push_back(static_cast<int>(value));
      require(!region.labels.empty(), "region \"" + region.name + "\" needs a non-empty labels list");
      r.rejectUnknownKeys();
      c.regions.push_back(region);
    }
  }
  top.rejectUnknownKeys();
  if (!c.patchSize.empty())
    for (int64_t edge : c.patchSize)
      require(edge % c.network.sizeDivisor() == 0,
              "patch_size edges must be multiples of 2^(depth-1) = " + std::to_string(c.network.sizeDivisor()));
  return c;
}

nlohmann::json TrainConfig::toJson() const {
  json network = this->network.toJson();
  if (!inChannelsSet) network.erase("in_channels");
  if (!outChannelsSet) network.erase("out_channels");
  json regionList = json::array();
  for (const auto& r : regions) regionList.push_back({{"name", r.name}, {"labels", r.labels}});
  json document = {
      {"data", data},
      {"seed", seed},
      {"threads", threads},
      {"batch_shards", batchShards},
      {"device", device},
      {"mixed_precision", mixedPrecision},
      {"cpu_bf16", cpuBf16},
      {"dtype", computeDtypeName(dtype)},
      {"targets", targetModeName(targets)},
      {"patch_size", patchSize},
      {"batch_size", batchSize},
      {"epochs", epochs},
      {"steps_per_epoch", stepsPerEpoch},
      {"max_minutes", maxMinutes},
      {"checkpoint_every_steps", checkpointEverySteps},
      {"allow_non_finite", allowNonFinite},
      {"init_weights", initWeights},
      {"network", network},
      {"preprocessing", preprocessing.toJson()},
      {"sampler", {{"foreground_fraction", sampler.foregroundFraction}}},
      {"augmentation",
       {{"enabled", augmentation.enabled},
        {"flip_probability", augmentation.flipProbability},
        {"rotate90_probability", augmentation.rotate90Probability},
        {"intensity_scale", augmentation.intensityScale},
        {"intensity_shift", augmentation.intensityShift},
        {"gamma_probability", augmentation.gammaProbability},
        {"gamma_range", augmentation.gammaRange}}},
      {"loss",
       {{"dice_weight", loss.diceWeight}, {"ce_weight", loss.ceWeight}, {"smooth", loss.smooth}, {"batch_dice", loss.batchDice}}},
      {"optimizer",
       {{"name", optimizer.name},
        {"lr", optimizer.lr},
        {"weight_decay", optimizer.weightDecay},
        {"momentum", optimizer.momentum},
        {"nesterov", optimizer.nesterov},
        {"betas", optimizer.betas},
        {"eps", optimizer.eps},
        {"amsgrad", optimizer.amsgrad},
        {"grad_clip", optimizer.gradClip}}},
      {"schedule",
       {{"name", schedule.name}, {"exponent", schedule.exponent}, {"warmup_steps", schedule.warmupSteps}, {"min_lr", schedule.minLr}}},
      {"validation",
       {{"cases", validation.cases},
        {"fraction", validation.fraction},
        {"shuffle", validation.shuffle},
        {"every_epochs", validation.everyEpochs},
        {"roi", validation.roi},
        {"overlap", validation.overlap},
        {"mirror", validation.mirror}}},
      {"loader", {{"workers", loader.workers}, {"prefetch", loader.prefetch}}}};
  if (!classNames.empty()) document["class_names"] = classNames;
  if (!modalities.empty()) document["modalities"] = modalities;
  if (!regions.empty()) document["regions"] = regionList;
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
