-- Sliding log, as core/algorithms/sliding_log.cpp, kept in a Redis LIST (key schema
-- v2): one element per instant, oldest first, each 24 bytes packed as
-- struct '<i8i8i8': at, cost, and the running total of the costs up to it.
-- Every limit of the key shares the one log (they consume and give back the
-- same entries; each reads the suffix younger than its own window), so
-- states[i] is the same log for every i. A decision reads O(log n) elements
-- by LINDEX (binary search for the first live entry and, when denied, for
-- the entry that frees enough); a write trims the dead head (LTRIM,
-- amortized O(1)) and appends or updates the tail (RPUSH / LSET / RPOP).
local algo = { leases = true, ahead = true } -- a slice is recorded ahead, at its lease's end (lease_call)
local pack, unpack_record = struct.pack, struct.unpack
local RECORD = '<i8i8i8'
-- Running totals restart from 0 beyond this (every value stays below 2^53).
local REBASE_AT = 2 ^ 51

local function entry(log, i) -- 0-based; read once per call
  local e = log.cache[i]
  if e == nil then
    local at, cost, total = unpack_record(RECORD, call('LINDEX', log.key, i))
    e = { at = at, cost = cost, total = total }
    log.cache[i] = e
  end
  return e
end

-- The first index in [lo, n) whose entry satisfies `pred` (false before,
-- true after), or n. Probes lo, lo+1, lo+3, ... first: the answer is
-- usually near lo (the oldest live entry, the first one to free).
local function search(log, lo, pred)
  local n = log.n
  local step, hi = 1, lo
  while hi < n and not pred(entry(log, hi)) do
    lo = hi + 1
    hi = hi + step
    step = step * 2
  end
  if hi > n then hi = n end
  while lo < hi do
    local mid = floor((lo + hi) / 2)
    if pred(entry(log, mid)) then hi = mid else lo = mid + 1 end
  end
  return lo
end

local function first_live(log, window, now)
  return search(log, 0, function(e) return now - e.at < window end)
end

local function longest(rates)
  local w = 0
  for _, r in ipairs(rates) do w = max(w, r.window) end
  return w
end

function algo.open(key)
  return { key = key, n = call('LLEN', key), cache = {} }
end

function algo.decide(log, r, now, cost)
  local v = verdict(r)
  local first = first_live(log, r.window, now)
  local used, newest, before = 0, -1, 0
  if first < log.n then
    local e, last = entry(log, first), entry(log, log.n - 1)
    before = e.total - e.cost
    used = last.total - before
    newest = last.at
  end
  if cost > r.limit then
    v.retry = -1
  elseif used + cost <= r.limit then
    v.allowed = true
    used = used + cost
    if cost > 0 then newest = max(newest, now) end -- it joins an entry stamped ahead
  else
    -- Wait until enough of the oldest entries have left the window.
    local to_free = used + cost - r.limit
    local i = search(log, first, function(e) return e.total - before >= to_free end)
    v.retry = entry(log, i).at + r.window - now
  end
  v.remaining = r.limit - used
  if newest >= 0 then v.reset = newest + r.window - now end
  return v
end

-- Drops the entries dead for every limit.
local function prune(log, rates, now)
  local dead = first_live(log, longest(rates), now)
  if dead == 0 then return end
  if dead == log.n then
    call('DEL', log.key)
  else
    call('LTRIM', log.key, dead, -1)
  end
  log.n, log.cache = log.n - dead, {}
end

