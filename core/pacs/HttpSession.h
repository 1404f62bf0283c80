#pragma once
// Internal to core/pacs (libcurl stays behind this folder's headers): one HTTP(S) connection to a
// DICOMweb server through libcurl, kept alive across requests, with the PACS config's timeouts
// (connect_timeout_seconds for the TCP and TLS connect, dimse_timeout_seconds as the longest a
// transfer may stall without a byte) and Ctrl-C honoured between received blocks. Transport
// failures (refused, unresolvable, timed out, cut off) are PacsError naming the server; HTTP
// statuses are returned for the caller to judge.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/pacs/PacsConfig.h"
#include "core/pacs/PacsError.h"

namespace medseg::pacs_detail {

// The transfer itself failed (no connection, a timeout, a connection dropped mid-answer); the
// message names the server and says what curl saw.
class HttpTransportError : public PacsError {
 public:
  HttpTransportError(const std::string& message, bool connectFailed) : PacsError(message), connectFailed_(connectFailed) {}
  bool connectFailed() const { return connectFailed_; }  // nothing reached the server

 private:
  bool connectFailed_;
};

struct HttpResponse {
  long status = 0;
  std::string contentType;
  std::string body;  // the whole body, or for a streamed 2xx answer nothing
};

class HttpSession {
 public:
  // `server` names the server in messages (its base URL without credentials).
  HttpSession(const PacsConfig& config, std::string server);
  ~HttpSession();
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;

  HttpResponse get(const std::string& url, const std::string& accept);
  // A GET whose 2xx body goes to `onBody` block by block as it arrives (`onStart` first, with the
  // status and Content-Type); any other status collects the body into the response. An exception
  // thrown by a callback ends the transfer and propagates.
  HttpResponse getStreamed(const std::string& url, const std::string& accept,
                           const std::function<void(long status, const std::string& contentType)>& onStart,
                           const std::function<void(const char* data, size_t size)>& onBody);
  HttpResponse post(const std::string& url, const std::string& contentType, const std::string& accept,
                    const std::string& body);

  const std::string& server() const { return server_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string server_;
};

// Percent-encodes a query parameter value.
std::string urlEncode(const std::string& value);

}  // namespace medseg::pacs_detail
