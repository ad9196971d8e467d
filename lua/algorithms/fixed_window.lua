-- Fixed window, as core/algorithms/fixed_window.cpp. State: window index and count.
local algo = {}

local function count_at(s, r, now)
  if s.window == idiv(now, r.window) then return s.count end
  return 0
end

function algo.empty() return { window = 0, count = 0 } end
function algo.decode(nums, pos) return { window = nums[pos], count = nums[pos + 1] }, pos + 2 end
function algo.encode(s, out)
  out[#out + 1] = int(s.window)
  out[#out + 1] = int(s.count)
end

function algo.idle_at(s, r)
  if s.count > 0 then return (s.window + 1) * r.window end
  return 0
end

function algo.decide(s, r, now, cost)
  local v = verdict(r)
  local window_end = (idiv(now, r.window) + 1) * r.window
  local count = count_at(s, r, now)
  if cost > r.limit then
    v.retry = -1
  elseif count + cost <= r.limit then
    v.allowed = true
    count = count + cost
  else
    v.retry = window_end - now
  end
  v.remaining = r.limit - count
  if count > 0 then v.reset = window_end - now end
  return v
end

function algo.consume(s, r, now, cost)
  s.count = count_at(s, r, now) + cost
  s.window = idiv(now, r.window)
end

function algo.refund(s, r, now, cost)
  s.count = max(0, count_at(s, r, now) - cost)
  s.window = idiv(now, r.window)
end


-- acquire with one limit, the common case, without the tables of the
-- general path (common.lua decide_one): the same decision, the same value.
function algo.acquire_one(key, r, now, cost, min_ttl)
  local window = idiv(now, r.window)
  local raw = call('GET', key)
  local count = 0
  if raw then
    local space = find(raw, ' ', 1, true)
    if tonumber(sub(raw, 1, space - 1)) == window then count = tonumber(sub(raw, space + 1)) end
  end
  local left = (window + 1) * r.window - now
  if cost > r.limit or count + cost > r.limit then
    local reset = 0
    if count > 0 then reset = left end
    local retry = left
    if cost > r.limit then retry = -1 end
    return { 0, r.limit, r.limit - count, retry, reset, 0 }
  end
  count = count + cost
  call('SET', key, int(window) .. ' ' .. int(count), expiry(now + left, now, min_ttl))
  local again = 0 -- common.lua next_retry: when another call of this cost would pass
  if count + cost > r.limit then again = left end
  return { 1, r.limit, r.limit - count, 0, left, 0, again }
end
