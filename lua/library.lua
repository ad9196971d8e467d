-- The entry points of the Redis Functions library (Redis 7): FCALL
-- rl_<version>_<algorithm>_<op>, with the arguments of common.lua. A
-- library's code runs at FUNCTION LOAD without Lua's standard functions
-- (Redis gives it only redis.register_function), so the scripts' code is
-- wrapped in setup() and runs at the first call; the closures and parsed
-- limits it makes then stay for every later call, where a script (EVALSHA)
-- makes them again on each.
local rl

local function entry(algorithm, op)
  return function(keys, argv)
    if not rl then rl = setup() end
    local algo = rl.algorithms[algorithm]
    if op == 'acquire' then return rl.decide(keys, argv, algo, true) end
    if op == 'peek' then return rl.decide(keys, argv, algo, false) end
    return rl.change(keys, argv, algo, op)
  end
end
