-- Suppressed, as core/algorithms/suppressed.cpp. State per limit: the cached
-- admit threshold and until when it holds, then per sub-window of
-- granularity g its index, total (every call) and accepted (admitted)
-- cost, oldest first. Stored as: factor_until, admit, count, then index,
-- total and accepted of each sub-window. The limits' burst is the hard
-- limit. argv[2] is '<cost> <draw> <factor_reuse_us>': the draw, uniform in
-- [0, 2^24), comes from the caller so that memory:// and Redis agree.
local algo = {}
local SCALE = 16777216 -- 2^24: a call in the band is admitted when draw < admit
local MAX_TOTAL = 1099511627776 -- 2^40: a sub-window's total saturates here
local SECOND = 1000000

function algo.empty() return { buckets = {}, factor_until = 0, admit = 0 } end

function algo.decode(nums, pos)
  local s = { factor_until = nums[pos], admit = nums[pos + 1], buckets = {} }
  local at = pos + 3
  for i = 1, nums[pos + 2] do
    s.buckets[i] = { index = nums[at], total = nums[at + 1], accepted = nums[at + 2] }
    at = at + 3
  end
  return s, at
end

function algo.encode(s, out)
  out[#out + 1] = int(s.factor_until)
  out[#out + 1] = int(s.admit)
  out[#out + 1] = int(#s.buckets)
  for _, b in ipairs(s.buckets) do
    out[#out + 1] = int(b.index)
    out[#out + 1] = int(b.total)
    out[#out + 1] = int(b.accepted)
  end
end

function algo.idle_at(s, r)
  local k = #s.buckets
  if k == 0 then return 0 end
  return (s.buckets[k].index + idiv(r.window, r.g)) * r.g
end

-- Drops the sub-windows that left the window, and with them a factor
-- computed while they counted.
local function prune(s, r, now)
  local oldest = idiv(now, r.g) - idiv(r.window, r.g) + 1
  local kept = {}
  for _, b in ipairs(s.buckets) do
    if b.index >= oldest then kept[#kept + 1] = b end
  end
  if #kept < #s.buckets then s.factor_until = 0 end
  s.buckets = kept
end

local function totals(s, r, now)
  local t = { total = 0, accepted = 0, recent = 0 }
  for _, b in ipairs(s.buckets) do
    t.total = t.total + b.total
    t.accepted = t.accepted + b.accepted
    if b.index * r.g >= now - SECOND then t.recent = t.recent + b.total end
  end
  return t
end

-- SCALE * (limit / window) / P rounded down, P the larger of total / window
-- and the last second's rate; min of the two quotients is the quotient by
-- the max, and recent * seconds > total is tested without the product.
local function admit_threshold(t, r)
  if t.total >= r.burst then return 0 end
  if t.accepted < r.limit then return SCALE end
  local by_window = muldiv(r.limit, SCALE, t.total)
  local seconds = idiv(r.window, SECOND)
  if t.recent > idiv(t.total, seconds) then
    return min(by_window, idiv(muldiv(r.limit, SCALE, t.recent), seconds))
  end
  return by_window
end

local function judge(s, r, t, now, cost, draw)
  local forecast = t.accepted + cost
  if forecast <= r.limit then return { admits = true, admit = SCALE, cache = false } end
  if forecast == r.burst then return { admits = true, admit = SCALE, cache = true } end
  if forecast > r.burst then return { admits = false, admit = 0, cache = true } end
  local admit, cache = s.admit, false
  if not (now < s.factor_until) then
    admit, cache = admit_threshold(t, r), true
  end
  return { admits = draw < admit, admit = admit, cache = cache }
end

local function retry_after(s, r, t, now, cost)
  if cost > r.burst then return -1 end
  local n, g = idiv(r.window, r.g), r.g
  if cost > r.limit then
    if #s.buckets == 0 then return 0 end
    return (s.buckets[#s.buckets].index + n) * g - now
  end
  local accepted = t.accepted
  for _, b in ipairs(s.buckets) do
    if accepted + cost <= r.limit then break end
    accepted = accepted - b.accepted
    if accepted + cost <= r.limit then return (b.index + n) * g - now end
  end
  return 0
end

local function record(s, r, now, cost, admitted)
  local current = idiv(now, r.g)
  local k = #s.buckets
  if k == 0 or s.buckets[k].index ~= current then
    k = k + 1
    s.buckets[k] = { index = current, total = 0, accepted = 0 }
  end
  local b = s.buckets[k]
  b.total = min(b.total + cost, MAX_TOTAL)
  if admitted then b.accepted = b.accepted + cost end
end

local function give_back(s, cost)
  for i = #s.buckets, 1, -1 do
    if cost <= 0 then break end
    local b = s.buckets[i]
    local taken = min(cost, b.accepted)
    b.accepted = b.accepted - taken
    cost = cost - taken
  end
end

-- refund and reset: the state afterwards, as allowed.
local function change_all(key, states, rates, now, cost, op)
  local vs = {}
  for i, r in ipairs(rates) do
    if op == 'reset' then states[i] = algo.empty() end
    prune(states[i], r, now)
    if op == 'refund' then give_back(states[i], cost) end
    local t = totals(states[i], r, now)
    local v = verdict(r)
    v.allowed = true
    v.remaining = max(0, r.limit - t.accepted)
    local idle = algo.idle_at(states[i], r)
    if idle > now then v.reset = idle - now end
    vs[i] = v
  end
  save(key, algo, states, rates, now)
  local out = combine(vs)
  out[7], out[8] = 0, 0 -- 7th: next_retry (common.lua), unknown here
  return out
end

function algo.run(keys, argv, op)
  local key, now, rates = keys[1], now_us(argv[1]), limits_of(argv[3])
  local args = numbers_of(argv[2])
  local cost, draw, reuse = args[1], args[2], args[3]
  local states = load(key, algo, rates)
  if op == 'refund' or op == 'reset' then return change_all(key, states, rates, now, cost, op) end
  local ts, js, admitted = {}, {}, true
  for i, r in ipairs(rates) do
    prune(states[i], r, now)
    ts[i] = totals(states[i], r, now)
    js[i] = judge(states[i], r, ts[i], now, cost, draw)
    admitted = admitted and js[i].admits
  end
  local vs, admit = {}, SCALE
  for i, r in ipairs(rates) do
    local s, t, j = states[i], ts[i], js[i]
    local v = verdict(r)
    v.allowed = admitted
    if not admitted and not j.admits then v.retry = retry_after(s, r, t, now, cost) end
    if op == 'acquire' then
      if j.cache then
        s.factor_until = now + reuse
        s.admit = j.admit
      end
      record(s, r, now, cost, admitted)
    end
    local accepted = t.accepted
    if admitted then accepted = accepted + cost end
    v.remaining = max(0, r.limit - accepted)
    local idle = algo.idle_at(s, r)
    if idle > now then v.reset = idle - now end
    vs[i] = v
    admit = min(admit, j.admit)
  end
  if op == 'acquire' then save(key, algo, states, rates, now) end
  local out = combine(vs)
  out[1] = admitted and 1 or 0
  out[7], out[8] = 0, SCALE - admit
  return out
end