-- Rewrites every entry with totals from 0: O(n), once per 2^51 units.
local function rebase(log)
  local all = call('LRANGE', log.key, 0, -1)
  local at, cost, total = unpack_record(RECORD, all[1])
  local before = total - cost
  call('DEL', log.key)
  for from = 1, #all, 1000 do
    local chunk = {}
    for i = from, min(from + 999, #all) do
      at, cost, total = unpack_record(RECORD, all[i])
      chunk[#chunk + 1] = pack(RECORD, at, cost, total - before)
    end
    call('RPUSH', log.key, unpack(chunk))
  end
  log.cache = {}
end

-- The key lives until its newest entry leaves the longest window.
local function expire(log, rates, now)
  if log.n == 0 then return end
  local idle = entry(log, log.n - 1).at + longest(rates)
  -- expiry() names SET's options; a list takes the matching commands.
  local option, value = expiry(idle, now, rates.min_ttl)
  call(option == 'PXAT' and 'PEXPIREAT' or 'PEXPIRE', log.key, value)
end

-- Records `cost` units at `at` (>= now); returns the instant they went to.
local function record_at(log, rates, now, at, cost)
  prune(log, rates, now)
  local total, stamped = cost, at
  if log.n > 0 then
    local last = entry(log, log.n - 1)
    total = last.total + cost
    if last.at >= at then
      -- One entry per instant keeps the log short; a clock that steps back,
      -- or a lease's record stamped ahead, is joined, so the log stays in
      -- time order (a record at or after its use still covers it).
      call('LSET', log.key, -1, pack(RECORD, last.at, last.cost + cost, total))
      last.cost, last.total = last.cost + cost, total
      cost, stamped = nil, last.at
    end
  end
  if cost then
    call('RPUSH', log.key, pack(RECORD, at, cost, total))
    log.cache[log.n] = { at = at, cost = cost, total = total }
    log.n = log.n + 1
  end
  if total >= REBASE_AT then rebase(log) end
  expire(log, rates, now)
  return stamped
end

function algo.record(log, rates, now, cost) record_at(log, rates, now, now, cost) end

-- A lease's grant, admitted (core/algorithms/sliding_log.cpp record_lease):
-- the slice is recorded at its lease's end, so every window that holds a
-- use of it holds its record; its instant is the grant's tag.
function algo.record_lease(log, rates, now, units, hold_us)
  return record_at(log, rates, now, now + hold_us, units)
end

-- How far back from the newest entry a release looks for its record
-- (sliding_log.h kReleaseReach).
local RELEASE_REACH = 64

-- A lease's return: `units` off the record at `tag` when it is among the
-- newest RELEASE_REACH entries (true); else nothing changes.
function algo.release(log, rates, now, units, tag)
  prune(log, rates, now)
  if units <= 0 then return false end
  local n = log.n
  local lowest = max(0, n - RELEASE_REACH)
  local i = n - 1
  while i >= lowest and entry(log, i).at > tag do i = i - 1 end
  if i < lowest or entry(log, i).at ~= tag then return false end
  -- The slice's unused units leave its record; every later running total
  -- loses them too: the entries from it on are written again.
  local taken = min(units, entry(log, i).cost)
  local again = {}
  for j = i, n - 1 do
    local e = entry(log, j)
    local c = e.cost
    if j == i then c = c - taken end
    if c > 0 then again[#again + 1] = pack(RECORD, e.at, c, e.total - taken) end
  end
  if i == 0 then call('DEL', log.key) else call('LTRIM', log.key, 0, i - 1) end
  if #again > 0 then call('RPUSH', log.key, unpack(again)) end
  log.n, log.cache = i + #again, {}
  expire(log, rates, now)
  return true
end

function algo.give_back(log, rates, now, cost)
  prune(log, rates, now)
  -- Give back the newest units first: they would have been the last to
  -- expire. Never from an entry stamped after now: a lease's record, which
  -- covers its slice's uses.
  while cost > 0 and log.n > 0 and entry(log, log.n - 1).at <= now do
    local newest = entry(log, log.n - 1)
    local taken = min(cost, newest.cost)
    cost = cost - taken
    if taken == newest.cost then
      call('RPOP', log.key)
      log.cache[log.n - 1] = nil
      log.n = log.n - 1
    else
      newest.cost, newest.total = newest.cost - taken, newest.total - taken
      call('LSET', log.key, -1, pack(RECORD, newest.at, newest.cost, newest.total))
    end
  end
  expire(log, rates, now)
end

function algo.forget(log)
  call('DEL', log.key)
  log.n, log.cache = 0, {}
end

-- acquire with one limit, the common case, in a few calls: the newest entry
-- by LINDEX -1; unless it holds every unit, the oldest by LINDEX 0, and
-- when that is dead the next HEAD entries in one LRANGE, and MORE after
-- them when those are dead too (a busy key loses about one entry between
-- two calls, as often none as two or more: one in 16 calls four or more).
-- Then RPUSH (or LSET -1, same instant) and PEXPIREAT. The oldest live
-- entry, and the one whose leaving frees enough units, are nearly always
-- among those read; when they are not, the general path decides
-- (common.lua decide_one). Dead entries are trimmed as soon as one is
-- found: the same decisions, the same live log.
local HEAD, MORE = 3, 8 -- each entry read costs Redis about a third of a command
local NONE = {} -- no head read (never written)
-- redis.call's arguments as strings: Redis prints a number with '%.17g',
-- dearer than a constant
local HEAD_END, MORE_START, MORE_END = tostring(HEAD), tostring(HEAD + 1), tostring(HEAD + MORE)
-- PEXPIREAT's last argument, as text: calls of the same millisecond (most,
-- under load) skip string.format. A script starts without it.
local expiry_ms, expiry_text = nil, nil

-- The first live entry of head[from..]: its place in head, at, cost and
-- total; nil when none is.
local function live(head, from, now, window)
  for i = from, #head do
    local at, c, total = unpack_record(RECORD, head[i])
    if now - at < window then return i, at, c, total end
  end
  return nil
end

-- The instant of the first of head[from..] whose running total, less
-- `before`, reaches `units`; nil when none does.
local function freeing(head, from, before, units)
  for i = from, #head do
    local at, _, total = unpack_record(RECORD, head[i])
    if total - before >= units then return at end
  end
  return nil
end

function algo.acquire_one(key, r, now, cost, min_ttl, cost_text, rates)
  local window, limit = r.window, r.limit
  local last_at, last_cost, last_total, used, newest = 0, 0, 0, 0, -1
  -- head: the entries after the oldest, read by LRANGE when the oldest is
  -- dead (else NONE); head[i] is the log's entry i + 1 (1-based). count:
  -- the entries read from the oldest on; first: the first live one's place.
  local head, count, first, before, first_at, first_cost, whole = NONE, 0, nil, 0, 0, 0, false
  local raw = call('LINDEX', key, '-1') -- the newest entry
  if raw then
    last_at, last_cost, last_total = unpack_record(RECORD, raw)
    if now - last_at >= window then
      count = 1 -- the newest is dead, and so is every older entry
    elseif last_total == last_cost then
      -- No unit before the newest (an older entry holds none): it decides
      -- alone, as the log's first live entry (nothing is trimmed).
      count, first, first_at, first_cost = 1, 1, last_at, last_cost
    else
      -- The oldest entry alone (one string, no table), nearly always live;
      -- the next HEAD when it is not.
      local at, c, total = unpack_record(RECORD, call('LINDEX', key, '0'))
      if now - at < window then
        count, first, before, first_at, first_cost = 1, 1, total - c, at, c
      else
        head = call('LRANGE', key, '1', HEAD_END) -- >= 1 entry: the newest is live
        local i, at, c, total = live(head, 1, now, window)
        if i == nil and #head == HEAD then
          local more = call('LRANGE', key, MORE_START, MORE_END)
          for j = 1, #more do head[HEAD + j] = more[j] end
          i, at, c, total = live(head, HEAD + 1, now, window)
        end
        if i == nil then return decide_one(key, algo, rates, now, cost, true) end -- a longer run of dead entries
        count, first, before, first_at, first_cost = #head + 1, i + 1, total - c, at, c
        whole = head[#head] == raw -- read to the newest: the whole log
      end
    end
    if first then used, newest = last_total - before, last_at end
  end
  if cost > limit or used + cost > limit then
    local retry = -1
    if cost <= limit then
      -- Found in a whole log: its newest entry frees all it holds.
      local units, when = used + cost - limit, first_at -- usually the oldest frees enough
      if first_cost < units then when = freeing(head, first, before, units) end
      if when == nil then return decide_one(key, algo, rates, now, cost, true) end
      retry = when + window - now
    end
    local reset = 0
    if newest >= 0 then reset = newest + window - now end
    return pack(R5, 0, limit - used, retry, reset, 0)
  end
  -- Admitted: record.
  if first == nil then -- no entry, or every one dead
    if count > 0 then call('DEL', key) end
    first, last_total, count, first_cost = 1, 0, 0, -1 -- no older entry
  elseif first > 1 then
    call('LTRIM', key, first - 1, '-1')
  end
  local total = last_total + cost
  if count > 0 and last_at >= now then
    -- One entry per instant (a clock that steps back joins the newest).
    local entry = pack(RECORD, last_at, last_cost + cost, total)
    call('LSET', key, '-1', entry)
    if whole then head[#head] = entry end
    if first_at == last_at then first_cost = last_cost + cost end -- the newest is the first live
  else
    call('RPUSH', key, pack(RECORD, now, cost, total))
    last_at = now
  end
  if total >= REBASE_AT then rebase({ key = key }) end
  local idle = last_at + window
  if min_ttl == 0 then
    local ms = idle / 1000 -- ceil_div(idle, 1000), inline: exact below 2^53
    ms = ms - ms % 1
    if ms * 1000 < idle then ms = ms + 1 end
    if ms ~= expiry_ms then expiry_ms, expiry_text = ms, int(ms) end
    call('PEXPIREAT', key, expiry_text)
  else
    call('PEXPIRE', key, int(max(ceil_div(idle - now, 1000), min_ttl)))
  end
  used = used + cost
  if cost > 0 then newest = last_at end -- the instant just written (or joined)
  local reset = 0 -- 0 with no live entry (an acquire of 0 on an empty log)
  if newest >= 0 then reset = newest + window - now end
  local again = 0 -- common.lua next_retry: when another call of this cost would pass
  if limit - used < cost then
    local units, when = used + cost - limit, first_at -- usually the oldest frees enough
    if first_cost < units then when = freeing(head, first, before, units) end
    if when == nil and whole then when = last_at end -- the entry just written
    if when == nil then
      again = algo.decide(algo.open(key), r, now, cost).retry
    else
      again = when + window - now
    end
  end
  return pack(R5, 1, limit - used, 0, reset, again)
end
