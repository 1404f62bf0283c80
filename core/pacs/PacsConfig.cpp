#include "core/pacs/PacsConfig.h"

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {
int positiveSeconds(const nlohmann::json& value, const std::string& key, const std::string& source) {
  if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 86400)
    throw InputError(source + ": " + key + " must be a whole number of seconds from 1 to 86400");
  return value.get<int>();
}
// "tls": {...}: file names resolved against the config file's folder, each checked to exist.
PacsTls parseTls(const nlohmann::json& value, const std::string& source) {
  if (!value.is_object())
    throw InputError(source + ": tls must be an object with ca_certificates (and certificate, private_key)");
  const fs::path folder = source == "defaults" ? fs::path() : fs::path(source).parent_path();
  PacsTls tls;
  for (const auto& [key, file] : value.items()) {
    if (!file.is_string() || file.get<std::string>().empty())
      throw InputError(source + ": tls." + key + " must be a file name");
    fs::path path = file.get<std::string>();
    if (path.is_relative() && !folder.empty()) path = folder / path;
    std::error_code ec;
    if (key == "ca_certificates" || key == "certificate" || key == "private_key") {
      if (!fs::is_regular_file(path, ec)) throw InputError(source + ": tls." + key + ": " + path.string() + " does not exist");
    }
    if (key == "ca_certificates") tls.caCertificates = path;
    else if (key == "certificate") tls.certificate = path;
    else if (key == "private_key") tls.privateKey = path;
    else throw InputError(source + ": unknown key 'tls." + key + "' (known: ca_certificates, certificate, private_key)");
  }
  if (tls.caCertificates.empty())
    throw InputError(source + ": tls needs ca_certificates (the PEM certificates the peer's certificate is checked against)");
  if (tls.certificate.empty() != tls.privateKey.empty())
    throw InputError(source + ": tls.certificate and tls.private_key go together (our certificate and its key)");
  return tls;
}
}  // namespace

PacsConfig parsePacsConfig(const std::string& jsonText, const std::string& source) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(jsonText);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(source + ": not valid JSON: " + e.what());
  }
  if (!document.is_object()) throw InputError(source + ": the PACS config must be a JSON object");
  PacsConfig config;
  config.source = source;
  for (const auto& [key, value] : document.items()) {
    if (key == "ae_title") {
      if (!value.is_string()) throw InputError(source + ": ae_title must be a string");
      config.aeTitle = value.get<std::string>();
      checkAeTitle(config.aeTitle, source + ": ae_title");
    } else if (key == "connect_timeout_seconds") {
      config.connectTimeoutSeconds = positiveSeconds(value, key, source);
    } else if (key == "dimse_timeout_seconds") {
      config.dimseTimeoutSeconds = positiveSeconds(value, key, source);
    } else if (key == "peers") {
      if (!value.is_object())
        throw InputError(source + ": peers must map names to \"AET@host:port\" or \"http(s)://host:port/ROOT\"");
      for (const auto& [name, address] : value.items()) {
        if (!address.is_string())
          throw InputError(source + ": peers." + name + " must be \"AET@host:port\" or \"http(s)://host:port/ROOT\"");
        const std::string text = address.get<std::string>();
        if (isDicomWebServer(text)) config.dicomWebPeers[name] = parseDicomWebServer(text);
        else config.peers[name] = parsePacsPeer(text, PacsConfig{});
      }
    } else if (key == "tls") {
      config.tls = parseTls(value, source);
    } else {
      throw InputError(source + ": unknown key '" + key +
                       "' (known: ae_title, connect_timeout_seconds, dimse_timeout_seconds, peers, tls)");
    }
  }
  return config;
}

PacsConfig loadPacsConfig(const fs::path& explicitPath) {
  fs::path path = explicitPath;
  if (path.empty()) {
    if (const char* env = std::getenv("MEDSEG_PACS_CONFIG"); env && *env) {
      path = env;
    } else {
      fs::path folder;
      if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) folder = xdg;
      else if (const char* home = std::getenv("HOME"); home && *home) folder = fs::path(home) / ".config";
      if (!folder.empty() && fs::exists(folder / "medseg" / "pacs.json")) path = folder / "medseg" / "pacs.json";
    }
  }
  if (path.empty()) return {};
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw InputError("PACS config " + path.string() + " does not exist");
  return parsePacsConfig(readTextFile(path, 1 << 20), path.string());
}

}  // namespace medseg
