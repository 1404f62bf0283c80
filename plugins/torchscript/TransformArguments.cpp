#include "plugins/torchscript/TransformArguments.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/util/Interrupt.h"
#include "core/util/Text.h"
#include "plugins/torchscript/ConfigReferences.h"

namespace medseg::torchscript {
namespace {

using nlohmann::json;

enum class Kind { Flag, Number, Integer, Numbers, Integers, Text, Keys, Dtype, Any };
enum class Use { Read, Inert, Default };

struct Rule {
  std::string name;
  Kind kind = Kind::Any;
  Use use = Use::Inert;
  json fallback;                 // MONAI's default
  bool nullable = false;         // null is a value MONAI takes (None)
  bool perKey = false;           // may be a list with one entry per key
  bool required = false;         // MONAI has no default for it
  bool strict = false;           // Flag: MONAI hands it to torch, which refuses a string
  std::vector<json> choices;     // read: the values MedSeg runs; default: the values that are the default

  Rule orNull() const { Rule r = *this; r.nullable = true; return r; }
  Rule byKey() const { Rule r = *this; r.perKey = true; return r; }
  Rule among(std::vector<json> values) const { Rule r = *this; r.choices = std::move(values); return r; }
  Rule needed() const { Rule r = *this; r.required = true; return r; }
  Rule strictFlag() const { Rule r = *this; r.strict = true; return r; }
};

Rule rule(const char* name, Kind kind, Use use, json fallback) {
  Rule r;
  r.name = name;
  r.kind = kind;
  r.use = use;
  r.fallback = std::move(fallback);
  return r;
}
Rule read(const char* name, Kind kind, json fallback = nullptr) { return rule(name, kind, Use::Read, std::move(fallback)); }
Rule inert(const char* name) { return rule(name, Kind::Any, Use::Inert, nullptr); }
// Only MONAI's default runs: `accepted` are the spellings of it (the default itself first).
Rule onlyDefault(const char* name, std::vector<json> accepted) {
  Rule r = rule(name, Kind::Any, Use::Default, accepted.empty() ? json() : accepted.front());
  r.choices = std::move(accepted);
  return r;
}
// A function-valued argument (a Python callable): only its absence (None) runs.
Rule noFunction(const char* name) { return onlyDefault(name, {nullptr}); }

std::vector<Rule> common(std::vector<Rule> rules) {
  rules.push_back(read("keys", Kind::Keys));
  rules.push_back(inert("allow_missing_keys"));
  // ConfigComponent's own keys: descriptions and dependencies do nothing here; "_mode_" other than
  // "default" calls the component differently.
  rules.push_back(inert("_desc_"));
  rules.push_back(inert("_requires_"));
  rules.push_back(inert("_disabled_"));
  rules.push_back(onlyDefault("_mode_", {"default"}));
  return rules;
}

const std::vector<json> kFloat32{nullptr, "float32"};
const std::vector<json> kFloats{nullptr, "float32", "float64"};
// MONAI's Pad modes (torch's and numpy's); MedSeg pads with the first six (BundleTransforms.h).
const std::vector<json> kPadModes{"constant", "edge",    "replicate", "reflect", "circular",    "wrap",
                                  "minimum",  "maximum", "mean",      "median",  "symmetric",   "linear_ramp",
                                  "empty"};
const json kDefaultLabels = json::array({json::array({"L", "R"}), json::array({"P", "A"}), json::array({"I", "S"})});

// SlidingWindowInferer's arguments, which SliceInferer shares.
std::vector<Rule> slidingWindowRules(std::vector<Rule> rules) {
  for (Rule r : {read("roi_size", Kind::Integers).needed(), read("sw_batch_size", Kind::Integer, 1),
                 read("overlap", Kind::Numbers, 0.25), read("mode", Kind::Text, "constant").among({"constant", "gaussian"}),
                 read("sigma_scale", Kind::Numbers, 0.125),
                 read("padding_mode", Kind::Text, "constant").among({"constant", "reflect", "replicate", "circular"}),
                 read("cval", Kind::Number, 0.0), inert("sw_device"), inert("device"), inert("progress"),
                 inert("cache_roi_weight_map"), inert("cpu_thresh"), inert("buffer_steps"), inert("buffer_dim"),
                 onlyDefault("with_coord", {false})})
    rules.push_back(r);
  return rules;
}

std::map<std::string, std::vector<Rule>> makeTable() {
  std::map<std::string, std::vector<Rule>> t;
  // LoadImaged: MedSeg reads the image itself, as ITK and nibabel do (voxels x, y, z; affine in RAS),
  // in float32; metadata keys and the channel-first switch change nothing here.
  t["LoadImaged"] = common({read("reader", Kind::Text).orNull().among({nullptr, "ITKReader", "NibabelReader",
                                                                        "monai.data.ITKReader", "monai.data.NibabelReader"}),
                            read("dtype", Kind::Dtype, "float32").orNull().among(kFloats), inert("meta_keys"),
                            inert("meta_key_postfix"), inert("overwriting"), inert("image_only"),
                            inert("ensure_channel_first"), inert("simple_keys"), inert("prune_meta_pattern"),
                            inert("prune_meta_sep"), inert("expanduser")});
  t["EnsureChannelFirstd"] =
      common({inert("strict_check"), read("channel_dim", Kind::Any).orNull().among({nullptr, "no_channel", -1, 3})});
  t["EnsureTyped"] = common({inert("data_type"), read("dtype", Kind::Dtype).orNull().byKey().among(kFloat32),
                             inert("device"), inert("wrap_sequence"), inert("track_meta")});
  t["ToTensord"] = common({read("dtype", Kind::Dtype).orNull().among(kFloat32), inert("device"), inert("wrap_sequence"),
                           inert("track_meta")});
  t["Orientationd"] = common({read("axcodes", Kind::Text).orNull(), read("as_closest_canonical", Kind::Flag, false),
                              onlyDefault("labels", {kDefaultLabels, nullptr}), onlyDefault("lazy", {false})});
  t["Spacingd"] = common(
      {read("pixdim", Kind::Numbers).needed(), read("diagonal", Kind::Flag, false),
       read("mode", Kind::Text, "bilinear").byKey().among({"bilinear", "nearest"}),
       read("padding_mode", Kind::Text, "border").byKey().among({"zeros", "border", "reflection"}),
       read("align_corners", Kind::Flag, false).byKey().strictFlag(), read("dtype", Kind::Dtype, "float64").orNull().byKey().among(kFloats),
       read("scale_extent", Kind::Flag, false), onlyDefault("recompute_affine", {false}),
       read("min_pixdim", Kind::Numbers).orNull(), read("max_pixdim", Kind::Numbers).orNull(),
       inert("ensure_same_shape"), onlyDefault("lazy", {false})});
  t["ScaleIntensityRanged"] = common({read("a_min", Kind::Number).needed(), read("a_max", Kind::Number).needed(),
                                      read("b_min", Kind::Number).orNull(), read("b_max", Kind::Number).orNull(),
                                      read("clip", Kind::Flag, false),
                                      read("dtype", Kind::Dtype, "float32").orNull().among(kFloat32)});
  t["ScaleIntensityd"] = common({read("minv", Kind::Number, 0.0).orNull(), read("maxv", Kind::Number, 1.0).orNull(),
                                 read("factor", Kind::Number).orNull(), read("channel_wise", Kind::Flag, false),
                                 read("dtype", Kind::Dtype, "float32").orNull().among(kFloat32)});
  t["NormalizeIntensityd"] = common({read("subtrahend", Kind::Numbers).orNull(), read("divisor", Kind::Numbers).orNull(),
                                     read("nonzero", Kind::Flag, false), read("channel_wise", Kind::Flag, false),
                                     read("dtype", Kind::Dtype, "float32").orNull().among(kFloat32)});
  t["CropForegroundd"] = common({read("source_key", Kind::Text).needed(), noFunction("select_fn"),
                                 read("channel_indices", Kind::Integers).orNull(), read("margin", Kind::Integers, 0),
                                 read("allow_smaller", Kind::Flag, true), read("k_divisible", Kind::Integers, 1),
                                 read("mode", Kind::Text, "constant").byKey().among(kPadModes),
                                 read("value", Kind::Number, 0.0), inert("start_coord_key"), inert("end_coord_key"),
                                 onlyDefault("lazy", {false})});
  t["CastToTyped"] = common({read("dtype", Kind::Dtype, "float32").byKey()});
  t["Compose"] = common({read("transforms", Kind::Any), inert("map_items"), inert("unpack_items"), inert("log_stats"),
                         onlyDefault("lazy", {false, nullptr}), onlyDefault("overrides", {nullptr})});
  t["SimpleInferer"] = common({});
  t["SliceInferer"] = common(slidingWindowRules({read("spatial_dim", Kind::Integer, 0).among({0, 1, 2})}));
  // Buffers, devices, caches and progress bars move data around; they do not change the values.
  t["SlidingWindowInferer"] = common(slidingWindowRules({}));
  t["Activationsd"] = common({read("sigmoid", Kind::Flag, false).byKey(), read("softmax", Kind::Flag, false).byKey(),
                              noFunction("other"), read("dim", Kind::Integer, 0).among({0})});
  t["AsDiscreted"] = common({read("argmax", Kind::Flag, false).byKey(), read("to_onehot", Kind::Integer).orNull().byKey(),
                             read("threshold", Kind::Number).orNull().byKey(),
                             read("rounding", Kind::Text).orNull().byKey().among({nullptr, "torchrounding"}),
                             read("dim", Kind::Integer, 0).among({0}), onlyDefault("keepdim", {true}), inert("dtype")});
  t["KeepLargestConnectedComponentd"] =
      common({read("applied_labels", Kind::Integers).orNull(), read("is_onehot", Kind::Flag).orNull(),
              read("independent", Kind::Flag, true), read("connectivity", Kind::Integer).orNull().among({nullptr, 1, 2, 3}),
              read("num_components", Kind::Integer, 1)});
  t["SqueezeDimd"] = common({read("dim", Kind::Integer, 0).orNull(), inert("update_meta")});
  // func is Python: only the zoo's published lambdas run (BundleLambdas.h); inv_func only serves an
  // inverse MedSeg never runs; overwrite other than true writes the result to another key.
  t["Lambdad"] = common({read("func", Kind::Any).needed(), inert("inv_func"), inert("track_meta"),
                         onlyDefault("overwrite", {true})});
  t["Invertd"] = common({read("transform", Kind::Any).needed(), read("orig_keys", Kind::Keys).orNull(), inert("meta_keys"),
                         inert("orig_meta_keys"), inert("meta_key_postfix"), read("nearest_interp", Kind::Flag, true).byKey(),
                         inert("to_tensor"), inert("device"), noFunction("post_func")});
  // Where and how MONAI writes the file: MedSeg writes its own (--out). resample would resample the
  // output onto another grid first.
  t["SaveImaged"] = common({inert("meta_keys"), inert("meta_key_postfix"), inert("output_dir"), inert("output_postfix"),
                            inert("output_ext"), onlyDefault("resample", {false}), inert("mode"), inert("padding_mode"),
                            inert("scale"), inert("dtype"), inert("output_dtype"), inert("squeeze_end_dims"),
                            inert("data_root_dir"), inert("separate_folder"), inert("print_log"), inert("output_format"),
                            inert("writer"), inert("output_name_formatter"), inert("folder_layout"),
                            inert("savepath_in_metadict")});
  return t;
}

const std::map<std::string, std::vector<Rule>>& table() {
  static const auto t = makeTable();
  return t;
}

const Rule* ruleOf(const std::string& component, const std::string& argument) {
  const auto& rules = table().at(component);
  const auto it = std::find_if(rules.begin(), rules.end(), [&](const Rule& r) { return r.name == argument; });
  return it == rules.end() ? nullptr : &*it;
}

std::string expected(Kind kind) {
  switch (kind) {
    case Kind::Flag: return "true or false";
    case Kind::Number: return "a number";
    case Kind::Integer: return "a whole number";
    case Kind::Numbers: return "a number or a list of numbers";
    case Kind::Integers: return "a whole number or a list of them";
    case Kind::Text: return "a string";
    case Kind::Keys: return "a key or a list of keys";
    case Kind::Dtype: return "a dtype (float32, \"$np.float32\", \"$torch.float32\", ...)";
    case Kind::Any: return "a value";
  }
  return "a value";
}

bool isInteger(const json& v) {
  return v.is_number_integer() || (v.is_number_float() && v.get<double>() == std::floor(v.get<double>()));
}

bool fits(const json& v, Kind kind) {
  auto all = [&v](auto test) { return v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), test); };
  switch (kind) {
    case Kind::Flag: return v.is_boolean();
    case Kind::Number: return v.is_number();
    case Kind::Integer: return v.is_number() && isInteger(v);
    case Kind::Numbers: return v.is_number() || all([](const json& e) { return e.is_number(); });
    case Kind::Integers:
      return (v.is_number() && isInteger(v)) || all([](const json& e) { return e.is_number() && isInteger(e); });
    case Kind::Text: return v.is_string();
    case Kind::Keys: return v.is_string() || all([](const json& e) { return e.is_string(); });
    case Kind::Dtype: return dtypeName(v).has_value();
    case Kind::Any: return true;
  }
  return false;
}

