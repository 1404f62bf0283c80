#include "core/plugin/PluginManifest.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/plugin/PluginError.h"

namespace medseg::plugin {
namespace {

using nlohmann::json;

std::string textField(const json& in, const char* key, bool required) {
  if (!in.contains(key)) {
    if (required) throw PluginError(std::string("\"") + key + "\" is missing");
    return {};
  }
  if (!in[key].is_string()) throw PluginError(std::string("\"") + key + "\" must be a string");
  return in[key].get<std::string>();
}

bool flag(const json& in, const char* key) {
  if (!in.contains(key)) return false;
  if (!in[key].is_boolean()) throw PluginError(std::string("\"capabilities\".\"") + key + "\" must be true or false");
  return in[key].get<bool>();
}

std::vector<std::string> textList(const json& in, const char* key, std::vector<std::string> fallback) {
  if (!in.contains(key)) return fallback;
  if (!in[key].is_array()) throw PluginError(std::string("\"") + key + "\" must be a list of strings");
  std::vector<std::string> out;
  for (const auto& item : in[key]) {
    if (!item.is_string()) throw PluginError(std::string("\"") + key + "\" must be a list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

PluginKind parseKind(const std::string& name) {
  if (name == "train") return PluginKind::Train;
  if (name == "infer") return PluginKind::Infer;
  throw PluginError("kind \"" + name + "\" is not train or infer");
}

Capabilities readCapabilities(const json& in) {
  Capabilities c;
  if (in.is_null()) return c;
  if (!in.is_object()) throw PluginError("\"capabilities\" must be an object");
  c.devices = textList(in, "devices", {"cpu"});
  for (const auto& device : c.devices)
    if (device != "cpu" && device != "cuda") throw PluginError("\"capabilities\".\"devices\": \"" + device + "\" is not cpu or cuda");
  const std::string model = in.contains("model") ? textField(in, "model", true) : "required";
  if (model != "required" && model != "none") throw PluginError("\"capabilities\".\"model\" must be \"required\" or \"none\"");
  c.needsModel = model == "required";
  c.probabilities = flag(in, "probabilities");
  c.dataParallel = flag(in, "data_parallel");
  c.pipeline = flag(in, "pipeline");
  c.prompts = textList(in, "prompts", {});
  for (const auto& prompt : c.prompts)
    if (prompt != "seed-points") throw PluginError("\"capabilities\".\"prompts\": \"" + prompt + "\" is not seed-points");
  return c;
}

std::vector<LabelSpec> readOutputs(const json& in) {
  std::vector<LabelSpec> labels;
  if (in.is_null()) return labels;
  if (!in.is_array()) throw PluginError("\"outputs\" must be a list of {\"value\", \"name\", \"colour\"}");
  for (const auto& entry : in) {
    if (!entry.is_object() || !entry.contains("value") || !entry["value"].is_number_integer() ||
        entry["value"].get<int>() < 0 || entry["value"].get<int>() > 255)
      throw PluginError("every \"outputs\" entry needs a \"value\" in 0..255");
    LabelSpec label;
    label.value = entry["value"].get<int>();
    label.name = textField(entry, "name", true);
    if (entry.contains("colour")) {
      const auto& colour = entry["colour"];
      if (!colour.is_array() || colour.size() != 3)
        throw PluginError("output \"" + label.name + "\": \"colour\" must be [red, green, blue] in 0..255");
      for (int i = 0; i < 3; ++i) {
        if (!colour[i].is_number_integer() || colour[i].get<int>() < 0 || colour[i].get<int>() > 255)
          throw PluginError("output \"" + label.name + "\": \"colour\" must be [red, green, blue] in 0..255");
        label.colour[i] = colour[i].get<int>();
      }
    }
    labels.push_back(label);
  }
  return labels;
}

}  // namespace

const char* pluginKindName(PluginKind kind) { return kind == PluginKind::Train ? "train" : "infer"; }

bool Capabilities::takesSeedPoints() const {
  return std::find(prompts.begin(), prompts.end(), "seed-points") != prompts.end();
}

bool PluginManifest::has(PluginKind kind) const { return std::find(kinds.begin(), kinds.end(), kind) != kinds.end(); }

const PluginTask* PluginManifest::task(const std::string& taskName) const {
  for (const auto& t : tasks)
    if (t.name == taskName) return &t;
  return nullptr;
}

json PluginManifest::toJson() const {
  json kindList = json::array();
  for (auto kind : kinds) kindList.push_back(pluginKindName(kind));
  json inputList = json::array();
  for (const auto& input : inputs) inputList.push_back({{"name", input.name}, {"description", input.description}});
  json outputList = json::array();
  for (const auto& label : outputs) outputList.push_back({{"value", label.value}, {"name", label.name}, {"colour", label.colour}});
  json taskList = json::array();
  for (const auto& t : tasks) taskList.push_back({{"name", t.name}, {"help", t.help}, {"parameters", t.parameters.toJson()}});
  return {{"id", id},
          {"name", name},
          {"version", version},
          {"description", description},
          {"api_version", api.text()},
          {"abi", abi.toJson()},
          {"library", library},
          {"kinds", kindList},
          {"inputs", inputList},
          {"outputs", outputList},
          {"capabilities",
           {{"devices", capabilities.devices},
            {"model", capabilities.needsModel ? "required" : "none"},
            {"probabilities", capabilities.probabilities},
            {"data_parallel", capabilities.dataParallel},
            {"pipeline", capabilities.pipeline},
            {"prompts", capabilities.prompts}}},
          {"parameters", {{"infer", inferParameters.toJson()}, {"train", trainParameters.toJson()}}},
          {"tasks", taskList},
          {"folder", folder.string()}};
}

PluginManifest PluginManifest::fromJson(const json& in, const std::filesystem::path& folder) {
  if (!in.is_object()) throw PluginError("the manifest must be a JSON object");
  static const std::regex idPattern(R"(^[a-z][a-z0-9-]{0,63}$)");
  PluginManifest m;
  m.folder = folder;
  m.id = textField(in, "id", true);
  if (!std::regex_match(m.id, idPattern))
    throw PluginError("\"id\" \"" + m.id + "\" must be lower-case letters, digits and '-', starting with a letter");
  m.name = textField(in, "name", true);
  m.version = textField(in, "version", true);
  m.description = textField(in, "description", false);
  m.api = ApiVersion::parse(textField(in, "api_version", true));
  if (!in.contains("abi")) throw PluginError("\"abi\" is missing (medseg_add_plugin writes it when the plugin is built)");
  m.abi = AbiTag::fromJson(in["abi"]);
  m.library = textField(in, "library", true);
  if (m.library.empty() || std::filesystem::path(m.library).filename().string() != m.library)
    throw PluginError("\"library\" must be a file name in the manifest's folder, found \"" + m.library + "\"");
  for (const auto& kind : textList(in, "kinds", {})) m.kinds.push_back(parseKind(kind));
  if (m.kinds.empty()) throw PluginError("\"kinds\" must name train and/or infer");
  if (in.contains("inputs")) {
    if (!in["inputs"].is_array()) throw PluginError("\"inputs\" must be a list of {\"name\", \"description\"}");
    for (const auto& input : in["inputs"]) {
      if (!input.is_object()) throw PluginError("every \"inputs\" entry must be an object {\"name\", \"description\"}");
      m.inputs.push_back({textField(input, "name", true), textField(input, "description", false)});
    }
  }
  m.outputs = readOutputs(in.contains("outputs") ? in["outputs"] : json());
  m.capabilities = readCapabilities(in.contains("capabilities") ? in["capabilities"] : json());
  if (in.contains("parameters")) {
    const auto& parameters = in["parameters"];
    if (!parameters.is_object()) throw PluginError("\"parameters\" must be an object {\"infer\": [...], \"train\": [...]}");
    for (const auto& [key, value] : parameters.items())
      if (key != "infer" && key != "train") throw PluginError("\"parameters\" has \"" + key + "\"; only infer and train");
    if (parameters.contains("infer")) m.inferParameters = ParameterSchema::fromJson(parameters["infer"]);
    if (parameters.contains("train")) m.trainParameters = ParameterSchema::fromJson(parameters["train"]);
  }
  if (in.contains("tasks")) {
    if (!in["tasks"].is_array()) throw PluginError("\"tasks\" must be a list of {\"name\", \"help\", \"parameters\"}");
    for (const auto& entry : in["tasks"]) {
      if (!entry.is_object()) throw PluginError("every task must be an object {\"name\", \"help\", \"parameters\"}");
      PluginTask t{textField(entry, "name", true), textField(entry, "help", false), {}};
      if (entry.contains("parameters")) t.parameters = ParameterSchema::fromJson(entry["parameters"]);
      if (m.task(t.name)) throw PluginError("task \"" + t.name + "\" is declared twice");
      m.tasks.push_back(std::move(t));
    }
  }
  return m;
}

PluginManifest PluginManifest::read(const std::filesystem::path& manifestFile) {
  std::ifstream in(manifestFile, std::ios::binary);
  if (!in) throw PluginError(manifestFile.string() + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  json document;
  try {
    document = json::parse(text.str());
  } catch (const json::exception& error) {
    throw PluginError(manifestFile.string() + ": not valid JSON (" + error.what() + ")");
  }
  try {
    return fromJson(document, manifestFile.parent_path());
  } catch (const PluginError& error) {
    throw PluginError(manifestFile.string() + ": " + error.what());
  }
}

}  // namespace medseg::plugin
