#pragma once
// Loopback networking for tests that start real servers (Orthanc, sshd) on this machine: a free
// 127.0.0.1 port, a connection test, and a minimal HTTP/1.0 client for REST APIs.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

namespace medseg::test {

inline int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    throw std::runtime_error("cannot find a free localhost port");
  ::close(fd);
  return ntohs(address.sin_port);
}

inline int connectLoopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

// HTTP/1.0 request on 127.0.0.1:port; the body, or throws with the status line.
inline std::string httpRequest(int port, const std::string& method, const std::string& path, const std::string& body = {}) {
  const int fd = connectLoopback(port);
  if (fd < 0) throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port));
  const std::string request = method + " " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string response;
  char buffer[8192];
  ssize_t n;
  while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0) response.append(buffer, size_t(n));
  ::close(fd);
  const auto end = response.find("\r\n\r\n");
  const std::string status = response.substr(0, response.find("\r\n"));
  if (end == std::string::npos || status.find(" 200") == std::string::npos)
    throw std::runtime_error(method + " " + path + ": " + status);
  return response.substr(end + 4);
}

inline std::string httpGet(int port, const std::string& path) { return httpRequest(port, "GET", path); }

// Whether something listens on 127.0.0.1:port.
inline bool acceptsConnections(int port) {
  const int fd = connectLoopback(port);
  if (fd >= 0) ::close(fd);
  return fd >= 0;
}

}  // namespace medseg::test