// Why `v` does not do for `rule`, or "" when it does.
std::string problemWith(const json& v, const Rule& rule) {
  if (rule.use == Use::Inert) return "";
  if (rule.use == Use::Default) {
    if (std::find(rule.choices.begin(), rule.choices.end(), v) != rule.choices.end()) return "";
    return "MedSeg runs only MONAI's default (" + rule.fallback.dump() + "); remove the argument or set it to that";
  }
  if (v.is_null()) return rule.nullable ? "" : "must be " + expected(rule.kind) + ", not null";
  if (isDanglingReference(v))
    return "refers to no item of the config (MONAI fails on it too): define the item, or write the value";
  if (rule.kind != Kind::Dtype && rule.kind != Kind::Any && isPythonExpression(v))
    return "is a Python expression MedSeg does not evaluate (" + whyNotEvaluated(v.get<std::string>()) +
           "): write its value (" + expected(rule.kind) + "); docs/plugins.md lists the expressions MedSeg evaluates";
  if (!fits(v, rule.kind)) return "must be " + expected(rule.kind);
  if (!rule.choices.empty()) {
    const json canonical = rule.kind == Kind::Dtype ? json(*dtypeName(v)) : v;
    if (std::find(rule.choices.begin(), rule.choices.end(), canonical) == rule.choices.end()) {
      std::vector<std::string> names;
      for (const auto& c : rule.choices) names.push_back(c.dump());
      return "is not a value MedSeg runs (it runs " + joinedWithCommas(names) + ")";
    }
  }
  return "";
}

