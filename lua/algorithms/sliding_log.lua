-- Sliding log, as core/sliding_log.cpp. State: entries {at, cost}, oldest
-- first, one per instant; at most `limit` live entries, since each holds a
-- unit or more. Stored as: count, then at and cost of each entry.
local algo = {}

local function live(e, r, now) return now - e.at < r.window end

local function prune(s, r, now)
  local kept = {}
  for _, e in ipairs(s.entries) do
    if live(e, r, now) then kept[#kept + 1] = e end
  end
  s.entries = kept
end

function algo.empty() return { entries = {} } end
function algo.decode(nums, pos)
  local entries = {}
  for i = 1, nums[pos] do
    entries[i] = { at = nums[pos + 2 * i - 1], cost = nums[pos + 2 * i] }
  end
  return { entries = entries }, pos + 1 + 2 * nums[pos]
end
function algo.encode(s, out)
  out[#out + 1] = int(#s.entries)
  for _, e in ipairs(s.entries) do
    out[#out + 1] = int(e.at)
    out[#out + 1] = int(e.cost)
  end
end

function algo.idle_at(s, r)
  local n = #s.entries
  if n == 0 then return 0 end
  return s.entries[n].at + r.window
end

function algo.decide(s, r, now, cost)
  local v = verdict(r)
  local used, newest = 0, -1
  for _, e in ipairs(s.entries) do
    if live(e, r, now) then
      used = used + e.cost
      newest = e.at
    end
  end
  if cost > r.limit then
    v.retry = -1
  elseif used + cost <= r.limit then
    v.allowed = true
    used = used + cost
    if cost > 0 then newest = now end
  else
    -- Wait until enough of the oldest entries have left the window.
    local to_free = used + cost - r.limit
    for _, e in ipairs(s.entries) do
      if live(e, r, now) then
        to_free = to_free - e.cost
        if to_free <= 0 then
          v.retry = e.at + r.window - now
          break
        end
      end
    end
  end
  v.remaining = r.limit - used
  if newest >= 0 then v.reset = newest + r.window - now end
  return v
end

function algo.consume(s, r, now, cost)
  prune(s, r, now)
  local n = #s.entries
  if n > 0 and s.entries[n].at == now then
    s.entries[n].cost = s.entries[n].cost + cost
  else
    s.entries[n + 1] = { at = now, cost = cost }
  end
end

function algo.refund(s, r, now, cost)
  prune(s, r, now)
  -- Give back the newest units first: they would have been the last to expire.
  while cost > 0 and #s.entries > 0 do
    local newest = s.entries[#s.entries]
    local taken = min(cost, newest.cost)
    newest.cost = newest.cost - taken
    cost = cost - taken
    if newest.cost == 0 then s.entries[#s.entries] = nil end
  end
end

