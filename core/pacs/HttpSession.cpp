#include "core/pacs/HttpSession.h"

#include <curl/curl.h>

#include <exception>
#include <mutex>

#include "core/util/Interrupt.h"
#include "core/util/Text.h"

namespace medseg::pacs_detail {

namespace {
constexpr size_t kMaxCollectedBody = size_t(256) << 20;  // JSON answers and error pages

void initCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool startsWithNoCase(const std::string& text, const std::string& prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) != std::tolower(static_cast<unsigned char>(prefix[i]))) return false;
  return true;
}

// The URL without "user:password@", for messages.
std::string withoutCredentials(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const auto hostEnd = url.find('/', scheme + 3);
  const auto at = url.rfind('@', hostEnd == std::string::npos ? std::string::npos : hostEnd);
  if (at == std::string::npos || at < scheme) return url;
  return url.substr(0, scheme + 3) + url.substr(at + 1);
}

}  // namespace

struct HttpSession::Impl {
  CURL* curl = nullptr;
  char error[CURL_ERROR_SIZE] = {};
  // Per request:
  HttpResponse response;
  std::function<void(long, const std::string&)> onStart;
  std::function<void(const char*, size_t)> onBody;
  bool started = false;
  std::exception_ptr failure;

  static size_t header(char* data, size_t size, size_t count, void* self) {
    auto* impl = static_cast<Impl*>(self);
    const std::string line(data, size * count);
    if (startsWithNoCase(line, "HTTP/")) {  // a new response (after a redirect or 100 Continue)
      const auto space = line.find(' ');
      impl->response.status = space == std::string::npos ? 0 : std::atol(line.c_str() + space + 1);
      impl->response.contentType.clear();
    } else if (startsWithNoCase(line, "Content-Type:")) {
      impl->response.contentType = trimmed(line.substr(13));
    }
    return size * count;
  }

  static size_t write(char* data, size_t size, size_t count, void* self) {
    auto* impl = static_cast<Impl*>(self);
    const size_t bytes = size * count;
    try {
      const bool success = impl->response.status >= 200 && impl->response.status < 300;
      if (success && impl->onBody) {
        if (!impl->started) {
          impl->started = true;
          if (impl->onStart) impl->onStart(impl->response.status, impl->response.contentType);
        }
        impl->onBody(data, bytes);
      } else {
        if (impl->response.body.size() + bytes > kMaxCollectedBody)
          throw PacsError("the answer is larger than " + std::to_string(kMaxCollectedBody >> 20) + " MB");
        impl->response.body.append(data, bytes);
      }
    } catch (...) {
      impl->failure = std::current_exception();
      return 0;  // ends the transfer (CURLE_WRITE_ERROR); the exception is rethrown after it
    }
    return bytes;
  }

  static int progress(void*, curl_off_t, curl_off_t, curl_off_t, curl_off_t) { return interruptRequested() ? 1 : 0; }

  void reset();
  HttpResponse perform(const std::string& method, const std::string& url, const std::string& server);
};

HttpSession::HttpSession(const PacsConfig& config, std::string server) : impl_(new Impl), server_(std::move(server)) {
  initCurlOnce();
  impl_->curl = curl_easy_init();
  if (!impl_->curl) throw PacsError("cannot start an HTTP client (libcurl)");
  CURL* c = impl_->curl;
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, impl_->error);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, long(config.connectTimeoutSeconds));
  // A transfer that delivers nothing for dimse_timeout_seconds is a stalled peer, as with DIMSE.
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, long(config.dimseTimeoutSeconds));
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // gzip/deflate when the server offers it
  curl_easy_setopt(c, CURLOPT_USERAGENT, "medseg/" MEDSEG_VERSION);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &Impl::header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, impl_.get());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &Impl::write);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, impl_.get());
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &Impl::progress);
}

HttpSession::~HttpSession() {
  if (impl_->curl) curl_easy_cleanup(impl_->curl);
}

namespace {
struct HeaderList {
  curl_slist* list = nullptr;
  ~HeaderList() { curl_slist_free_all(list); }
  void add(const std::string& header) { list = curl_slist_append(list, header.c_str()); }
};
}  // namespace

void HttpSession::Impl::reset() {
  response = HttpResponse{};
  onStart = nullptr;
  onBody = nullptr;
  started = false;
  failure = nullptr;
}

HttpResponse HttpSession::Impl::perform(const std::string& method, const std::string& url, const std::string& server) {
  error[0] = 0;
  const CURLcode code = curl_easy_perform(curl);
  if (failure) std::rethrow_exception(failure);
  if (code == CURLE_ABORTED_BY_CALLBACK) throwIfInterrupted("HTTP transfer");
  if (code != CURLE_OK) {
    const std::string why = error[0] ? std::string(error) : std::string(curl_easy_strerror(code));
    curl_off_t connectMicroseconds = 0;
    curl_easy_getinfo(curl, CURLINFO_CONNECT_TIME_T, &connectMicroseconds);
    const bool connectFailed = code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST ||
                               code == CURLE_COULDNT_RESOLVE_PROXY ||
                               (code == CURLE_OPERATION_TIMEDOUT && connectMicroseconds == 0);
    if (connectFailed)
      throw HttpTransportError("cannot reach " + server + ": " + why +
                                   " (is the server running, and is this its DICOMweb address?)",
                               true);
    if (code == CURLE_SSL_CONNECT_ERROR || code == CURLE_PEER_FAILED_VERIFICATION)
      throw HttpTransportError("TLS with " + server + " failed: " + why + " (is its certificate trusted here?)", true);
    throw HttpTransportError(method + " " + withoutCredentials(url) + " failed: " + why, false);
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  if (status != 0) response.status = status;
  return std::move(response);
}

HttpResponse HttpSession::get(const std::string& url, const std::string& accept) {
  return getStreamed(url, accept, nullptr, nullptr);
}

HttpResponse HttpSession::getStreamed(const std::string& url, const std::string& accept,
                                      const std::function<void(long, const std::string&)>& onStart,
                                      const std::function<void(const char*, size_t)>& onBody) {
  impl_->reset();
  impl_->onStart = onStart;
  impl_->onBody = onBody;
  HeaderList headers;
  headers.add("Accept: " + accept);
  CURL* c = impl_->curl;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.list);
  HttpResponse response = impl_->perform("GET", url, server_);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);
  return response;
}

HttpResponse HttpSession::post(const std::string& url, const std::string& contentType, const std::string& accept,
                               const std::string& body) {
  impl_->reset();
  HeaderList headers;
  headers.add("Accept: " + accept);
  headers.add("Content-Type: " + contentType);
  headers.add("Expect:");  // no 100-continue round trip
  CURL* c = impl_->curl;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.list);
  HttpResponse response;
  try {
    response = impl_->perform("POST", url, server_);
  } catch (...) {
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, nullptr);
    throw;
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, nullptr);
  return response;
}

std::string urlEncode(const std::string& value) {
  initCurlOnce();
  char* escaped = curl_easy_escape(nullptr, value.c_str(), int(value.size()));
  if (!escaped) throw std::bad_alloc();
  std::string out(escaped);
  curl_free(escaped);
  return out;
}

}  // namespace medseg::pacs_detail