// A string where MONAI takes a boolean: MONAI's parser leaves it a string and the transform tests its
// truth, so any non-empty string is true. Those spelling true ("True", "true", "yes", "on", "1") are read
// so; "" is false; any other ("False", "no", "0") reads as true in MONAI against its writer's intent and
// is refused with that said. Flags MONAI hands to torch (align_corners) take no string at all.
json flagFromString(const std::string& text, const Rule& rule, std::string& problem) {
  std::string word = trimmed(text);
  for (auto& c : word) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (rule.strict) {
    problem = "is a string: MONAI hands it to torch, which refuses a string; write true or false without quotes";
    return text;
  }
  if (text.empty()) return false;
  if (word == "true" || word == "yes" || word == "on" || word == "1") return true;
  problem = "is a string, which MONAI takes as true whatever it spells (Python's truth of a non-empty string): "
            "write true or false without quotes";
  return text;
}

// "True" and the like where MONAI takes a boolean, read as MONAI's truth test does, or refused.
void readStringFlags(const BundleTransform& t, const std::string& argument, json& v, const Rule& rule) {
  const auto convert = [&](json& item) {
    if (!item.is_string() || isPythonExpression(item) || isDanglingReference(item)) return;
    std::string problem;
    json flag = flagFromString(item.get<std::string>(), rule, problem);
    if (!problem.empty()) t.refuse(argument.c_str(), problem);
    item = flag;
  };
  if (v.is_array() && rule.perKey)
    for (auto& item : v) convert(item);
  else
    convert(v);
}

