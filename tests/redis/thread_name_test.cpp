// rl's threads are named (core/thread_name.h): an asynchronous call on a
// Redis store completes on "rl-io", a timed task runs on "rl-exec".
#include <pthread.h>

#include <chrono>
#include <future>

#include "executor.h"
#include "redis_env.h"

namespace rl::test {
namespace {

std::string this_thread_name() {
  char name[16] = {};
  pthread_getname_np(pthread_self(), name, sizeof name);
  return name;
}

TEST(ThreadName, ARedisStoresCompletionsRunOnRlIo) {
  auto store = open_redis();
  Limiter limiter(store, limiter_settings("gcra", "1000/s"));
  std::promise<std::string> named;
  limiter.run_async(Call{Op::acquire, "k", 1}, [&](Outcome&& o) {
    EXPECT_EQ(o.code, Code::ok) << o.message;
    named.set_value(this_thread_name());
  });
  EXPECT_EQ(named.get_future().get(), "rl-io");
}

TEST(ThreadName, TimedTasksRunOnRlExec) {
  Executor executor;
  std::promise<std::string> named;
  ASSERT_TRUE(executor.post_after(std::chrono::microseconds(0),
                                  [&](bool) { named.set_value(this_thread_name()); }));
  EXPECT_EQ(named.get_future().get(), "rl-exec");
}

}  // namespace
}  // namespace rl::test
