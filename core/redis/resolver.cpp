// A fixed address, or Sentinel's: the sentinels are asked in turn for the
// master's address (SENTINEL GET-MASTER-ADDR-BY-NAME); the first that
// answers goes to the front of the list for next time.
#include "resolver.h"

#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <utility>
#include <vector>

#include "config/settings.h"
#include "error.h"
#include "handshake.h"
#include "quote.h"
#include "reply_reader.h"
#include "resp.h"

namespace rl::redis {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

class StaticResolver final : public AddressResolver {
 public:
  StaticResolver(asio::io_context& io, Address address) : io_(io), address_(std::move(address)) {}
  void resolve(Done done) override {
    asio::post(io_, [this, gen = generation_, done = std::move(done)]() mutable {
      if (gen == generation_) done(Failure{}, Address(address_));
    });
  }
  void cancel() override { ++generation_; }
  bool follows_failover() const override { return false; }
  void on_moved(std::function<void(std::string)>) override {}

 private:
  asio::io_context& io_;
  const Address address_;
  uint64_t generation_ = 0;
};

// Asks the sentinels in turn; the one that answers stays connected,
// subscribed to +switch-master, so that a failover is known when the
// sentinel announces it (the demoted master itself may go on taking writes
// for seconds before the sentinel reconfigures it).
class SentinelResolver final : public AddressResolver {
 public:
  SentinelResolver(asio::io_context& io, const NodeOptions& o)
      : options_(o.sentinel),
        timeout_(o.connect_timeout),
        sentinels_(o.sentinel.sentinels),
        socket_(io),
        resolver_(io),
        timer_(io) {}

  void resolve(Done done) override {
    cancel();
    done_ = std::move(done);
    causes_.clear();
    any_auth_ = false;
    ask(0);
  }

  void cancel() override { close(); }

  bool follows_failover() const override { return true; }

  void on_moved(std::function<void(std::string)> moved) override { moved_ = std::move(moved); }

 private:
  std::string sentinel_name(size_t i) const {
    return "sentinel " + sentinels_[i].host + ":" + std::to_string(sentinels_[i].port);
  }

  // Ends the current attempt or watch: its handlers see a new generation.
  void close() {
    ++generation_;
    error_code ignored;
    socket_.close(ignored);
    resolver_.cancel();
    timer_.cancel();
    reader_.reset();
  }

  // Asks sentinel i, within connect_timeout; on any failure the next one.
  void ask(size_t i) {
    if (i == sentinels_.size()) return give_up();
    close();
    const uint64_t gen = generation_;
    timer_.expires_after(timeout_);
    timer_.async_wait([this, i, gen](error_code ec) {
      if (ec || gen != generation_) return;
      next(i, "no answer within connect_timeout_ms=" + std::to_string(timeout_.count()));
    });
    resolver_.async_resolve(
        sentinels_[i].host, std::to_string(sentinels_[i].port),
        [this, i, gen](error_code ec, const tcp::resolver::results_type& results) {
          if (gen != generation_) return;
          if (ec) return next(i, "cannot resolve: " + ec.message());
          asio::async_connect(socket_, results,
                              [this, i, gen](error_code ec2, const tcp::endpoint&) {
                                if (gen != generation_) return;
                                if (ec2) return next(i, "connect failed: " + ec2.message());
                                query(i, gen);
                              });
        });
  }

