-- Token bucket, as core/algorithms/token_bucket.cpp. State: level (tokens scaled by
-- window_reduced) and at (when it was measured); a missing key is unused.
-- The level reaches burst * window_reduced (up to 2^85), so here it is a
-- pair (tokens, part): tokens * window_reduced + part. Stored as one number
-- when the capacity fits (burst * window_reduced <= 2^52, every limit rl
-- accepted before wider ones), else as its two.
local algo = { leases = true, holds = true } -- slices hold their units (common.lua lease_call)

local function narrow(r) return r.burst * r.wr <= 4503599627370496 end

-- The time until `tokens, part` scaled tokens have refilled, rounded up.
local function time_for(r, tokens, part)
  local us, rest = muldiv(tokens, r.wr, r.lr)
  return us + ceil_div(rest + part, r.lr)
end

local function raw_level_at(s, r, now)
  if not s.used then return r.burst, 0 end
  local elapsed = max(0, now - s.at)
  if elapsed >= time_for(r, pair_sub(r.wr, r.burst, 0, s.tokens, s.part)) then
    return r.burst, 0
  end
  return pair_add(r.wr, s.tokens, s.part, muldiv(elapsed, r.lr, r.wr))
end

-- The holds' floor under the capacity (core/algorithms/lease_hold.cpp):
-- each generation's units until it expires, then less by the refill since.
local function hold_term(r, now, units, expiry)
  if units <= 0 then return 0, 0 end
  if now <= expiry then return units, 0 end
  local q, rest = muldiv(now - expiry, r.lr, r.wr)
  if pair_le(units, 0, q, rest) then return 0, 0 end
  return pair_sub(r.wr, units, 0, q, rest)
end

local function hold_floor(h, r, now)
  local u1, e1, u2, e2 = hold_terms(h)
  local t, p = hold_term(r, now, u1, e1)
  local t2, p2 = hold_term(r, now, u2, e2)
  if pair_le(t2, p2, t, p) then return t, p end
  return t2, p2
end

-- The least wait from now after which the floor is at most `tokens, part`.
local function hold_wait(h, r, now, tokens, part)
  return hold_most(h, function(units, expiry)
    if pair_le(units, 0, tokens, part) then return 0 end
    return expiry - now + time_for(r, pair_sub(r.wr, units, 0, tokens, part))
  end)
end

local function hold_idle(h, r)
  return hold_most(h, function(units, expiry) return expiry + time_for(r, units, 0) end)
end

-- The level, capped too at capacity minus what slices hold.
local function level_at(s, r, now)
  local tokens, part = raw_level_at(s, r, now)
  if s.hold then
    local ct, cp = pair_sub(r.wr, r.burst, 0, hold_floor(s.hold, r, now))
    if pair_le(ct, cp, tokens, part) then return ct, cp end
  end
  return tokens, part
end

local function settle(s, r, now) hold_settle(s, r, now, hold_idle) end

function algo.empty() return { used = false, tokens = 0, part = 0, at = 0 } end
function algo.decode(nums, pos, r)
  if narrow(r) then
    local tokens = idiv(nums[pos], r.wr)
    return { used = true, tokens = tokens, part = nums[pos] - tokens * r.wr, at = nums[pos + 1] }, pos + 2
  end
  return { used = true, tokens = nums[pos], part = nums[pos + 1], at = nums[pos + 2] }, pos + 3
end
function algo.encode(s, out, r)
  if narrow(r) then
    out[#out + 1] = int(s.tokens * r.wr + s.part)
  else
    out[#out + 1] = int(s.tokens)
    out[#out + 1] = int(s.part)
  end
  out[#out + 1] = int(s.at)
end

function algo.idle_at(s, r)
  if not s.used then return 0 end
  local full_at = s.at + time_for(r, pair_sub(r.wr, r.burst, 0, s.tokens, s.part))
  if s.hold then return max(full_at, hold_idle(s.hold, r)) end
  return full_at
end

function algo.decide(s, r, now, cost)
  local v = verdict(r)
  local tokens, part = level_at(s, r, now)
  if cost > r.burst then
    v.retry = -1
  elseif cost <= tokens then
    v.allowed = true
    tokens = tokens - cost
  elseif not s.hold then
    v.retry = time_for(r, pair_sub(r.wr, cost, 0, tokens, part))
  else
    -- The stored level refills at the rate, the cap the holds lower only
    -- once their generation expires: both must reach the cost.
    local rt, rp = raw_level_at(s, r, now)
    local retry = 0
    if not pair_le(cost, 0, rt, rp) then retry = time_for(r, pair_sub(r.wr, cost, 0, rt, rp)) end
    v.retry = max(retry, hold_wait(s.hold, r, now, r.burst - cost, 0))
  end
  v.remaining = tokens
  v.reset = time_for(r, pair_sub(r.wr, r.burst, 0, tokens, part))
  if s.hold then v.reset = max(v.reset, hold_wait(s.hold, r, now, 0, 0)) end
  return v
end

function algo.consume(s, r, now, cost)
  local tokens, part = level_at(s, r, now)
  s.tokens, s.part = tokens - cost, part
  s.at = max(now, s.at)
  s.used = true
  settle(s, r, now)
end

-- Puts `units` back on the level `tokens, part`, up to the capacity.
local function set_back(s, r, now, tokens, part, units)
  tokens = tokens + min(max(units, 0), r.burst)
  if tokens >= r.burst then tokens, part = r.burst, 0 end
  s.tokens, s.part = tokens, part
  s.at = max(now, s.at)
  s.used = true
end

local bucket = { level = level_at, put = set_back, hold_idle = hold_idle }
function algo.refund(s, r, now, cost) bucket_give_back(bucket, s, r, now, cost) end
-- A lease's return (core/algorithms/token_bucket.cpp give_back).
function algo.give_back(s, r, now, units, granted_at, slice)
  return bucket_give_back(bucket, s, r, now, units, granted_at, slice)
end
