-- The entry points of the Redis Functions library (Redis 7): FCALL
-- rl_<version>_<algorithm>_<op>, with the arguments of common.lua, and
-- rl_<version>_batch. A library's code runs at FUNCTION LOAD without Lua's
-- standard functions (Redis gives it only redis.register_function), so the
-- scripts' code is wrapped in setup() and runs at the first call; the
-- closures and parsed limits it makes then stay for every later call,
-- where a script (EVALSHA) makes them again on each.
local rl
local entries = {} -- '<algorithm>_<op>' -> its function (registered below)
-- How a batch names its calls, '<algorithm>_<op>' (usual calls: limits,
-- count) and '<algorithm>_<op>_full' (one call: now, cost, limits) -> the
-- operation, and its function (key, now, cost_text, limits) from
-- common.lua's decider, made at its first use.
local kinds = {}

local function decider_of(kind)
  if not rl then rl = setup() end
  kind.decide = rl.decider(rl.algorithms[kind.algorithm], kind.op)
  return kind.decide
end

-- The function FCALL rl_<version>_<algorithm>_<op> runs: its arguments
-- read as common.lua's operation reads them (inline here: one Lua call
-- less per decision), then decided.
local function entry(algorithm, op)
  local kind = { algorithm = algorithm, op = op, full = false }
  kinds[algorithm .. '_' .. op] = kind
  kinds[algorithm .. '_' .. op .. '_full'] = { algorithm = algorithm, op = op, full = true }
  return function(keys, argv)
    local decide = kind.decide or decider_of(kind)
    local now, cost_text, limits = argv[1], argv[2], argv[3]
    if cost_text == nil then return decide(keys[1], nil, '1', now) end -- the short form
    if now == '' then
      now = nil
    else
      now = tonumber(now) or error('rl: now is not a number: ' .. now, 0)
    end
    return decide(keys[1], now, cost_text, limits)
  end
end

-- Several calls in one FCALL, decided in order, each exactly as if sent
-- alone (requests that waited behind a write in flight; see
-- core/redis/coalescer.h). keys[i] is call i's key; argv holds the calls
-- in order, as groups: '<algorithm>_<op>', limits, n for n calls in a row
-- of one limiter's usual call (Redis TIME, cost 1), the next n keys'; and
-- '<algorithm>_<op>_full', now, cost, limits for any other call, one key.
-- So a batch of one limiter's usual calls carries each call's key alone
-- (each argument costs Redis work per call). The reply has one element per
-- call: its reply, or its error; an error stops only its own call, but for
-- a group Lua cannot read (an unknown name, a bad count), after which the
-- arguments cannot be told apart. The calls that read Redis's clock read
-- it once: a batch runs at one instant. One pcall for the whole batch,
-- made again after the call that raised an error.
local function batch(keys, argv)
  if not rl then rl = setup() end
  local out, n, now = {}, #keys, nil
  local i, at = 1, 1 -- the next call, and the next group's first argument
  local left, decide, at_time, cost, limits = 0, nil, nil, nil, nil -- the group's
  local function run() -- decides calls i.. in order; a group it cannot read: why
    while i <= n do
      local k = i
      i = i + 1 -- an error from here on is call k's
      if left == 0 then -- call k starts a group: read it, and where the next one starts
        local name = argv[at]
        local kind = kinds[name]
        if not kind then return 'ERR rl batch: no function ' .. tostring(name) end
        if kind.full then
          at_time, cost, limits = argv[at + 1], argv[at + 2], argv[at + 3]
          at = at + 4
        else
          at_time, cost, limits, left = '', '1', argv[at + 1], tonumber(argv[at + 2])
          at = at + 3
          if not left or left < 1 then return 'ERR rl batch: bad count after ' .. name end
          left = left - 1 -- the calls after k in this group
        end
        -- Whatever raises an error from here on, the groups stay in step.
        decide = kind.decide or decider_of(kind)
        if at_time == '' then
          if not now then now = rl.now() end
          at_time = now
        else
          at_time = tonumber(at_time) or error('rl: now is not a number: ' .. at_time, 0)
        end
      else
        left = left - 1
      end
      out[k] = decide(keys[k], at_time, cost, limits)
    end
  end
  while i <= n do
    local ok, got = pcall(run)
    if ok then
      if got then -- the call that named it and every one after it
        for j = i - 1, n do out[j] = { err = got } end
      end
      break
    end
    -- call i - 1 raised the error; the calls after it go on
    if type(got) == 'table' and got.err then
      out[i - 1] = got
    else
      out[i - 1] = { err = 'ERR ' .. tostring(got) }
    end
  end
  return out
end