  void query(size_t i, uint64_t gen) {
    request_.clear();
    expected_ = 1;
    if (!options_.password.empty()) {
      request_ += auth_command(options_.user, options_.password);
      ++expected_;
    }
    request_ += format_command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.master_name});
    replies_.clear();
    asio::async_write(socket_, asio::buffer(request_), [this, i, gen](error_code ec, size_t) {
      if (gen != generation_) return;
      if (ec) return next(i, "write failed: " + ec.message());
      read(i, gen);
    });
  }

  void read(size_t i, uint64_t gen) {
    socket_.async_read_some(asio::buffer(buffer_), [this, i, gen](error_code ec, size_t n) {
      if (gen != generation_) return;
      if (ec) return next(i, "read failed: " + ec.message());
      if (!reader_.feed(std::string_view(buffer_.data(), n))) return next(i, reader_.error());
      while (replies_.size() < expected_) {
        std::optional<Reply> r = reader_.next();
        if (reader_.failed()) return next(i, reader_.error());
        if (!r) return read(i, gen);
        replies_.push_back(std::move(*r));
      }
      answered(i);
    });
  }

  void answered(size_t i) {
    if (expected_ > 1 && replies_.front().is_error()) {
      any_auth_ = true;
      return next(i, "authentication failed: " + quote(replies_.front().text, 200) +
                         " (sentinel_user, sentinel_password)");
    }
    const Reply& a = replies_.back();
    if (a.is_error()) {
      return next(i, "SENTINEL GET-MASTER-ADDR-BY-NAME failed: " + quote(a.text, 200));
    }
    if (a.type == Reply::Type::nil) {
      return next(i, "knows no master named " + quote(options_.master_name));
    }
    const bool ok = a.type == Reply::Type::array && a.elements.size() == 2 &&
                    a.elements[0].type == Reply::Type::string &&
                    a.elements[1].type == Reply::Type::string;
    int port = 0;
    if (ok) {
      try {
        port = static_cast<int>(parse_count("port", a.elements[1].text, 1, 65535));
      } catch (const Error&) {
      }
    }
    if (!ok || port == 0) return next(i, "gave an address that is not host and port");
    Address address{a.elements[0].text, port};
    // The sentinel that answered is asked first next time.
    std::rotate(sentinels_.begin(), sentinels_.begin() + static_cast<ptrdiff_t>(i),
                sentinels_.begin() + static_cast<ptrdiff_t>(i) + 1);
    timer_.cancel();
    ++generation_;
    resolved_ = address;
    watch();
    Done done = std::move(done_);
    done(Failure{}, std::move(address));
  }

  // ---- the watch: SUBSCRIBE +switch-master on the sentinel that answered ----

  void watch() {
    const uint64_t gen = generation_;
    request_ = format_command({"SUBSCRIBE", "+switch-master"});
    asio::async_write(socket_, asio::buffer(request_), [this, gen](error_code ec, size_t) {
      if (gen != generation_ || ec) return;  // no watch: READONLY and lost connections remain
      read_watch(gen);
    });
  }

  void read_watch(uint64_t gen) {
    socket_.async_read_some(asio::buffer(buffer_), [this, gen](error_code ec, size_t n) {
      if (gen != generation_ || ec) return;
      if (!reader_.feed(std::string_view(buffer_.data(), n))) return;
      while (std::optional<Reply> r = reader_.next()) {
        // ["message", "+switch-master", "<name> <old ip> <old port> <new ip> <new port>"]
        if (r->type != Reply::Type::array || r->elements.size() != 3 ||
            r->elements[0].text != "message")
          continue;
        const std::string& text = r->elements[2].text;
        if (text.compare(0, options_.master_name.size() + 1, options_.master_name + " ") != 0)
          continue;
        // A connection made after the switch is on the new master already.
        const std::string to = " " + resolved_.host + " " + std::to_string(resolved_.port);
        if (text.size() >= to.size() && text.compare(text.size() - to.size(), to.size(), to) == 0)
          continue;
        close();
        if (moved_) moved_(text.substr(options_.master_name.size() + 1));
        return;
      }
      if (!reader_.failed()) read_watch(gen);
    });
  }

  void next(size_t i, const std::string& why) {
    if (!causes_.empty()) causes_ += "; ";
    causes_ += sentinel_name(i) + ": " + why;
    ask(i + 1);
  }

  void give_up() {
    close();
    Done done = std::move(done_);
    // A sentinel that refused our credentials will go on refusing them.
    done(Failure{any_auth_ ? Code::auth : Code::backend_unavailable,
                 "no sentinel gave the address of master " + quote(options_.master_name) + " (" +
                     causes_ + ")"},
         Address{});
  }

  const SentinelOptions options_;
  const std::chrono::milliseconds timeout_;
  std::vector<SentinelOptions::Sentinel> sentinels_;  // the last that answered first
  tcp::socket socket_;
  tcp::resolver resolver_;
  asio::steady_timer timer_;
  ReplyReader reader_;
  std::array<char, 4096> buffer_;
  std::string request_;
  size_t expected_ = 1;
  std::vector<Reply> replies_;
  Done done_;
  std::function<void(std::string)> moved_;
  Address resolved_;  // what the watch compares announcements with
  std::string causes_;
  bool any_auth_ = false;
  uint64_t generation_ = 0;  // of the current attempt or watch
};

}  // namespace

std::unique_ptr<AddressResolver> make_resolver(asio::io_context& io, const NodeOptions& options) {
  if (options.sentinel.sentinels.empty()) {
    return std::make_unique<StaticResolver>(io, Address{options.host, options.port});
  }
  return std::make_unique<SentinelResolver>(io, options);
}

}  // namespace rl::redis
