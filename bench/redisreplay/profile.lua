-- profile.lua OUT.dat OUT.run SCRIPT.lua...: replays the recorded calls
-- (see record.sh) in Lua 5.1 itself (lua5.1, Debian's package), against a
-- small Redis of its own written in Lua (the commands the scripts use, no
-- more), and prints where the scripts' Lua spends its virtual-machine
-- instructions: a sample every 100 instructions, by function (the line
-- it starts at in the script named by the file's first 8 hex digits), and
-- "MOCK<f" for the mock Redis's work called from function f. It counts
-- instructions, not time: a C function (string.format, table.concat) costs
-- time and no instruction, and a redis.call costs the server more than
-- the mock's instructions. Use redisreplay.py replay for the time.
local datafile, runfile = arg[1], arg[2]
-- With $BYLINE set, samples are counted by line rather than by function.
local BYLINE = os.getenv('BYLINE') ~= nil
local SELF = debug.getinfo(1, 'S').short_src
local MOCKRUN = '0450da7927eae9621a0e7954c3b3071d41571cff'
local db = {}
local NOW = 0
local function get(k, t)
  local e = db[k]
  if not e then return nil end
  if t and e.t ~= t then error('WRONGTYPE ' .. k .. ' ' .. e.t .. ' want ' .. t) end
  return e
end
local function mk(k, t, v) local e = db[k]; if not e then e = {t = t, v = v}; db[k] = e end; return e end
local function cleanup(k) local e = db[k]; if e and e.n == 0 then db[k] = nil end end
local function num(s) if s == '-inf' then return -math.huge elseif s == '+inf' or s == 'inf' then return math.huge end return tonumber(s) end
local function bound(s) if string.sub(s,1,1) == '(' then return num(string.sub(s,2)), true end return num(s), false end
-- A sorted set keeps its members in e.sorted, in order of (score,
-- member), updated in place: a member is found by binary search.
local function zless(e, x, y)
  local v = e.v
  if v[x] ~= v[y] then return v[x] < v[y] end
  return x < y
end
local function zpos(e, m, sc)
  -- the first index whose (score, member) is not less than (sc, m)
  local a, lo, hi = e.sorted, 1, #e.sorted + 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local x = a[mid]
    local xs = e.v[x]
    if xs < sc or (xs == sc and x < m) then lo = mid + 1 else hi = mid end
  end
  return lo
end
local function zsorted(e)
  if not e.sorted then
    local a = {}
    for m in pairs(e.v) do a[#a+1] = m end
    table.sort(a, function(x, y) return zless(e, x, y) end)
    e.sorted = a
  end
  return e.sorted
end
local function zdel(e, m)
  if e.sorted and e.v[m] ~= nil then table.remove(e.sorted, zpos(e, m, e.v[m])) end
end
local function zput(e, m, sc)
  if e.sorted then table.insert(e.sorted, zpos(e, m, sc), m) end
end
local C = {}
C.TIME = function() local s = math.floor(NOW / 1e6); return {string.format('%d', s), string.format('%d', NOW - s * 1e6)} end
C.INFO = function() return '# Server\r\nredis_version:7.0.15\r\nrun_id:' .. MOCKRUN .. '\r\ntcp_port:6379\r\n' .. string.rep('x:y\r\n', 40) end
C.PUBLISH = function() return 0 end
C.HGET = function(k, f) local e = get(k, 'hash'); if not e then return false end; local v = e.v[f]; if v == nil then return false end return v end
C.HMGET = function(k, ...) local e = get(k, 'hash'); local r = {}; for i, f in ipairs({...}) do local v = e and e.v[f]; if v == nil then v = false end; r[i] = v end; return r end
C.HSET = function(k, ...) local a = {...}; local e = mk(k, 'hash', {}); e.n = e.n or 0; local c = 0; for i = 1, #a, 2 do if e.v[a[i]] == nil then c = c + 1; e.n = e.n + 1 end; e.v[a[i]] = tostring(a[i+1]) end; return c end
C.HDEL = function(k, ...) local e = get(k, 'hash'); if not e then return 0 end; local c = 0; for _, f in ipairs({...}) do if e.v[f] ~= nil then e.v[f] = nil; c = c + 1; e.n = e.n - 1 end end; cleanup(k); return c end
C.HEXISTS = function(k, f) local e = get(k, 'hash'); return (e and e.v[f] ~= nil) and 1 or 0 end
C.HINCRBY = function(k, f, d) local e = mk(k, 'hash', {}); e.n = e.n or 0; if e.v[f] == nil then e.n = e.n + 1 end; local v = (tonumber(e.v[f]) or 0) + tonumber(d); e.v[f] = string.format('%d', v); return v end
C.HGETALL = function(k) local e = get(k, 'hash'); local r = {}; if e then for f, v in pairs(e.v) do r[#r+1] = f; r[#r+1] = v end end; return r end
C.HLEN = function(k) local e = get(k, 'hash'); return e and e.n or 0 end
C.SADD = function(k, ...) local e = mk(k, 'set', {}); e.n = e.n or 0; local c = 0; for _, m in ipairs({...}) do if not e.v[m] then e.v[m] = true; c = c + 1; e.n = e.n + 1 end end; return c end
C.SMEMBERS = function(k) local e = get(k, 'set'); local r = {}; if e then for m in pairs(e.v) do r[#r+1] = m end end; return r end
C.SPOP = function(k, n) local e = get(k, 'set'); if not e then return n and {} or false end; local r = {}; local want = tonumber(n) or 1; for m in pairs(e.v) do if #r >= want then break end; r[#r+1] = m end; for _, m in ipairs(r) do e.v[m] = nil; e.n = e.n - 1 end; cleanup(k); if n then return r end; return r[1] or false end
C.DEL = function(...) local c = 0; for _, k in ipairs({...}) do if db[k] then db[k] = nil; c = c + 1 end end; return c end
C.LLEN = function(k) local e = get(k, 'list'); return e and e.n or 0 end
local function lnew(k) local e = mk(k, 'list', {}); if not e.h then e.h = 1; e.tl = 0; e.n = 0 end; return e end
C.RPUSH = function(k, ...) local e = lnew(k); for _, x in ipairs({...}) do e.tl = e.tl + 1; e.v[e.tl] = x; e.n = e.n + 1 end; return e.n end
C.LPUSH = function(k, ...) local e = lnew(k); for _, x in ipairs({...}) do e.h = e.h - 1; e.v[e.h] = x; e.n = e.n + 1 end; return e.n end
C.LPOP = function(k, n) local e = get(k, 'list'); if not e then return false end; local want = tonumber(n); local r = {}; for i = 1, want or 1 do if e.n == 0 then break end; r[#r+1] = e.v[e.h]; e.v[e.h] = nil; e.h = e.h + 1; e.n = e.n - 1 end; cleanup(k); if want then return r end; return r[1] or false end
C.ZADD = function(k, ...) local a = {...}; local i = 1; local xx, nx = false, false
  while a[i] == 'XX' or a[i] == 'NX' or a[i] == 'GT' or a[i] == 'LT' or a[i] == 'CH' do if a[i] == 'XX' then xx = true elseif a[i] == 'NX' then nx = true end; i = i + 1 end
  local e = mk(k, 'zset', {}); e.n = e.n or 0; local c = 0
  for j = i, #a, 2 do local sc, m = tonumber(a[j]), a[j+1]
    local has = e.v[m] ~= nil
    if (has and not nx) or (not has and not xx) then if not has then c = c + 1; e.n = e.n + 1 end; zdel(e, m); e.v[m] = sc; zput(e, m, sc) end end
  cleanup(k); return c end
C.ZREM = function(k, ...) local e = get(k, 'zset'); if not e then return 0 end; local c = 0; for _, m in ipairs({...}) do if e.v[m] ~= nil then zdel(e, m); e.v[m] = nil; c = c + 1; e.n = e.n - 1 end end; cleanup(k); return c end
C.ZSCORE = function(k, m) local e = get(k, 'zset'); local s = e and e.v[m]; if not s then return false end; return string.format('%.17g', s) end
C.ZCARD = function(k) local e = get(k, 'zset'); return e and e.n or 0 end
C.ZRANGEBYSCORE = function(k, lo, hi, ...) local e = get(k, 'zset'); if not e then return {} end
  local a = {...}; local ws, off, cnt = false, 0, -1; local i = 1
  while a[i] do if a[i] == 'WITHSCORES' then ws = true; i = i + 1 elseif a[i] == 'LIMIT' then off, cnt = tonumber(a[i+1]), tonumber(a[i+2]); i = i + 3 else error('zrbs ' .. a[i]) end end
  local l, lx = bound(lo); local h, hx = bound(hi); local r = {}; local skipped = 0
  for _, m in ipairs(zsorted(e)) do local s = e.v[m]
    if (s > l or (s == l and not lx)) and (s < h or (s == h and not hx)) then
      if skipped < off then skipped = skipped + 1 else
        if cnt >= 0 and (ws and #r / 2 or #r) >= cnt then break end
        r[#r+1] = m; if ws then r[#r+1] = string.format('%.17g', s) end end
    elseif s > h then break end end
  return r end
C.ZREMRANGEBYSCORE = function(k, lo, hi) local e = get(k, 'zset'); if not e then return 0 end; local l, lx = bound(lo); local h, hx = bound(hi); local c = 0
  for _, m in ipairs(zsorted(e)) do local s = e.v[m]; if (s > l or (s == l and not lx)) and (s < h or (s == h and not hx)) then e.v[m] = nil; c = c + 1; e.n = e.n - 1 end end
  if c > 0 then e.sorted = nil end; cleanup(k); return c end
C.ZRANGE = function(k, a, b, ws) local e = get(k, 'zset'); if not e then return {} end; local s = zsorted(e); a, b = tonumber(a), tonumber(b); if b < 0 then b = #s + b end; if a < 0 then a = #s + a end; local r = {}
  for i = a + 1, math.min(b + 1, #s) do r[#r+1] = s[i]; if ws then r[#r+1] = string.format('%.17g', e.v[s[i]]) end end; return r end
C.PEXPIREAT = function() return 1 end
C.PEXPIRE = function() return 1 end
C.PERSIST = function() return 1 end
C.PTTL = function() return -1 end
C.EXISTS = function(...) local c = 0; for _, k in ipairs({...}) do if db[k] then c = c + 1 end end; return c end
local ncalls = {}
local function rcall(cmd, ...)
  local f = C[string.upper(cmd)]
  if not f then error('no mock for ' .. cmd) end
  ncalls[cmd] = (ncalls[cmd] or 0) + 1
  return f(...)
end
redis = {call = rcall, pcall = rcall, error_reply = function(s) return {err = s} end, status_reply = function(s) return {ok = s} end}
cmsgpack = {unpack = function() error('msgpack') end}
-- scripts
local src = {}
for i = 3, #arg do
  local name = string.match(arg[i], '(%x+)%.lua$')
  local fh = assert(io.open(arg[i])); local s = fh:read('*a'); fh:close()
  src[string.sub(name, 1, 8)] = assert(loadstring(s, '@' .. string.sub(name, 1, 8)))
end
local fh = assert(io.open(runfile)); local RECRUN = string.match(fh:read('*a'), '%x+'); fh:close()
-- data
local fh = io.open(datafile, 'rb'); local data = fh:read('*a'); fh:close()
local pos = 1
local function line() local e = string.find(data, '\n', pos, true); local l = string.sub(data, pos, e - 1); pos = e + 1; return l end
local cmds = {}
while pos <= #data do
  local ts, n = string.match(line(), '^(%S+) (%d+)$')
  local args = {}
  for i = 1, tonumber(n) do local len = tonumber(line()); args[i] = string.sub(data, pos, pos + len - 1); pos = pos + len + 1 end
  cmds[#cmds+1] = {ts = math.floor(tonumber(ts) * 1e6), args = args}
end
-- profiling
local counts, lines = {}, {}
local prof = true
local function hook()
  local info = debug.getinfo(2, 'Sl')
  if not info then return end
  local k
  if info.short_src == SELF then
    -- attribute to the script function that called into the mock
    for lv = 3, 8 do local i2 = debug.getinfo(lv, 'Sl'); if i2 and i2.short_src ~= SELF and i2.short_src ~= '[C]' then k = 'MOCK<' .. i2.short_src .. ':' .. i2.linedefined .. (BYLINE and ' @' .. info.currentline or ''); break end end
    k = k or 'MOCK'
  else k = info.short_src .. ':' .. (BYLINE and info.currentline or info.linedefined or 0) end
  counts[k] = (counts[k] or 0) + 1
end
local spent, nscript = {}, {}
local replies = 0
for _, c in ipairs(cmds) do
  NOW = c.ts
  local a = c.args
  local cmd = string.lower(a[1])
  if cmd == 'eval' or cmd == 'evalsha' then
    local f
    if cmd == 'evalsha' then f = src[string.sub(a[2], 1, 8)] end
    if f then
      local nk = tonumber(a[3])
      KEYS, ARGV = {}, {}
      for i = 1, nk do KEYS[i] = a[3 + i] end
      for i = 4 + nk, #a do ARGV[#ARGV + 1] = (a[i] == RECRUN and MOCKRUN or a[i]) end
      local name = string.sub(a[2], 1, 8)
      if prof then debug.sethook(hook, '', 100) end
      local t0 = os.clock()
      local ok, r = pcall(f)
      local dt = os.clock() - t0
      if prof then debug.sethook() end
      if not ok then io.stderr:write('ERR ' .. name .. ' ' .. tostring(r) .. '\n') end
      spent[name] = (spent[name] or 0) + dt; nscript[name] = (nscript[name] or 0) + 1
    end
  elseif C[string.upper(cmd)] then
    local ok, err = pcall(C[string.upper(cmd)], unpack(a, 2))
  end
end
for name, s in pairs(spent) do print(name, nscript[name] .. ' calls', string.format('%.1f ms with the mock', s * 1000)) end
if prof then
  local arr = {}
  for k, v in pairs(counts) do arr[#arr+1] = {k, v} end
  table.sort(arr, function(x, y) return x[2] > y[2] end)
  local tot = 0; for _, x in ipairs(arr) do tot = tot + x[2] end
  for i = 1, math.min(60, #arr) do print(string.format('%6.2f%% %s', 100 * arr[i][2] / tot, arr[i][1])) end
  local byfile = {}; for _, x in ipairs(arr) do local f = string.match(x[1], '^[^:]*'); byfile[f] = (byfile[f] or 0) + x[2] end
  for f, v in pairs(byfile) do print('file', f, string.format('%.1f%%', 100 * v / tot)) end
end
local cs = {}; for k, v in pairs(ncalls) do cs[#cs+1] = k .. '=' .. v end; table.sort(cs); print(table.concat(cs, ' '))
