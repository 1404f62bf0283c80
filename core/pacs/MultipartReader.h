#pragma once
// A streaming reader of multipart bodies (RFC 2046, as WADO-RS sends a series: multipart/related;
// type="application/dicom"): bytes are fed as they arrive, and each part's headers, data and end
// are handed on at once, so a series streams to disk without being held in memory. Only the
// closing delimiter ("--BOUNDARY--") makes the body complete: a body that stops before it was cut
// off, however many parts came whole.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace medseg {

class MultipartReader {
 public:
  struct Handler {
    std::function<void(const std::map<std::string, std::string>& headers)> begin;  // names lower case
    std::function<void(const char* data, size_t size)> data;
    std::function<void()> end;
  };
  // `boundary` as given in the Content-Type (without the leading "--").
  MultipartReader(std::string boundary, Handler handler);

  // PacsError for bytes that do not form a multipart body (no delimiter, overlong part headers,
  // garbage after a delimiter).
  void feed(const char* data, size_t size);
  bool complete() const { return state_ == State::Done; }
  int64_t partsCompleted() const { return parts_; }
  bool insidePart() const { return state_ == State::Body; }

 private:
  enum class State { Preamble, AfterDelimiter, Headers, Body, Done };
  bool step();  // one transition on buffered bytes; false when more bytes are needed

  std::string delimiter_;  // "\r\n--" + boundary
  Handler handler_;
  State state_ = State::Preamble;
  std::string buffer_;
  int64_t parts_ = 0;
};

// The boundary parameter of a Content-Type such as
//   multipart/related; type="application/dicom"; boundary=abc   (quoted or not)
// or "" when the type is not multipart or names no boundary.
std::string multipartBoundary(const std::string& contentType);

}  // namespace medseg
