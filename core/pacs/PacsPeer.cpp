#include "core/pacs/PacsPeer.h"

#include <cctype>

#include "core/pacs/PacsConfig.h"
#include "core/util/Interrupt.h"

namespace medseg {

std::string PacsPeer::describe() const { return aeTitle + "@" + host + ":" + std::to_string(port); }

void checkAeTitle(const std::string& aeTitle, const std::string& what) {
  bool allSpaces = true;
  for (unsigned char c : aeTitle) {
    if (c < 0x20 || c > 0x7e || c == '\\')
      throw InputError(what + " '" + aeTitle + "' holds a character an AE title may not (control, backslash or non-ASCII)");
    allSpaces = allSpaces && c == ' ';
  }
  if (aeTitle.empty() || aeTitle.size() > 16 || allSpaces)
    throw InputError(what + " '" + aeTitle + "' must be 1 to 16 characters (DICOM AE title)");
}

PacsPeer parsePacsPeer(const std::string& text, const PacsConfig& config) {
  if (const auto named = config.peers.find(text); named != config.peers.end()) return named->second;
  const auto at = text.find('@');
  const auto colon = text.rfind(':');
  const std::string form = "'" + text + "' is not a DICOM peer: give AET@host:port (e.g. ORTHANC@127.0.0.1:4242)" +
                           (config.peers.empty() ? std::string() : " or the name of a peer in " + config.source);
  if (at == std::string::npos || colon == std::string::npos || colon < at || at == 0 || colon == at + 1)
    throw InputError(form);
  PacsPeer peer;
  peer.aeTitle = text.substr(0, at);
  peer.host = text.substr(at + 1, colon - at - 1);
  const std::string port = text.substr(colon + 1);
  if (port.empty() || port.size() > 5) throw InputError(form);
  for (char c : port)
    if (!std::isdigit(static_cast<unsigned char>(c))) throw InputError(form);
  peer.port = std::stoi(port);
  if (peer.port < 1 || peer.port > 65535) throw InputError(form + " (port " + port + " is out of range)");
  checkAeTitle(peer.aeTitle, "called AE title");
  return peer;
}

bool isPacsUri(const std::string& text) { return text.rfind("pacs://", 0) == 0; }

PacsUri parsePacsUri(const std::string& text, const PacsConfig& config) {
  if (!isPacsUri(text)) throw InputError("'" + text + "' is not a pacs:// address");
  const std::string rest = text.substr(7);
  const auto slash = rest.find('/');
  PacsUri uri;
  uri.peer = parsePacsPeer(rest.substr(0, slash), config);
  if (slash != std::string::npos) uri.uid = rest.substr(slash + 1);
  if (!uri.uid.empty() && uri.uid.back() == '/') uri.uid.pop_back();
  for (char c : uri.uid)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.'))
      throw InputError("'" + text + "': the part after the peer must be a study or series UID (digits and dots)");
  return uri;
}

}  // namespace medseg
