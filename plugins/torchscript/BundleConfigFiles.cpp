#include "plugins/torchscript/BundleConfigFiles.h"

#include <algorithm>
#include <regex>

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "plugins/torchscript/ConfigReferences.h"
#include "plugins/torchscript/PyYaml.h"

namespace medseg::torchscript {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kMaxMacroDepth = 16;
constexpr size_t kMaxConfigBytes = 16u << 20;

std::string lowered(std::string text) {
  for (auto& c : text) c = char(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string joinedId(const std::vector<std::string>& parts, size_t count) {
  std::string id;
  for (size_t i = 0; i < count && i < parts.size(); ++i) id += (i ? "::" : "") + parts[i];
  return id;
}

bool isIndex(const std::string& part) {
  return !part.empty() && part.size() < 10 && part.find_first_not_of("0123456789") == std::string::npos;
}

// The item at `parts` (MONAI's ConfigParser.__getitem__), or nullptr.
json* itemAt(json& config, const std::vector<std::string>& parts) {
  json* node = &config;
  for (const auto& part : parts) {
    if (node->is_object() && node->contains(part)) node = &(*node)[part];
    else if (node->is_array() && isIndex(part) && std::stoul(part) < node->size()) node = &(*node)[std::stoul(part)];
    else return nullptr;
  }
  return node;
}

// merge_kv: "+id" merges into the item, any other id sets it (its parent must exist).
void mergeKey(json& config, const std::string& key, const json& value, const std::string& file) {
  const bool merge = !key.empty() && key[0] == '+';
  const auto parts = idParts(merge ? key.substr(1) : key);
  const std::string where = file + ": key \"" + key + "\"";
  if (merge) {
    if (json* item = itemAt(config, parts)) {
      if (item->is_object() && value.is_object()) {
        item->update(value);
        return;
      }
      if (item->is_array() && value.is_array()) {
        item->insert(item->end(), value.begin(), value.end());
        return;
      }
      throw InputError(where + " merges " + std::string(value.type_name()) + " into the " + item->type_name() +
                       " it names; \"+\" merges a mapping into a mapping or a list into a list (MONAI refuses it too)");
    }
  }
  json* parent = itemAt(config, std::vector<std::string>(parts.begin(), parts.end() - 1));
  const std::string& last = parts.back();
  if (parent && parent->is_object()) {
    (*parent)[last] = value;
  } else if (parent && parent->is_array() && isIndex(last) && std::stoul(last) < parent->size()) {
    (*parent)[std::stoul(last)] = value;
  } else {
    throw InputError(where + " sets an item inside \"" + joinedId(parts, parts.size() - 1) +
                     "\", which the files before it do not have (MONAI fails on it too): set the whole item, or "
                     "put the file defining it first");
  }
}

// MONAI's resolve_relative_ids: "@##key" at item a::b::c is "@a::key".
std::string absoluteIds(std::string value, const std::vector<std::string>& itemId, const std::string& where) {
  static const std::regex prefix("[@%](?:::)+");
  std::vector<std::string> prefixes;
  for (std::sregex_iterator m(value.begin(), value.end(), prefix), end; m != end; ++m) prefixes.push_back(m->str());
  std::sort(prefixes.begin(), prefixes.end(), std::greater<>());
  prefixes.erase(std::unique(prefixes.begin(), prefixes.end()), prefixes.end());
  for (const auto& p : prefixes) {
    const size_t levels = (p.size() - 1) / 2;
    if (levels > itemId.size())
      throw InputError(where + " = \"" + value + "\": the relative id " + p + " climbs above the config's top "
                       "(MONAI refuses it too): use fewer \"#\" or an absolute id");
    const std::string base = levels == itemId.size() ? "" : joinedId(itemId, itemId.size() - levels) + "::";
    const std::string absolute = p.substr(0, 1) + base;
    for (size_t at = value.find(p); at != std::string::npos; at = value.find(p, at + absolute.size()))
      value.replace(at, p.size(), absolute);
  }
  return value;
}

void makeIdsAbsolute(json& node, std::vector<std::string>& itemId, const std::string& source) {
  if (node.is_string()) {
    std::string text = node.get<std::string>();
    for (size_t hash = text.find('#'); hash != std::string::npos; hash = text.find('#', hash)) text.replace(hash, 1, "::");
    node = absoluteIds(text, itemId, source + ": " + joinedId(itemId, itemId.size()));
    return;
  }
  if (node.is_object()) {
    for (auto& [key, child] : node.items()) {
      itemId.push_back(key);
      makeIdsAbsolute(child, itemId, source);
      itemId.pop_back();
    }
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) {
      itemId.push_back(std::to_string(i));
      makeIdsAbsolute(node[i], itemId, source);
      itemId.pop_back();
    }
  }
}

class Macros {
 public:
  Macros(const json& config, const fs::path& root, const std::string& source) : config_(config), root_(root), source_(source) {}

  void replace(json& node, const std::string& id, int depth) {
    if (node.is_string() && node.get<std::string>().rfind('%', 0) == 0) {
      node = expansion(node.get<std::string>(), id, depth);
      return;
    }
    if (node.is_object())
      for (auto& [key, child] : node.items()) replace(child, id.empty() ? key : id + "::" + key, depth);
    else if (node.is_array())
      for (size_t i = 0; i < node.size(); ++i) replace(node[i], id + "::" + std::to_string(i), depth);
  }

 private:
  // MONAI's split_path_id: the longest prefix ending in .json/.yaml/.yml followed by "::" or the end.
  static std::pair<std::string, std::string> pathAndId(const std::string& text) {
    static const std::regex path("(.*\\.(json|yaml|yml))(?=(::.*)|$)", std::regex::icase);
    std::smatch m;
    if (!std::regex_search(text, m, path) || m.position(0) != 0) return {"", text};
    const std::string rest = text.substr(size_t(m.length(1)));
    return {m.str(1), rest.rfind("::", 0) == 0 ? rest.substr(2) : ""};
  }

  json expansion(const std::string& macro, const std::string& id, int depth) {
    const std::string where = source_ + ": " + id + " = \"" + macro + "\"";
    if (depth >= kMaxMacroDepth) throw InputError(where + ": macros nest deeper than " + std::to_string(kMaxMacroDepth));
    const auto [path, target] = pathAndId(macro.substr(1));
    json file;
    if (!path.empty()) {
      if (root_.empty())
        throw InputError(where + ": the macro names a file, and a model.ts carrying its config has no folder to "
                                 "find it in: run the bundle folder");
      const fs::path resolved = fs::path(path).is_absolute() ? fs::path(path) : root_ / path;
      std::error_code ec;
      if (!fs::is_regular_file(resolved, ec))
        throw InputError(where + ": the macro's file " + resolved.string() + " does not exist (paths are taken from "
                                 "the bundle folder " + root_.string() + ")");
      file = loadConfigFile(resolved);
    }
    json& from = path.empty() ? config_ : file;
    const json* item = target.empty() ? &from : itemAt(from, idParts(target));
    if (!item)
      throw InputError(where + ": the macro's item \"" + target + "\" is not in " + (path.empty() ? "the config" : path) +
                       " (MONAI fails on it too): name an existing item");
    json copy = *item;
    if (!path.empty()) {
      std::vector<std::string> itemId = idParts(id);
      makeIdsAbsolute(copy, itemId, path);
    }
    replace(copy, id, depth + 1);
    return copy;
  }

  json config_;  // the config before macros: what "%id" copies
  const fs::path& root_;
  const std::string& source_;
};

}  // namespace

json loadConfigFile(const fs::path& file) {
  std::string text;
  try {
    text = readTextFile(file, kMaxConfigBytes);
  } catch (const std::exception& e) {
    throw InputError(file.string() + " cannot be read: " + e.what());
  }
  const std::string ext = lowered(file.extension().string());
  json document;
  if (ext == ".yaml" || ext == ".yml") {
    document = pyYamlToJson(text, file.string());
  } else if (ext == ".json") {
    try {
      document = json::parse(text);
    } catch (const json::exception& e) {
      throw InputError(file.string() + ": JSON syntax error: " + e.what());
    }
  } else {
    throw InputError(file.string() + ": a MONAI config is a .json, .yaml or .yml file (MONAI reads no other)");
  }
  if (document.is_null()) document = json::object();
  if (!document.is_object()) throw InputError(file.string() + " is not a mapping of keys to items");
  return document;
}

json preparedConfig(json config, const fs::path& bundleRoot, const std::string& source) {
  std::vector<std::string> itemId;
  makeIdsAbsolute(config, itemId, source);
  Macros(config, bundleRoot, source).replace(config, "", 0);
  return config;
}

json mergedBundleConfig(const std::vector<fs::path>& files, const fs::path& bundleRoot) {
  json config = json::object();
  std::string source;
  for (const auto& file : files) {
    const json document = loadConfigFile(file);
    for (const auto& [key, value] : document.items()) mergeKey(config, key, value, file.string());
    source += (source.empty() ? "" : " + ") + file.filename().string();
  }
  return preparedConfig(std::move(config), bundleRoot, source);
}

}  // namespace medseg::torchscript
