-- Token bucket, as core/algorithms/token_bucket.cpp. State: level (tokens scaled by
-- window_reduced) and at (when it was measured); a missing key is unused.
-- The level reaches burst * window_reduced (up to 2^85), so here it is a
-- pair (tokens, part): tokens * window_reduced + part. Stored as one number
-- when the capacity fits (burst * window_reduced <= 2^52, every limit rl
-- accepted before wider ones), else as its two.
local algo = {}

local function narrow(r) return r.burst * r.wr <= 4503599627370496 end

-- The time until `tokens, part` scaled tokens have refilled, rounded up.
local function time_for(r, tokens, part)
  local us, rest = muldiv(tokens, r.wr, r.lr)
  return us + ceil_div(rest + part, r.lr)
end

local function level_at(s, r, now)
  if not s.used then return r.burst, 0 end
  local elapsed = max(0, now - s.at)
  if elapsed >= time_for(r, pair_sub(r.wr, r.burst, 0, s.tokens, s.part)) then
    return r.burst, 0
  end
  return pair_add(r.wr, s.tokens, s.part, muldiv(elapsed, r.lr, r.wr))
end

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
  return s.at + time_for(r, pair_sub(r.wr, r.burst, 0, s.tokens, s.part))
end

function algo.decide(s, r, now, cost)
  local v = verdict(r)
  local tokens, part = level_at(s, r, now)
  if cost > r.burst then
    v.retry = -1
  elseif cost <= tokens then
    v.allowed = true
    tokens = tokens - cost
  else
    v.retry = time_for(r, pair_sub(r.wr, cost, 0, tokens, part))
  end
  v.remaining = tokens
  v.reset = time_for(r, pair_sub(r.wr, r.burst, 0, tokens, part))
  return v
end

function algo.consume(s, r, now, cost)
  local tokens, part = level_at(s, r, now)
  s.tokens, s.part = tokens - cost, part
  s.at = max(now, s.at)
  s.used = true
end

function algo.refund(s, r, now, cost)
  local tokens, part = level_at(s, r, now)
  tokens = tokens + min(cost, r.burst)
  if tokens >= r.burst then tokens, part = r.burst, 0 end
  s.tokens, s.part = tokens, part
  s.at = max(now, s.at)
  s.used = true
end
