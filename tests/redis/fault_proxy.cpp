#include "fault_proxy.h"

#include <array>
#include <boost/asio.hpp>
#include <future>
#include <list>
#include <string>
#include <thread>

namespace rl::test {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

// One accepted connection and its own connection to the target.
struct Link {
  explicit Link(asio::io_context& io) : client(io), server(io) {}
  tcp::socket client;
  tcp::socket server;
  bool requests_dead = false;  // client -> server dropped
  bool replies_dead = false;   // server -> client dropped
  std::array<char, 64 * 1024> up{};
  std::array<char, 64 * 1024> down{};
};

}  // namespace

struct FaultProxy::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  tcp::endpoint target;
  std::list<std::shared_ptr<Link>> links;  // I/O thread only, like the flags below
  bool new_half_open = false;
  std::chrono::milliseconds delay{0};
  std::chrono::milliseconds drip{0};
  std::atomic<int> accepted{0};
  std::thread thread;
  const int port = acceptor.local_endpoint().port();

  explicit Impl(int target_port)
      : target(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(target_port)) {
    accept();
    thread = std::thread([this] {
      auto work = asio::make_work_guard(io);
      io.run();
    });
  }

  ~Impl() {
    run([this] {
      error_code ignored;
      acceptor.close(ignored);
      for (auto& link : links) close(*link, false);
      links.clear();
    });
    io.stop();
    thread.join();
  }

  // Runs `f` on the I/O thread and waits for it.
  template <typename F>
  void run(F f) {
    std::promise<void> done;
    asio::post(io, [&] {
      f();
      done.set_value();
    });
    done.get_future().wait();
  }

  void accept() {
    auto link = std::make_shared<Link>(io);
    acceptor.async_accept(link->client, [this, link](error_code ec) {
      if (ec) return;
      ++accepted;
      links.push_back(link);
      link->requests_dead = link->replies_dead = new_half_open;
      link->server.async_connect(target, [this, link](error_code ec2) {
        if (ec2) return drop(link);
        pump(link, true);
        pump(link, false);
      });
      accept();
    });
  }

  void pump(const std::shared_ptr<Link>& link, bool upstream) {
    tcp::socket& from = upstream ? link->client : link->server;
    auto& buffer = upstream ? link->up : link->down;
    from.async_read_some(asio::buffer(buffer), [this, link, upstream](error_code ec, size_t n) {
      if (ec) return drop(link);
      if (dead(*link, upstream)) return pump(link, upstream);
      auto data = std::make_shared<std::string>((upstream ? link->up : link->down).data(), n);
      if (drip.count() > 0) return forward_drip(link, upstream, data, 0);
      if (delay.count() == 0) return forward(link, upstream, data);
      auto timer = std::make_shared<asio::steady_timer>(io, delay);
      timer->async_wait(
          [this, link, upstream, data, timer](error_code) { forward(link, upstream, data); });
    });
  }

  void forward(const std::shared_ptr<Link>& link, bool upstream,
               const std::shared_ptr<std::string>& data) {
    if (dead(*link, upstream)) return pump(link, upstream);  // went half-open meanwhile
    tcp::socket& to = upstream ? link->server : link->client;
    asio::async_write(to, asio::buffer(*data), [this, link, upstream, data](error_code ec, size_t) {
      if (ec) return drop(link);
      pump(link, upstream);
    });
  }

  // One byte, then the next after `drip`, then reads on.
  void forward_drip(const std::shared_ptr<Link>& link, bool upstream,
                    const std::shared_ptr<std::string>& data, size_t at) {
    if (dead(*link, upstream)) return pump(link, upstream);
    if (at == data->size()) return pump(link, upstream);
    tcp::socket& to = upstream ? link->server : link->client;
    asio::async_write(to, asio::buffer(data->data() + at, 1),
                      [this, link, upstream, data, at](error_code ec, size_t) {
                        if (ec) return drop(link);
                        auto timer = std::make_shared<asio::steady_timer>(io, drip);
                        timer->async_wait([this, link, upstream, data, at, timer](error_code) {
                          forward_drip(link, upstream, data, at + 1);
                        });
                      });
  }

  static bool dead(const Link& link, bool upstream) {
    return upstream ? link.requests_dead : link.replies_dead;
  }

  static void close(Link& link, bool with_reset) {
    error_code ignored;
    for (tcp::socket* s : {&link.client, &link.server}) {
      if (with_reset) s->set_option(asio::socket_base::linger(true, 0), ignored);
      s->close(ignored);
    }
  }

  // One side closed or failed: so does the other (a half-open link never
  // gets here while its peer is silent).
  void drop(const std::shared_ptr<Link>& link) {
    close(*link, false);
    links.remove(link);
  }
};

FaultProxy::FaultProxy(int target_port) : impl_(std::make_unique<Impl>(target_port)) {}
FaultProxy::~FaultProxy() = default;

int FaultProxy::port() const {
  return impl_->port;
}

int FaultProxy::accepted() const {
  return impl_->accepted.load();
}

void FaultProxy::go_half_open(Direction direction) {
  impl_->run([&] {
    for (auto& link : impl_->links) {
      link->replies_dead = true;
      if (direction == Direction::both) link->requests_dead = true;
    }
  });
}

void FaultProxy::set_new_connections_half_open(bool on) {
  impl_->run([&] { impl_->new_half_open = on; });
}

void FaultProxy::set_delay(std::chrono::milliseconds delay) {
  impl_->run([&] { impl_->delay = delay; });
}

void FaultProxy::reset() {
  impl_->run([&] {
    for (auto& link : impl_->links) Impl::close(*link, true);
    impl_->links.clear();
  });
}

void FaultProxy::set_drip(std::chrono::milliseconds per_byte) {
  impl_->run([&] { impl_->drip = per_byte; });
}

void FaultProxy::go_down() {
  impl_->run([&] {
    error_code ignored;
    impl_->acceptor.close(ignored);
    for (auto& link : impl_->links) Impl::close(*link, true);
    impl_->links.clear();
  });
}

void FaultProxy::come_back() {
  impl_->run([&] {
    const tcp::endpoint at(asio::ip::make_address("127.0.0.1"),
                           static_cast<unsigned short>(impl_->port));
    impl_->acceptor.open(at.protocol());
    impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    impl_->acceptor.bind(at);
    impl_->acceptor.listen();
    impl_->accept();
  });
}

}  // namespace rl::test