std::vector<std::string> keysOf(const json& args) {
  if (!args.contains("keys")) return {};
  const json& keys = args["keys"];
  if (keys.is_string()) return {keys.get<std::string>()};
  std::vector<std::string> out;
  if (keys.is_array())
    for (const auto& k : keys)
      if (k.is_string()) out.push_back(k.get<std::string>());
  return out;
}

}  // namespace

std::string componentName(const json& component, const std::string& where) {
  if (!component.is_object() || !component.contains("_target_") || !component["_target_"].is_string())
    throw InputError(where + ": a component is an object with a \"_target_\"");
  std::string name = component["_target_"].get<std::string>();
  // "monai.transforms.Spacingd", "monai.transforms.spatial.dictionary.Spacingd", "monai.inferers.SimpleInferer"
  if (name.rfind("monai.", 0) == 0) name = name.substr(name.rfind('.') + 1);
  return name;
}

bool knownComponent(const std::string& name) { return table().count(name) > 0; }

std::optional<std::string> dtypeName(const json& value) {
  if (!value.is_string()) return std::nullopt;
  std::string text = value.get<std::string>();
  if (!text.empty() && text[0] == '$') text.erase(0, 1);
  bool torchName = false;
  for (const std::string prefix : {"np.", "numpy.", "torch."})
    if (text.rfind(prefix, 0) == 0) {
      torchName = prefix == "torch.";
      text = text.substr(prefix.size());
    }
  if (text == "float") return torchName ? "float32" : "float64";  // torch.float is float32, Python's float 64 bits
  if (text == "double") return "float64";
  if (text == "half") return "float16";
  for (const char* name : {"float16", "float32", "float64", "bfloat16", "uint8", "int8", "int16", "int32", "int64", "bool"})
    if (text == name) return std::string(name);
  return std::nullopt;
}

