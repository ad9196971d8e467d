-- Cluster: one node's coalesced calls in one FCALL, whatever their slots
-- (core/redis/coalescer.h). A command's declared keys must share a slot,
-- so this one declares the first call's key only (a node that lost that
-- slot, or became a replica, answers MOVED at once, as for any call) and
-- carries the others in argv: n, keys 2..n, then the batch function's
-- groups. allow-cross-slot-keys lets the calls touch keys of several
-- slots; Redis still refuses a key this node does not serve ("non local
-- key") before that call touches anything, and the client sends that call
-- again alone, to be redirected.
local function node_batch(first, argv)
  local n = tonumber(argv[1])
  local keys, groups = { first[1] }, {}
  for i = 2, n do keys[i] = argv[i] end
  for i = n + 1, #argv do groups[i - n] = argv[i] end
  return batch(keys, groups)
end
redis.register_function { function_name = '@RL_LIBRARY@_node_batch', callback = node_batch,
  flags = { 'allow-cross-slot-keys' } }
