-- Cluster: one node's coalesced calls in one FCALL, whatever their slots
-- (core/redis/coalescer.h). A command's declared keys must share a slot,
-- so this one declares none and carries them in argv: n, the n keys, then
-- the batch function's groups. allow-cross-slot-keys lets the calls touch
-- keys of several slots; Redis still refuses any key this node does not
-- serve ("non local key"), before that call touches anything, and the
-- client sends that call again alone, to be redirected.
local function node_batch(_, argv)
  local n = tonumber(argv[1])
  local keys, groups = {}, {}
  for i = 1, n do keys[i] = argv[i + 1] end
  for i = n + 2, #argv do groups[i - n - 1] = argv[i] end
  return batch(keys, groups)
end
redis.register_function { function_name = '@RL_LIBRARY@_node_batch', callback = node_batch,
  flags = { 'allow-cross-slot-keys' } }
