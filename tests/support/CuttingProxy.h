#pragma once
// A TCP relay on a free 127.0.0.1 port that forwards each connection to a target port and cuts it
// (closes both sides) once `limit` bytes have come back from the target: a network that drops in
// the middle of a transfer, reproducibly.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <thread>

#include "support/OrthancServer.h"

namespace medseg::test {

class CuttingProxy {
 public:
  CuttingProxy(int targetPort, int64_t limit) : target_(targetPort), limit_(limit) {
    listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int yes = 1;
    ::setsockopt(listen_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (listen_ < 0 || ::bind(listen_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listen_, 8) != 0 || ::getsockname(listen_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
      throw std::runtime_error("cannot open the proxy's port");
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~CuttingProxy() {
    stop_ = true;
    ::shutdown(listen_, SHUT_RDWR);
    thread_.join();
    ::close(listen_);
  }
  CuttingProxy(const CuttingProxy&) = delete;
  CuttingProxy& operator=(const CuttingProxy&) = delete;
  int port() const { return port_; }
  int64_t cutConnections() const { return cuts_; }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{listen_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const int client = ::accept(listen_, nullptr, nullptr);
      if (client < 0) continue;
      const int server = connectLoopback(target_);
      if (server >= 0) relay(client, server);
      ::close(client);
      if (server >= 0) ::close(server);
    }
  }
  void relay(int client, int server) {
    int64_t returned = 0;
    char buffer[16384];
    while (!stop_) {
      pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      if (::poll(fds, 2, 100) < 0) return;
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
        if (n <= 0 || ::send(server, buffer, size_t(n), MSG_NOSIGNAL) != n) return;
      }
      if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
        const ssize_t want = static_cast<ssize_t>(std::min<int64_t>(sizeof buffer, limit_ - returned));
        const ssize_t n = ::recv(server, buffer, size_t(std::max<ssize_t>(want, 1)), 0);
        if (n <= 0 || ::send(client, buffer, size_t(n), MSG_NOSIGNAL) != n) return;
        returned += n;
        if (returned >= limit_) {
          ++cuts_;
          return;
        }
      }
    }
  }

  int target_;
  int64_t limit_;
  int listen_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> cuts_{0};
  std::thread thread_;
};

}  // namespace medseg::test
