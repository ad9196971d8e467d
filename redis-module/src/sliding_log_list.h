// sliding_log on its Redis LIST (key schema v2, docs/key-schema.md): one
// 24-byte element per instant, '<i8i8i8' (at, cost, running total), shared
// by every limit of the key. The core's SlidingLog decides on a lazy view
// of the list that reads only the elements its searches touch (O(log n)
// per decision; in the common case a few near the list's ends); the writes
// are the Lua path's own (LTRIM of the dead head, RPUSH or LSET -1, RPOP,
// PEXPIREAT, DEL), applied through the list API and gathered into
// `effects`, which replicates them in order.
#pragma once

#include "batch_effects.h"
#include "decision.h"
#include "module_api.h"

namespace rl::module {

// `key` is open in `mode` (reading, and writing unless a peek), empty or a
// list; it may be reopened (in `mode`) while the call reads the list.
Reply run_sliding_log(RedisModuleCtx* ctx, RedisModuleKey*& key, RedisModuleString* name, int mode,
                      const Request& q, int64_t now, BatchEffects& effects);

}  // namespace rl::module
