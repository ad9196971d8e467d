// rl's own threads carry names that start with "rl-", so that top -H, ps -L,
// perf and gdb tell them apart from the host program's threads: "rl-io" is
// a Redis store's I/O thread, "rl-exec" the thread that completes the memory
// store's asynchronous calls and times every store's waits (executor.h).
#pragma once

namespace rl {

// Names the calling thread (Linux keeps at most 15 bytes). Does nothing
// where the platform cannot.
void name_this_thread(const char* name);

}  // namespace rl
