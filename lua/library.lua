-- The entry points of the Redis Functions library (Redis 7): FCALL
-- rl_<version>_<algorithm>_<op>, with the arguments of common.lua, and
-- rl_<version>_batch. A library's code runs at FUNCTION LOAD without Lua's
-- standard functions (Redis gives it only redis.register_function), so the
-- scripts' code is wrapped in setup() and runs at the first call; the
-- closures and parsed limits it makes then stay for every later call,
-- where a script (EVALSHA) makes them again on each.
local rl
local entries = {} -- '<algorithm>_<op>' -> its function

local function entry(algorithm, op)
  local run -- common.lua's operation, made at the first call
  return function(keys, argv)
    if not run then
      if not rl then rl = setup() end
      run = rl.operation(rl.algorithms[algorithm], op)
    end
    return run(keys, argv)
  end
end

-- Several calls in one FCALL, decided in order, each exactly as if sent
-- alone (requests that waited behind a write in flight; see
-- core/redis/coalescer.h). keys[i] is call i's key; argv holds 4 values per
-- call: '<algorithm>_<op>', then its 3 arguments. The reply has one element
-- per call: its reply, or its error; an error stops only its own call. The
-- calls that read Redis's clock read it once: a batch runs at one instant.
local function batch(keys, argv)
  local out, now = {}, nil
  for i = 1, #keys do
    local at = (i - 1) * 4
    local run = entries[argv[at + 1]]
    local at_time = argv[at + 2]
    if at_time == '' then
      if not now then
        local t = redis.call('TIME')
        now = string.format('%d', tonumber(t[1]) * 1000000 + tonumber(t[2]))
      end
      at_time = now
    end
    if not run then
      out[i] = { err = 'ERR rl batch: no function ' .. argv[at + 1] }
    else
      local ok, reply = pcall(run, { keys[i] }, { at_time, argv[at + 3], argv[at + 4] })
      if ok then
        out[i] = reply
      elseif type(reply) == 'table' and reply.err then
        out[i] = reply
      else
        out[i] = { err = 'ERR ' .. tostring(reply) }
      end
    end
  end
  return out
end
