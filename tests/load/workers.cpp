#include "workers.h"

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "redis_probe.h"

namespace rl_load {
namespace {

bool write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

void sleep_until_us(int64_t t_us) {
  timespec ts{static_cast<time_t>(t_us / 1000000), static_cast<long>(t_us % 1000000 * 1000)};
  while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

}  // namespace

bool run_workers(int processes, const std::function<int(int, const WaitForStart&)>& worker,
                 const std::function<void()>& on_ready, int64_t lead_us) {
  struct Child {
    pid_t pid;
    int ready_fd, go_fd;
  };
  std::vector<Child> children;
  std::fflush(nullptr);
  for (int i = 0; i < processes; ++i) {
    int ready[2], go[2];
    if (pipe(ready) != 0 || pipe(go) != 0) return false;
    const pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
      close(ready[0]);
      close(go[1]);
      for (const Child& c : children) {
        close(c.ready_fd);
        close(c.go_fd);
      }
      const WaitForStart wait_for_start = [&] {
        const char ok = 1;
        int64_t start = 0;
        if (!write_all(ready[1], &ok, 1) || !read_all(go[0], &start, sizeof start)) _exit(3);
        sleep_until_us(start);
        return start;
      };
      const int code = worker(i, wait_for_start);
      std::fflush(nullptr);
      _exit(code);
    }
    close(ready[1]);
    close(go[0]);
    children.push_back({pid, ready[0], go[1]});
  }
  bool ok = true;
  for (const Child& c : children) {
    char byte = 0;
    ok = read_all(c.ready_fd, &byte, 1) && ok;
  }
  if (ok) {
    on_ready();
    const int64_t start = realtime_us() + lead_us;
    for (const Child& c : children) ok = write_all(c.go_fd, &start, sizeof start) && ok;
  }
  for (const Child& c : children) {
    close(c.go_fd);
    close(c.ready_fd);
    int status = 0;
    waitpid(c.pid, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok;
}

}  // namespace rl_load
