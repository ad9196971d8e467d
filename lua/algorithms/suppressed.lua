-- Suppressed, as core/algorithms/suppressed.cpp. State per limit: the cached
-- base admit probability and until when it holds, then per sub-window of
-- granularity g its index, total (every call) and accepted (admitted)
-- cost, oldest first. Stored as: factor_until, base, count, then index,
-- total and accepted of each sub-window. The limits' burst is the hard
-- limit. argv[2] is '<cost> <draw> <factor_reuse_us>': the draw, uniform in
-- [0, 2^24), comes from the caller so that memory:// and Redis agree.
local algo = {}
local SCALE = 16777216 -- 2^24: a call under overload is admitted when draw < its threshold
local MAX_TOTAL = 1099511627776 -- 2^40: a sub-window's total saturates here
local SECOND = 1000000

function algo.empty() return { buckets = {}, factor_until = 0, base = 0 } end

function algo.decode(nums, pos)
  local s = { factor_until = nums[pos], base = nums[pos + 1], buckets = {} }
  local at = pos + 3
  for i = 1, nums[pos + 2] do
    s.buckets[i] = { index = nums[at], total = nums[at + 1], accepted = nums[at + 2] }
    at = at + 3
  end
  return s, at
end

function algo.encode(s, out)
  out[#out + 1] = int(s.factor_until)
  out[#out + 1] = int(s.base)
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

-- The start of the oldest sub-window that started in the last second
-- (index * g >= now - 1 s, the least such; it may be before 0).
local function recent_start(r, now)
  if now >= SECOND then return ceil_div(now - SECOND, r.g) * r.g end
  return -idiv(SECOND - now, r.g) * r.g
end

local function totals(s, r, now)
  local t = { total = 0, accepted = 0, recent = 0, current_total = 0, current_accepted = 0 }
  local current, recent_from = idiv(now, r.g), recent_start(r, now)
  for _, b in ipairs(s.buckets) do
    t.total = t.total + b.total
    t.accepted = t.accepted + b.accepted
    if b.index * r.g >= recent_from then t.recent = t.recent + b.total end
    if b.index == current then
      t.current_total, t.current_accepted = b.total, b.accepted
    end
  end
  return t
end

-- SCALE * soft / P rounded down, at most SCALE, P = total * window / span:
-- the span's share of the window in 1 / SCALE, times soft, over total.
local function base_of(total, span, r)
  if total == 0 then return SCALE end
  local share = muldiv(SCALE, span, r.window)
  local base = muldiv(share, r.limit, total) -- share <= 2^24, limit <= 2^41, total <= 2^51
  return min(SCALE, base)
end

-- soft / P, P the larger of the rate over the live sub-windows and (windows
-- above a second) over those that started in the last second; each span at
-- least one sub-window.
local function base_threshold(t, r, now)
  local live_span = (idiv(r.window, r.g) - 1) * r.g + (now - idiv(now, r.g) * r.g)
  local by_window = base_of(t.total, max(r.g, live_span), r)
  if r.window <= SECOND then return by_window end
  local recent_span = now - recent_start(r, now)
  return min(by_window, base_of(t.recent, max(r.g, recent_span), r))
end

-- deficit = base * (t + cost) - a * SCALE; admitted with probability
-- deficit / cost in [0, 1]. base * (t + cost) = q * SCALE + rest.
local function paced_threshold(t, base, cost)
  local q, rest = muldiv(t.current_total + cost, base, SCALE)
  local whole = q - t.current_accepted -- deficit = whole * SCALE + rest
  if whole < 0 or (whole == 0 and rest == 0) then return 0 end
  if whole >= cost then return SCALE end
  local q2, r2 = muldiv(whole, SCALE, cost)
  return min(SCALE, q2 + idiv(r2 + rest, cost))
end

local function judge(s, r, t, now, cost, draw)
  if t.accepted + cost > r.burst then return { admits = false, base = 0, cache = false } end
  if t.total + cost <= r.limit then return { admits = true, base = SCALE, cache = false } end
  local base, cache = s.base, not (now < s.factor_until)
  if cache then base = base_threshold(t, r, now) end
  return { admits = draw < paced_threshold(t, base, cost), base = base, cache = cache }
end

local function retry_after(s, r, t, now, cost)
  if cost > r.burst then return -1 end
  local n, g = idiv(r.window, r.g), r.g
  if cost > r.limit then
    if #s.buckets == 0 then return 0 end
    return (s.buckets[#s.buckets].index + n) * g - now
  end
  local total = t.total
  for _, b in ipairs(s.buckets) do
    if total + cost <= r.limit then break end
    total = total - b.total
    if total + cost <= r.limit then return (b.index + n) * g - now end
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

-- A refunded call is taken back as if never offered: from accepted and total.
local function give_back(s, cost)
  for i = #s.buckets, 1, -1 do
    if cost <= 0 then break end
    local b = s.buckets[i]
    local taken = min(cost, b.accepted)
    b.accepted = b.accepted - taken
    b.total = b.total - taken
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
  return reply(out)
end

function algo.run(keys, argv, op)
  local key, now, rates = keys[1], now_us(argv[1]), limits_of(argv[3])
  local args = numbers_of(argv[2])
  local cost, draw, reuse = args[1], args[2], args[3]
  local states = load(key, algo, rates)
  if op == 'refund' or op == 'reset' then return change_all(key, states, rates, now, cost, op) end
  local ts, js, admitted = {}, {}, true
  -- a cost above a hard limit could never be admitted: nothing records it
  local records = op == 'acquire'
  for i, r in ipairs(rates) do
    records = records and cost <= r.burst
    prune(states[i], r, now)
    ts[i] = totals(states[i], r, now)
    js[i] = judge(states[i], r, ts[i], now, cost, draw)
    admitted = admitted and js[i].admits
  end
  local vs, base = {}, SCALE
  for i, r in ipairs(rates) do
    local s, t, j = states[i], ts[i], js[i]
    local v = verdict(r)
    v.allowed = admitted
    if not admitted and not j.admits then v.retry = retry_after(s, r, t, now, cost) end
    if records then
      if j.cache then
        s.factor_until = now + reuse
        s.base = j.base
      end
      record(s, r, now, cost, admitted)
    end
    local accepted = t.accepted
    if admitted then accepted = accepted + cost end
    v.remaining = max(0, r.limit - accepted)
    local idle = algo.idle_at(s, r)
    if idle > now then v.reset = idle - now end
    vs[i] = v
    base = min(base, j.base)
  end
  if op == 'acquire' then save(key, algo, states, rates, now) end
  local out = combine(vs)
  out[1] = admitted and 1 or 0
  out[7], out[8] = 0, SCALE - base
  return reply(out)
end
