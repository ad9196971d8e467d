#include "fake_sentinel.h"

#include <sys/socket.h>

#include <atomic>
#include <boost/asio.hpp>
#include <mutex>
#include <thread>
#include <vector>

namespace rl::test {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

std::string bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

struct FakeSentinel::State {
  asio::io_context io;
  tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  std::mutex mutex;
  int master_port = 0;
  std::vector<std::shared_ptr<tcp::socket>> sockets;
  std::vector<std::shared_ptr<tcp::socket>> subscribers;
  std::vector<std::thread> threads;
  std::atomic<int> asked{0};
  std::atomic<bool> stopping{false};

  void accept_loop() {
    while (!stopping) {
      auto socket = std::make_shared<tcp::socket>(io);
      boost::system::error_code ec;
      acceptor.accept(*socket, ec);
      if (ec) return;
      std::lock_guard lock(mutex);
      if (stopping) return;  // the destructor joins only what it saw
      sockets.push_back(socket);
      threads.emplace_back([this, socket] { serve(socket); });
    }
  }

  // Commands are recognised by a word in them: enough for what rl sends.
  void serve(const std::shared_ptr<tcp::socket>& socket) {
    std::string pending;
    char buffer[4096];
    boost::system::error_code ec;
    while (!stopping) {
      const size_t n = socket->read_some(asio::buffer(buffer), ec);
      if (ec) return;
      pending.append(buffer, n);
      for (;;) {
        const size_t ask = pending.find("GET-MASTER-ADDR-BY-NAME");
        const size_t subscribe = pending.find("SUBSCRIBE");
        if (ask == std::string::npos && subscribe == std::string::npos) break;
        std::string reply;
        if (ask != std::string::npos && (subscribe == std::string::npos || ask < subscribe)) {
          // The whole command: up to the end of its last argument, the name.
          const size_t end = pending.find("\r\n", pending.find("\r\n", ask + 25) + 2);
          if (end == std::string::npos) break;
          pending.erase(0, end + 2);
          std::lock_guard lock(mutex);
          reply = "*2\r\n" + bulk("127.0.0.1") + bulk(std::to_string(master_port));
          ++asked;
        } else {
          const size_t end = pending.find("\r\n", subscribe + 11);
          if (end == std::string::npos) break;
          pending.erase(0, pending.find("\r\n", end + 2) + 2);
          std::lock_guard lock(mutex);
          subscribers.push_back(socket);
          reply = "*3\r\n" + bulk("subscribe") + bulk("+switch-master") + ":1\r\n";
        }
        asio::write(*socket, asio::buffer(reply), ec);
        if (ec) return;
      }
    }
  }
};

FakeSentinel::FakeSentinel(int master_port) : state_(std::make_unique<State>()) {
  state_->master_port = master_port;
  State* s = state_.get();
  std::lock_guard lock(s->mutex);
  s->threads.emplace_back([s] { s->accept_loop(); });
}

// Shut down (which wakes a blocked accept or read), join, then close.
FakeSentinel::~FakeSentinel() {
  state_->stopping = true;
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(state_->mutex);
    boost::system::error_code ignored;
    ::shutdown(state_->acceptor.native_handle(), SHUT_RDWR);
    for (auto& socket : state_->sockets) socket->shutdown(tcp::socket::shutdown_both, ignored);
    threads.swap(state_->threads);
  }
  for (std::thread& t : threads) t.join();
}

int FakeSentinel::port() const {
  return state_->acceptor.local_endpoint().port();
}

void FakeSentinel::set_master(int port) {
  std::lock_guard lock(state_->mutex);
  state_->master_port = port;
}

void FakeSentinel::switch_master(const std::string& name, int port) {
  std::lock_guard lock(state_->mutex);
  const std::string text = name + " 127.0.0.1 " + std::to_string(state_->master_port) +
                           " 127.0.0.1 " + std::to_string(port);
  state_->master_port = port;
  const std::string message = "*3\r\n" + bulk("message") + bulk("+switch-master") + bulk(text);
  boost::system::error_code ignored;
  for (auto& socket : state_->subscribers) asio::write(*socket, asio::buffer(message), ignored);
}

int FakeSentinel::asked() const {
  return state_->asked;
}

}  // namespace rl::test
