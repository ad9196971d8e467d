// The byte stream of a connection: plain TCP, or TLS over TCP (Asio's
// ssl::stream over OpenSSL). The connection reads and writes through it
// without knowing which; only a plain stream lets callers write to its
// socket themselves (TLS state belongs to the I/O thread).
#pragma once

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "connection.h"

namespace rl::redis {

// The TLS context of NodeOptions::tls: CA, client certificate and key.
// Throws invalid_arg naming the setting that failed (a CA path that does
// not load, a key that does not match its certificate).
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const TlsOptions& tls);

class Stream {
 public:
  using error_code = boost::system::error_code;
  using tcp = boost::asio::ip::tcp;

  // `tls` null: plain TCP.
  Stream(boost::asio::io_context& io, std::shared_ptr<boost::asio::ssl::context> tls)
      : io_(io), tls_context_(std::move(tls)) {
    reset();
  }

  bool is_tls() const { return tls_context_ != nullptr; }
  tcp::socket& socket() { return tls_ ? tls_->next_layer() : *tcp_; }

  // A fresh stream for the next connection attempt (a TLS session is not
  // reused across connections). Call only once the previous one is closed
  // and its handlers have run.
  void reset() {
    if (is_tls()) {
      tls_.emplace(io_, *tls_context_);
    } else {
      tcp_.emplace(io_);
    }
  }

  void close() {
    error_code ignored;
    socket().close(ignored);
  }

  // TLS: SNI and, with `verify`, the chain and the host name (or IP
  // address) checked against `server_name`. TCP: done at once.
  void async_handshake(const std::string& server_name, bool verify,
                       std::function<void(error_code)> done);

  // Why the last TLS handshake failed to verify the server ("hostname
  // mismatch", from SSL_get_verify_result); empty when it verified. Without
  // `verify` it names what was not checked: ask only when the handshake
  // failed for verification (StreamFault::server_not_verified).
  std::string verify_failure() const;

  template <class Handler>
  void async_write(boost::asio::const_buffer bytes, Handler&& handler) {
    if (tls_) {
      boost::asio::async_write(*tls_, bytes, std::forward<Handler>(handler));
    } else {
      boost::asio::async_write(*tcp_, bytes, std::forward<Handler>(handler));
    }
  }

  template <class Handler>
  void async_read_some(boost::asio::mutable_buffer bytes, Handler&& handler) {
    if (tls_) {
      tls_->async_read_some(bytes, std::forward<Handler>(handler));
    } else {
      tcp_->async_read_some(bytes, std::forward<Handler>(handler));
    }
  }

 private:
  boost::asio::io_context& io_;
  std::shared_ptr<boost::asio::ssl::context> tls_context_;
  std::optional<tcp::socket> tcp_;
  std::optional<boost::asio::ssl::stream<tcp::socket>> tls_;
};

}  // namespace rl::redis
