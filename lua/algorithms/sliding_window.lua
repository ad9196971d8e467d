-- Sliding window, as core/algorithms/sliding_window.cpp. State: non-zero counters
-- {index, count} per sub-window of granularity g, oldest first. Stored as:
-- count, then index and count of each counter.
local algo = { leases = true } -- its slices lease (common.lua lease_call)

-- Counters seen from sub-window `current`: `full` counted in full, `partial`
-- (the one straddling the window's start) weighted by (g - offset) / g.
local function view_at(s, n, current)
  local full, partial = 0, 0
  local oldest_full = current - n + 1
  for _, b in ipairs(s.buckets) do
    if b.index >= oldest_full and b.index <= current then full = full + b.count end
    if b.index == oldest_full - 1 then partial = b.count end
  end
  return { full = full, partial = partial }
end

-- The straddling counter's share, partial * (g - offset) / g, rounded up:
-- compared with whole counts, that is the exact comparison.
local function weighted(v, g, offset)
  local share, rest = muldiv(v.partial, g - offset, g)
  if rest > 0 then return share + 1 end
  return share
end

local function fits(v, r, g, offset, cost)
  return v.full + cost + weighted(v, g, offset) <= r.limit
end

local function first_fitting_offset(v, r, g, cost)
  local room = r.limit - v.full - cost
  if room < 0 then return g end
  if room >= v.partial then return 0 end
  return g - muldiv(room, g, v.partial)
end

local function prune(s, n, current)
  local kept = {}
  for _, b in ipairs(s.buckets) do
    if b.index >= current - n then kept[#kept + 1] = b end
  end
  s.buckets = kept
end

function algo.empty() return { buckets = {} } end
function algo.decode(nums, pos)
  local buckets = {}
  for i = 1, nums[pos] do
    buckets[i] = { index = nums[pos + 2 * i - 1], count = nums[pos + 2 * i] }
  end
  return { buckets = buckets }, pos + 1 + 2 * nums[pos]
end
function algo.encode(s, out)
  out[#out + 1] = int(#s.buckets)
  for _, b in ipairs(s.buckets) do
    out[#out + 1] = int(b.index)
    out[#out + 1] = int(b.count)
  end
end

function algo.idle_at(s, r)
  local k = #s.buckets
  if k == 0 then return 0 end
  return (s.buckets[k].index + idiv(r.window, r.g) + 1) * r.g
end

function algo.decide(s, r, now, cost)
  local g = r.g
  local v = verdict(r)
  local n = idiv(r.window, g)
  local current = idiv(now, g)
  local offset = now - current * g
  local here = view_at(s, n, current)
  local newest = -1
  if #s.buckets > 0 then newest = s.buckets[#s.buckets].index end
  if newest >= 0 and newest < current - n then newest = -1 end
  local used_full = here.full
  if cost > r.limit then
    v.retry = -1
  elseif fits(here, r, g, offset, cost) then
    v.allowed = true
    used_full = used_full + cost
    if cost > 0 then newest = current end
  else
    -- The straddling counter's weight falls as time passes in this
    -- sub-window; after it, usage only changes when a counter starts or
    -- stops straddling the window's start: try those sub-windows in order.
    local later_here = first_fitting_offset(here, r, g, cost)
    local candidates = {}
    for _, b in ipairs(s.buckets) do
      candidates[#candidates + 1] = b.index + n
      candidates[#candidates + 1] = b.index + n + 1
    end
    table.sort(candidates)
    if later_here < g then v.retry = later_here - offset else v.retry = -1 end
    for _, sub in ipairs(candidates) do
      if v.retry >= 0 then break end
      if sub > current then
        local at = first_fitting_offset(view_at(s, n, sub), r, g, cost)
        if at < g then v.retry = sub * g + at - now end
      end
    end
    if v.retry < 0 then -- unreachable while cost <= limit; stay safe
      v.retry = (current + n + 1) * g - now
    end
  end
  v.remaining = max(0, r.limit - used_full - weighted(here, g, offset))
  if newest >= 0 then v.reset = (newest + n + 1) * g - now end
  return v
end

function algo.consume(s, r, now, cost)
  local current = idiv(now, r.g)
  prune(s, idiv(r.window, r.g), current)
  local k = #s.buckets
  if k > 0 and s.buckets[k].index == current then
    s.buckets[k].count = s.buckets[k].count + cost
  else
    s.buckets[k + 1] = { index = current, count = cost }
  end
end

-- A lease's unused units, taken off the counter of the sub-window the
-- slice was counted in, on the state it was counted in
-- (core/algorithms/sliding_window.cpp give_back).
function algo.give_back(s, r, now, units, granted_at)
  if units <= 0 or not s.leased_at or s.leased_at > granted_at then return false end
  prune(s, idiv(r.window, r.g), idiv(now, r.g))
  local index = idiv(granted_at, r.g)
  for i, b in ipairs(s.buckets) do
    if b.index == index then
      b.count = b.count - min(units, b.count)
      if b.count == 0 then table.remove(s.buckets, i) end
      return true
    end
  end
  return false
end

function algo.refund(s, r, now, cost)
  prune(s, idiv(r.window, r.g), idiv(now, r.g))
  while cost > 0 and #s.buckets > 0 do
    local newest = s.buckets[#s.buckets]
    local taken = min(cost, newest.count)
    newest.count = newest.count - taken
    cost = cost - taken
    if newest.count == 0 then s.buckets[#s.buckets] = nil end
  end
end

