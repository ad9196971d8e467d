-- GCRA, as core/gcra.cpp. State: tat (theoretical arrival time, rounded up
-- to the microsecond) and frac (how far the exact TAT lies before it, in
-- 1/limit_reduced us). Durations below are scaled to 1/limit_reduced us, so
-- one unit of cost is exactly window_reduced of them.
local algo = {}

-- How far the TAT lies ahead of now (0 when it is in the past).
local function ahead_of(s, r, now)
  if s.tat <= now then return 0 end
  return (s.tat - now) * r.lr - s.frac
end

-- Stores a TAT `ahead` scaled units after now.
local function set_ahead(s, r, now, ahead)
  local us = ceil_div(ahead, r.lr)
  s.tat = now + us
  s.frac = us * r.lr - ahead
end

local function tolerance(r) return r.burst * r.wr end

function algo.empty() return { tat = 0, frac = 0 } end
function algo.decode(nums, pos) return { tat = nums[pos], frac = nums[pos + 1] }, pos + 2 end
function algo.encode(s, out)
  out[#out + 1] = int(s.tat)
  out[#out + 1] = int(s.frac)
end
function algo.idle_at(s) return s.tat end

function algo.decide(s, r, now, cost)
  local v = verdict(r)
  local ahead = ahead_of(s, r, now)
  local after = ahead -- the TAT once this decision is recorded
  if cost > r.burst then
    v.retry = -1
  elseif ahead + cost * r.wr <= tolerance(r) then
    v.allowed = true
    after = after + cost * r.wr
  else
    v.retry = ceil_div(ahead + cost * r.wr - tolerance(r), r.lr)
  end
  v.remaining = idiv(tolerance(r) - after, r.wr)
  v.reset = ceil_div(after, r.lr)
  return v
end

function algo.consume(s, r, now, cost)
  set_ahead(s, r, now, ahead_of(s, r, now) + cost * r.wr)
end

function algo.refund(s, r, now, cost)
  set_ahead(s, r, now, max(0, ahead_of(s, r, now) - min(cost, r.burst) * r.wr))
end