BundleTransform::BundleTransform(const json& component, const std::string& where, const std::string& key)
    : name_(componentName(component, where)), args_(component) {
  args_.erase("_target_");
  where_ = where + " " + name_;
  if (!knownComponent(name_)) return;  // the caller refuses it with the list of what MedSeg runs
  const auto keys = keysOf(args_);
  const auto found = std::find(keys.begin(), keys.end(), key);
  keyIndex_ = found == keys.end() ? 0 : size_t(found - keys.begin());
  for (const auto& rule : table().at(name_))
    if (rule.required && !args_.contains(rule.name))
      refuse(rule.name.c_str(), "is missing: MONAI has no default for it");
  for (auto& [argument, v] : args_.items()) {
    const Rule* rule = ruleOf(name_, argument);
    if (rule && rule->kind == Kind::Flag) readStringFlags(*this, argument, v, *rule);
    if (!rule)
      refuse(argument.c_str(), "is not an argument MedSeg knows for " + name_ +
                                   " (MONAI 1.4's); the bundle is refused rather than run without it");
    if (rule->perKey && v.is_array() && !(rule->kind == Kind::Numbers || rule->kind == Kind::Integers) &&
        keys.size() > 1 && v.size() != keys.size())
      refuse(argument.c_str(), "has " + std::to_string(v.size()) + " entries for " + std::to_string(keys.size()) + " keys");
    const std::string problem = problemWith(value(argument.c_str()), *rule);
    if (!problem.empty()) refuse(argument.c_str(), problem);
  }
}

bool BundleTransform::appliesTo(const std::string& key) const {
  if (!args_.contains("keys")) return true;
  const auto keys = keysOf(args_);
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

const json& BundleTransform::value(const char* name) const {
  const Rule* rule = ruleOf(name_, name);
  static const json none;
  if (!args_.contains(name)) return rule ? rule->fallback : none;
  const json& v = args_[name];
  // A list given per key ([\"bilinear\", \"nearest\"] for keys [image, label]): this key's entry.
  if (rule && rule->perKey && v.is_array() && !v.empty() && rule->kind != Kind::Numbers && rule->kind != Kind::Integers)
    return v[std::min(keyIndex_, v.size() - 1)];
  return v;
}

bool BundleTransform::given(const char* name) const { return args_.contains(name) && !args_[name].is_null(); }

bool BundleTransform::flag(const char* name) const {
  const json& v = value(name);
  return v.is_boolean() && v.get<bool>();
}

double BundleTransform::number(const char* name) const {
  const json& v = value(name);
  if (!v.is_number()) refuse(name, "must be given as a number");
  return v.get<double>();
}

std::optional<double> BundleTransform::optionalNumber(const char* name) const {
  const json& v = value(name);
  if (v.is_null()) return std::nullopt;
  return number(name);
}

std::string BundleTransform::text(const char* name) const {
  const json& v = value(name);
  if (!v.is_string()) refuse(name, "must be given as a string");
  return v.get<std::string>();
}

std::vector<double> BundleTransform::numbers(const char* name) const {
  const json& v = value(name);
  if (v.is_number()) return {v.get<double>()};
  std::vector<double> out;
  if (v.is_array())
    for (const auto& e : v) out.push_back(e.get<double>());
  if (out.empty()) refuse(name, "must be given as a number or a list of numbers");
  return out;
}

std::optional<std::string> BundleTransform::dtype(const char* name) const { return dtypeName(value(name)); }

void BundleTransform::refuse(const char* argument, const std::string& why) const {
  const json& v = args_.contains(argument) ? args_[argument] : json();
  std::string shown = v.dump();
  if (shown.size() > 120) shown = shown.substr(0, 117) + "...";
  throw InputError(where_ + ": " + argument + " = " + shown + " " + why);
}

}  // namespace medseg::torchscript
