-- Token bucket, as core/token_bucket.cpp. State: level (tokens scaled by
-- window_reduced) and at (when it was measured); a missing key is unused.
local algo = {}

local function capacity(r) return r.burst * r.wr end

local function level_at(s, r, now)
  local full = capacity(r)
  if not s.used then return full end
  local elapsed = max(0, now - s.at)
  if elapsed >= ceil_div(full - s.level, r.lr) then return full end
  return s.level + elapsed * r.lr
end

function algo.empty() return { used = false, level = 0, at = 0 } end
function algo.decode(nums, pos) return { used = true, level = nums[pos], at = nums[pos + 1] }, pos + 2 end
function algo.encode(s, out)
  out[#out + 1] = int(s.level)
  out[#out + 1] = int(s.at)
end

function algo.idle_at(s, r)
  if not s.used then return 0 end
  return s.at + ceil_div(capacity(r) - s.level, r.lr)
end

function algo.decide(s, r, now, cost)
  local v = verdict(r)
  local level = level_at(s, r, now)
  if cost > r.burst then
    v.retry = -1
  elseif cost * r.wr <= level then
    v.allowed = true
    level = level - cost * r.wr
  else
    v.retry = ceil_div(cost * r.wr - level, r.lr)
  end
  v.remaining = idiv(level, r.wr)
  v.reset = ceil_div(capacity(r) - level, r.lr)
  return v
end

function algo.consume(s, r, now, cost)
  s.level = level_at(s, r, now) - cost * r.wr
  s.at = max(now, s.at)
  s.used = true
end

function algo.refund(s, r, now, cost)
  s.level = min(capacity(r), level_at(s, r, now) + min(cost, r.burst) * r.wr)
  s.at = max(now, s.at)
  s.used = true
end

