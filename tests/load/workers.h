// Real OS processes for a load: fork() of N workers, each of which sets
// itself up (its own rl store and limiter), says it is ready, and starts at
// one instant the parent picks once all are ready.
#pragma once

#include <cstdint>
#include <functional>

namespace rl_load {

// In a worker: says it is ready, then blocks until the common start and
// returns it (CLOCK_REALTIME, us).
using WaitForStart = std::function<int64_t()>;

// Forks `processes` workers running `worker(index, wait_for_start)` (its
// return value is the process's exit code) and waits for them all. Once
// every worker is ready, `on_ready` runs in the parent (CONFIG RESETSTAT,
// say), then the start is set `lead_us` later. False when a worker failed
// (exit code, signal, or exit before it was ready). The parent must hold no
// threads and no rl store when it calls this.
bool run_workers(int processes, const std::function<int(int, const WaitForStart&)>& worker,
                 const std::function<void()>& on_ready, int64_t lead_us = 200000);

}  // namespace rl_load
