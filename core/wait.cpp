#include "wait.h"

#include <algorithm>

namespace rl {

Wait::Wait(std::shared_ptr<Store> store, std::shared_ptr<Backend> backend, Call call,
           int64_t deadline, Completion done)
    : store_(std::move(store)),
      backend_(std::move(backend)),
      call_(std::move(call)),
      deadline_(deadline),
      done_(std::move(done)) {}

void Wait::start() {
  attempt(call_);
}

void Wait::attempt(Call call) {
  backend_->run_async(std::move(call),
                      [self = shared_from_this()](Outcome&& o) { self->decided(std::move(o)); });
}

// A retry's store call ends by the wait's deadline too (at least 1 us
// left: it was only scheduled when it could start by then).
void Wait::retry() {
  Call call = call_;
  const int64_t left = std::max<int64_t>(1, deadline_ - store_->clock().now_us());
  if (call.timeout_us == 0 || left < call.timeout_us) call.timeout_us = left;
  attempt(std::move(call));
}

namespace {

// Units an admission took from the key: on_failure=open counted nothing.
bool took_units(const Outcome& o) {
  return o.code == Code::ok && o.verdict.allowed && o.verdict.source != Source::fail_open;
}

}  // namespace

void Wait::decided(Outcome&& o) {
  // A manual clock never moves by itself: waiting on it would never end.
  Clock& clock = store_->clock();
  const bool ends = o.code != Code::ok || o.verdict.allowed || o.verdict.retry_after_us < 0 ||
                    clock.is_manual() || clock.now_us() + o.verdict.retry_after_us > deadline_;
  bool ended = false;
  bool refund_now = false;
  {
    std::lock_guard lock(mutex_);
    ended = ends || cancelled_;
    if (ended) {
      state_ = State::ended;
      admitted_ = took_units(o);
      refund_now = cancelled_ && admitted_;
      refunded_ = refund_now;
    } else {
      state_ = State::sleeping;
      last_denial_ = o;
    }
  }
  if (refund_now) {
    // Nobody took the units: they go back before the completion says so.
    return refund(
        [self = shared_from_this(), o = std::move(o)]() mutable { self->done_(std::move(o)); });
  }
  if (ended) return done_(std::move(o));
  const bool posted = store_->post_after(
      o.verdict.retry_after_us,
      [self = shared_from_this()](bool shutting_down) { self->woken(shutting_down); });
  if (!posted) woken(true);
}

void Wait::woken(bool shutting_down) {
  Outcome ending;
  bool ended = false;
  {
    std::lock_guard lock(mutex_);
    // A cancel's wake-up and the timer both come here; the first ends it.
    if (state_ != State::sleeping) return;
    ended = shutting_down || cancelled_;
    state_ = ended ? State::ended : State::attempting;
    if (shutting_down)
      ending = Outcome::failure(Code::shutdown, "store: closed");
    else if (cancelled_)
      ending = std::move(last_denial_);
  }
  if (ended) return done_(std::move(ending));
  try {
    retry();
  } catch (const Error& e) {
    {
      std::lock_guard lock(mutex_);
      state_ = State::ended;
    }
    done_(Outcome::failure(e.code(), e.what()));
  }
}

void Wait::cancel() {
  bool refund_now = false;
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (cancelled_) return;
    cancelled_ = true;
    if (state_ == State::ended && admitted_ && !refunded_) refund_now = refunded_ = true;
    wake = state_ == State::sleeping;
  }
  if (refund_now) refund([] {});
  // Ends the wait now rather than when its timer runs out. If the store is
  // closing, the timer's own run (shutting down) ends it instead.
  if (wake) store_->post_after(0, [self = shared_from_this()](bool s) { self->woken(s); });
}

void Wait::refund(std::function<void()> then) {
  Call call = call_;
  call.op = Op::refund;
  call.timeout_us = 0;
  try {
    backend_->run_async(std::move(call), [then](Outcome&&) { then(); });
  } catch (const Error&) {
    then();  // the store closed: there is nothing left to give back to
  }
}

}  // namespace rl
