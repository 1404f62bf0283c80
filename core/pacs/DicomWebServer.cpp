#include "core/pacs/DicomWebServer.h"

#include <cctype>

#include "core/pacs/PacsConfig.h"
#include "core/util/Interrupt.h"

namespace medseg {

namespace {
bool startsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

bool isUid(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.')) return false;
  return true;
}

std::string schemeOf(const std::string& text) {
  return startsWith(text, "https://") ? "https://" : startsWith(text, "http://") ? "http://" : "";
}
}  // namespace

std::string DicomWebServer::describe() const {
  const std::string scheme = schemeOf(root);
  const auto hostEnd = root.find('/', scheme.size());
  const auto at = root.rfind('@', hostEnd == std::string::npos ? std::string::npos : hostEnd);
  if (at == std::string::npos || at < scheme.size()) return root;
  return scheme + root.substr(at + 1);
}

bool isDicomWebServer(const std::string& text) { return !schemeOf(text).empty(); }

DicomWebServer parseDicomWebServer(const std::string& text) {
  const std::string form = "'" + text + "' is not a DICOMweb address: give http(s)://host[:port]/ROOT (e.g. "
                           "http://127.0.0.1:8042/dicom-web)";
  const std::string scheme = schemeOf(text);
  if (scheme.empty()) throw InputError(form);
  if (text.find_first_of("?# \t\r\n") != std::string::npos)
    throw InputError(form + " without a query, fragment or spaces");
  std::string root = text;
  while (root.size() > scheme.size() && root.back() == '/') root.pop_back();
  const auto hostEnd = root.find('/', scheme.size());
  std::string authority = root.substr(scheme.size(), hostEnd == std::string::npos ? std::string::npos : hostEnd - scheme.size());
  if (const auto at = authority.rfind('@'); at != std::string::npos) authority = authority.substr(at + 1);
  if (authority.empty()) throw InputError(form + " (no host)");
  const auto bracket = authority.rfind(']');
  const auto colon = authority.rfind(':');
  if (colon != std::string::npos && (bracket == std::string::npos || colon > bracket)) {
    const std::string port = authority.substr(colon + 1);
    bool digits = !port.empty() && port.size() <= 5;
    for (char c : port) digits = digits && std::isdigit(static_cast<unsigned char>(c));
    if (!digits || std::stoi(port) < 1 || std::stoi(port) > 65535) throw InputError(form + " (port '" + port + "')");
    if (colon == 0) throw InputError(form + " (no host)");
  }
  return DicomWebServer{root};
}

bool isDicomWebUri(const std::string& text) { return startsWith(text, "dicomweb://") || startsWith(text, "dicomwebs://"); }

DicomWebUri parseDicomWebUri(const std::string& text, const PacsConfig& config) {
  if (!isDicomWebUri(text)) throw InputError("'" + text + "' is not a dicomweb:// address");
  const bool secure = startsWith(text, "dicomwebs://");
  std::string rest = text.substr(secure ? 12 : 11);
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  DicomWebUri uri;
  const auto lastSlash = rest.rfind('/');
  if (lastSlash != std::string::npos && isUid(rest.substr(lastSlash + 1))) {
    uri.uid = rest.substr(lastSlash + 1);
    rest = rest.substr(0, lastSlash);
  }
  if (const auto named = config.dicomWebPeers.find(rest); named != config.dicomWebPeers.end()) {
    uri.server = named->second;
    return uri;
  }
  if (rest.empty() || rest.find('/') == 0)
    throw InputError("'" + text + "' is not a DICOMweb input: give dicomweb://host:port/ROOT/UID (e.g. "
                     "dicomweb://127.0.0.1:8042/dicom-web/1.2.3) or dicomweb://PEER/UID with a DICOMweb peer of the PACS config");
  uri.server = parseDicomWebServer((secure ? "https://" : "http://") + rest);
  return uri;
}

}  // namespace medseg
