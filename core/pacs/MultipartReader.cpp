#include "core/pacs/MultipartReader.h"

#include <algorithm>
#include <cctype>

#include "core/pacs/PacsError.h"
#include "core/util/Text.h"

namespace medseg {

namespace {
constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr size_t kMaxPreambleBytes = 64 * 1024;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

MultipartReader::MultipartReader(std::string boundary, Handler handler)
    : delimiter_("\r\n--" + std::move(boundary)), handler_(std::move(handler)) {}

void MultipartReader::feed(const char* data, size_t size) {
  if (state_ == State::Done) return;  // the epilogue is ignored
  buffer_.append(data, size);
  while (state_ != State::Done && step()) {
  }
}

bool MultipartReader::step() {
  switch (state_) {
    case State::Preamble: {
      // The first delimiter may open the body without the CRLF before it.
      const std::string opening = delimiter_.substr(2);
      if (buffer_.size() < opening.size() && opening.compare(0, buffer_.size(), buffer_) == 0) return false;
      size_t consumed = 0;
      if (buffer_.compare(0, opening.size(), opening) == 0) {
        consumed = opening.size();
      } else if (const auto at = buffer_.find(delimiter_); at != std::string::npos) {
        consumed = at + delimiter_.size();
      } else {
        if (buffer_.size() > kMaxPreambleBytes) throw PacsError("malformed multipart response: no boundary delimiter");
        return false;
      }
      buffer_.erase(0, consumed);
      state_ = State::AfterDelimiter;
      return true;
    }
    case State::AfterDelimiter: {
      if (buffer_.size() < 2) return false;
      if (buffer_.compare(0, 2, "--") == 0) {
        state_ = State::Done;
        buffer_.clear();
        return false;
      }
      const auto eol = buffer_.find("\r\n");
      if (eol == std::string::npos) {
        if (buffer_.size() > 1024) throw PacsError("malformed multipart response: no line end after a boundary");
        return false;
      }
      if (!trimmed(buffer_.substr(0, eol), " \t").empty())
        throw PacsError("malformed multipart response: unexpected text after a boundary");
      buffer_.erase(0, eol + 2);
      state_ = State::Headers;
      return true;
    }
    case State::Headers: {
      std::map<std::string, std::string> headers;
      size_t end = 0;
      if (buffer_.rfind("\r\n", 0) == 0) {
        end = 2;  // no headers
      } else {
        const auto blank = buffer_.find("\r\n\r\n");
        if (blank == std::string::npos) {
          if (buffer_.size() > kMaxHeaderBytes) throw PacsError("malformed multipart response: part headers too long");
          return false;
        }
        size_t line = 0;
        while (line < blank + 2) {
          const auto eol = buffer_.find("\r\n", line);
          const std::string text = buffer_.substr(line, eol - line);
          const auto colon = text.find(':');
          if (colon == std::string::npos) throw PacsError("malformed multipart response: bad part header '" + text + "'");
          headers[lower(trimmed(text.substr(0, colon), " \t"))] = trimmed(text.substr(colon + 1), " \t");
          line = eol + 2;
        }
        end = blank + 4;
      }
      buffer_.erase(0, end);
      state_ = State::Body;
      if (handler_.begin) handler_.begin(headers);
      return true;
    }
    case State::Body: {
      const auto at = buffer_.find(delimiter_);
      if (at == std::string::npos) {
        // Hand on all but what could be the start of a delimiter split across two feeds.
        const size_t keep = std::min(buffer_.size(), delimiter_.size() - 1);
        const size_t ready = buffer_.size() - keep;
        if (ready > 0) {
          if (handler_.data) handler_.data(buffer_.data(), ready);
          buffer_.erase(0, ready);
        }
        return false;
      }
      if (at > 0 && handler_.data) handler_.data(buffer_.data(), at);
      buffer_.erase(0, at + delimiter_.size());
      ++parts_;
      if (handler_.end) handler_.end();
      state_ = State::AfterDelimiter;
      return true;
    }
    case State::Done:
      return false;
  }
  return false;
}

std::string multipartBoundary(const std::string& contentType) {
  const std::string type = lower(contentType);
  if (type.rfind("multipart/", 0) != 0) return {};
  size_t at = 0;
  while ((at = type.find("boundary", at)) != std::string::npos) {
    // a parameter name: after ';' (and spaces), followed by '='
    size_t before = at;
    while (before > 0 && (type[before - 1] == ' ' || type[before - 1] == '\t')) --before;
    size_t after = at + 8;
    while (after < type.size() && type[after] == ' ') ++after;
    if (before > 0 && type[before - 1] == ';' && after < type.size() && type[after] == '=') {
      size_t start = after + 1;
      while (start < type.size() && type[start] == ' ') ++start;
      if (start < contentType.size() && contentType[start] == '"') {
        const auto close = contentType.find('"', start + 1);
        if (close == std::string::npos) return {};
        return contentType.substr(start + 1, close - start - 1);
      }
      const auto stop = contentType.find_first_of("; \t", start);
      return contentType.substr(start, stop == std::string::npos ? std::string::npos : stop - start);
    }
    at += 8;
  }
  return {};
}

}  // namespace medseg
