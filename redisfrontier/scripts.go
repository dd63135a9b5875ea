package redisfrontier

import "github.com/redis/go-redis/v9"

// Every change of the crawl's state is one Lua script, so that it is atomic
// in Redis (and one MULTI/EXEC in the AOF and to replicas). The scripts
// share the prelude below and one argument layout:
//
//	KEYS[1]    the crawl's meta hash (it routes the call in a Redis Cluster;
//	           every other key shares its hash tag)
//	ARGV[1]    the key prefix, "crawl:{name}:"
//	ARGV[2]    the owner: the Frontier that calls
//	ARGV[3]    the call's number among the owner's calls, or "0" for a
//	           script that needs no replay (its second run does what its
//	           first did)
//	ARGV[4]    the lowest number of the owner's calls still in flight
//	ARGV[5..9] the caller's Policy: HostWorkers, HostDelay (µs), Robots
//	           ("1", or "1:" and RobotsMaxAge in µs), MaxPages, LeaseTerm
//	           (µs, 0 for none)
//	ARGV[10..] the script's own
//
// Replay: a script with a call number records its reply under it in the
// owner's "ops" sorted set before it returns; run again with the same
// number (go-redis, or the Frontier's own retry, sending it again after a
// lost reply) it returns the recorded reply and changes nothing. The
// replies of calls the owner has seen returned are dropped (ARGV[4]).
//
// Times are microseconds on the Redis server's clock (TIME), so that the
// clocks of the crawler machines never matter.
//
// Every script but Start's and Close's first checks that the crawl's meta
// hash is there: a crawl whose meta hash is gone was deleted (Reset, or
// its keys expired after it was done), and a script run on it would make
// a half crawl of the keys it writes; it fails instead, before it writes
// anything, with an error the Frontier turns into ErrCrawlDeleted. The
// scripts of every URL (Push, Take, Ack) check with alive, in the HMGET of
// the counters they read anyway, so that the check costs them no call;
// the others with guard, before the prelude. Both test the field sb, which
// every crawl's meta hash has and the mark of a Reset cut short (see
// resetScript) has not.
const guard = `
if redis.call('HEXISTS', KEYS[1], 'sb') == 0 then
  return redis.error_reply('NOCRAWL the crawl was deleted')
end
`

const prelude = `
local P = ARGV[1]
local owner = ARGV[2]
local opseq = ARGV[3]
local ops = P .. 'ops:' .. owner
if opseq ~= '0' then
  local prev = redis.call('ZRANGEBYSCORE', ops, opseq, opseq)
  if #prev > 0 then
    local s = prev[1]
    return string.sub(s, string.find(s, ':', 1, true) + 1)
  end
  if string.sub(opseq, -1) == '0' then
    redis.call('ZREMRANGEBYSCORE', ops, '-inf', '(' .. ARGV[4])
  end
end
local HW = tonumber(ARGV[5])
local DELAY = tonumber(ARGV[6])
local ROBOTS = string.sub(ARGV[7], 1, 1) == '1'
-- RAGE is the most age of a host's rules (µs; 0: kept for the crawl).
local RAGE = tonumber(string.sub(ARGV[7], 3)) or 0
local MAXPAGES = tonumber(ARGV[8])
local TERM = tonumber(ARGV[9])
-- A holds the script's own arguments, from A[10] on: ARGV, or a
-- section's of a call on several shards (see target).
local A = ARGV
local meta = KEYS[1]
local ready = P .. 'ready'
local parked = P .. 'parked'
local leases = P .. 'leases'
local exp = P .. 'exp'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
-- SKIP is a member of ready and of exp at FAR, a time no range up to now
-- reaches (9e15 µs: the year 2255), and longer than a listpack's members
-- may be (zset-max-listpack-value, 64 by default): Redis keeps a sorted
-- set that has it as a skiplist, whose ZADD and ZREM cost the log of its
-- size, not its size (a listpack of 100 hosts cost a Take's ZADD ten
-- times more). FAR is a time, not +inf, so that a process of an earlier
-- version that finds it first in ready waits its idlePoll, rather than
-- failing on a wait of "inf".
local SKIP = '~ this member keeps the sorted set a skiplist, not a listpack, whatever its size ~'
local FAR = '9000000000000000'

-- S formats a whole number for Redis without losing digits (tostring
-- keeps 14), as an integer: '%d' costs a third of '%.0f' (and of a
-- number concatenated, which is '%.14g').
local function S(n) return string.format('%d', n) end
-- digits returns n as text; without a sprintf for the usual small ones.
local function digits(n)
  if n >= 0 and n <= 10 then return string.sub('012345678910', n + 1, n + 1 + math.floor(n / 10)) end
  return tostring(n)
end
-- ns frames a reply field: its length, a colon, the field.
local function ns(s) s = tostring(s) return string.format('%d:', #s) .. s end
local function hkey(h) return P .. 'h:' .. h end
local function qkey(h) return P .. 'q:' .. h end
local function rkey(h) return P .. 'r:' .. h end
-- stale reports whether a host's rules of version r (its hash's field r:
-- their robots.txt's lease ID, then '@' and when the first URL went by
-- them, µs, once one has: each fetch of the robots.txt lets one go,
-- whatever the host's delay) are too old to go by (RAGE).
local function stale(r)
  local at = RAGE > 0 and string.match(r, '@(%d+)$')
  return at and tonumber(at) + RAGE <= now or false
end

-- The meta counters, changed by deltas written once at the end: base
-- holds those read (one HMGET for all a script needs), cnt the deltas.
local cnt, base = {}, {}
local function add(k, d) cnt[k] = (cnt[k] or 0) + d end
local function load(ks)
  local miss = {}
  for _, k in ipairs(ks) do
    if base[k] == nil then miss[#miss + 1] = k end
  end
  if #miss == 0 then return end
  local v = redis.call('HMGET', meta, unpack(miss))
  for j, k in ipairs(miss) do base[k] = tonumber(v[j]) or 0 end
end
-- incr adds the deltas d (name to number) to the counters of hash key in
-- one HMGET and one HSET (a redis.call costs more than its work).
local function incr(key, d, known)
  local ks = {}
  for k, v in pairs(d) do
    if v ~= 0 then ks[#ks + 1] = k end
  end
  if #ks == 0 then return end
  if #ks == 1 and not known[ks[1]] then
    redis.call('HINCRBY', key, ks[1], S(d[ks[1]]))
    return
  end
  local miss = {}
  for _, k in ipairs(ks) do
    if known[k] == nil then miss[#miss + 1] = k end
  end
  if #miss > 0 then
    local v = redis.call('HMGET', key, unpack(miss))
    for j, k in ipairs(miss) do known[k] = tonumber(v[j]) or 0 end
  end
  local kv = {}
  for _, k in ipairs(ks) do
    kv[#kv + 1] = k
    kv[#kv + 1] = S(known[k] + d[k])
  end
  redis.call('HSET', key, unpack(kv))
end
-- spent reports whether the page budget is spent: on a crawl of one
-- shard, when its pages reach MAXPAGES; on a shard of a sharded crawl
-- (MAXPAGES -1), when its pages reach what it holds of the budget, the
-- pages granted to it (cg) less those it gave back (cb).
local function spent()
  if MAXPAGES == 0 then return false end
  if MAXPAGES < 0 then
    load({'pages', 'cg', 'cb'})
    return base.pages + (cnt.pages or 0) >= base.cg + (cnt.cg or 0) - base.cb - (cnt.cb or 0)
  end
  load({'pages'})
  return base.pages + (cnt.pages or 0) >= MAXPAGES
end
local wakeup = false

-- alive reads the meta counters ks (as load does) and the field sb, which
-- every crawl has, in one HMGET, and reports whether the crawl's meta hash
-- is there. A script that finds it gone returns NOCRAWL at once.
local NOCRAWL = 'NOCRAWL the crawl was deleted'
local function alive(ks)
  local all = {'sb'}
  for _, k in ipairs(ks) do all[#all + 1] = k end
  load(all)
  return base.sb ~= 0
end

-- wake returns when host h may start its next request, or nil when it has
-- nothing it may start whatever the time; and whether it has new Requests
-- held back by the page budget only.
local function wake(h)
  local st = redis.call('HMGET', hkey(h), 'n', 'nx', 'rf', 'r', 'rn')
  local n = tonumber(st[1]) or 0
  if n >= HW or st[3] then return nil, false end
  local nx = tonumber(st[2]) or 0
  local any = redis.call('LLEN', qkey(h)) > 0
  local fresh = any and not spent()
  local top = {}
  if st[5] ~= '0' then top = redis.call('ZRANGE', rkey(h), 0, 0, 'WITHSCORES') end
  local rs = top[2] and tonumber(top[2])
  if ROBOTS and not st[4] then
    if fresh or rs then return nx, false end
    return nil, any
  end
  if fresh then return nx, false end
  if rs then return math.max(nx, rs), false end
  return nil, any
end

-- settle puts h in the ready set at its time, or out of it.
local function settle(h)
  local w, park = wake(h)
  if w then
    if redis.call('ZADD', ready, S(w), h) == 1 and w <= now then wakeup = true end
  else
    redis.call('ZREM', ready, h)
  end
  -- A shard of a sharded crawl that parks a host wakes the processes:
  -- one of them hands it a part of the budget.
  if park and redis.call('SADD', parked, h) == 1 and MAXPAGES < 0 then wakeup = true end
  return w
end

-- unpark settles the hosts the page budget held back, once it is not
-- spent (the caller's: another process of the crawl may have parked them
-- under a smaller one): all, or, with k, k of them at most. It reports
-- whether there were any.
local function unpark(k)
  if spent() then return false end
  local hs
  if k then
    hs = redis.call('SPOP', parked, k)
  else
    hs = redis.call('SMEMBERS', parked)
    if #hs > 0 then redis.call('DEL', parked) end
  end
  for _, h in ipairs(hs) do settle(h) end
  return #hs > 0
end

local function jitter(d, r) return math.floor(d / 2 + r * (d + 1)) end

-- queueAll queues the new Requests of q (see admit), host by host: one
-- RPUSH a host; and adds the hosts to the set hosts, in one SADD a
-- thousand hosts: what the sweep of the crawl's keys reads for the names
-- of each host's keys (q:, r:, h:), rather than SCAN every key of the
-- database (see ownKeys). Every key of a host is made after its first
-- Request was queued here, but by a Pause (pauseScript adds it too).
local function queueAll(q)
  for _, h in ipairs(q.hosts) do
    local l = q.byHost[h]
    -- A host whose queue was empty may have become ready.
    if redis.call('RPUSH', qkey(h), unpack(l)) == #l then settle(h) end
  end
  for j = 1, #q.hosts, 1000 do
    redis.call('SADD', P .. 'hosts', unpack(q.hosts, j, math.min(j + 999, #q.hosts)))
  end
end
-- admit admits the Requests framed in ARGV from i on (a count, then per
-- Request: seen bucket, fingerprint, host key, encoding) and returns how
-- many were new, and the index after them. With q, the new ones are
-- added to q's hosts for one queueAll of several admits; else queued.
local function admit(i, q)
  local k = tonumber(A[i])
  i = i + 1
  local added = 0
  local own = not q
  q = q or {byHost = {}, hosts = {}}
  local byHost, hosts = q.byHost, q.hosts
  for _ = 1, k do
    if redis.call('SADD', P .. 's:' .. A[i], A[i + 1]) == 1 then
      local h = A[i + 2]
      added = added + 1
      local l = byHost[h]
      if not l then
        l = {}
        byHost[h] = l
        hosts[#hosts + 1] = h
      end
      l[#l + 1] = A[i + 3]
    end
    i = i + 4
  end
  if own then queueAll(q) end
  add('unfinished', added)
  add('fresh', added)
  add('queued', added)
  return added, i
end

-- mkrec returns a lease's record: its kind ('P', 'R', or 'S' for a page
-- leased ahead, which holds no slot of its host: see aheadOf), '1' for a retry
-- ('0' a first attempt), '1' if it has a term, its host's next start
-- before and after it (µs), the lengths of the owner and of the host key,
-- then the owner, the host key and the Request's encoding. A string made
-- by concatenation costs the script far less than cmsgpack.
local ownerLen
local function mkrec(k, t, x, pn, nx, h, e)
  ownerLen = ownerLen or S(#owner)
  return k .. t .. x .. ' ' .. pn .. ' ' .. nx .. ' ' .. ownerLen .. ' ' .. S(#h) .. ' ' .. owner .. h .. e
end

-- num reads a number a record holds: most are '0', read without strtod.
local function num(s)
  if s == '0' then return 0 end
  return tonumber(s)
end
-- unrec reads a record mkrec made, or one in MessagePack (earlier
-- versions), as a table: o owner, h host, k kind, t 1 for a retry, x true
-- if timed, pn and nx, e encoding. Plain finds, not a pattern of eight
-- captures: a third of the time.
local function unrec(raw)
  local k = string.sub(raw, 1, 1)
  local b = string.find(raw, ' ', 5, true)
  if not (k == 'P' or k == 'S' or k == 'R') or string.sub(raw, 4, 4) ~= ' ' or not b then return cmsgpack.unpack(raw) end
  local c = string.find(raw, ' ', b + 1, true)
  local d = string.find(raw, ' ', c + 1, true)
  local e = string.find(raw, ' ', d + 1, true)
  local ol, hl = tonumber(string.sub(raw, c + 1, d - 1)), tonumber(string.sub(raw, d + 1, e - 1))
  local p = e + 1
  return {k = k, t = string.byte(raw, 2) == 49 and 1 or 0, x = string.byte(raw, 3) == 49 or nil,
    pn = num(string.sub(raw, 5, b - 1)), nx = num(string.sub(raw, b + 1, c - 1)),
    o = string.sub(raw, p, p + ol - 1), h = string.sub(raw, p + ol, p + ol + hl - 1), e = string.sub(raw, p + ol + hl)}
end

-- peek reads, of a record mkrec made, what the usual ack needs: if it
-- is a page lease ('P') of the caller's, its host and whether it is
-- timed; else nil (the caller reads it with unrec).
local function peek(raw)
  ownerLen = ownerLen or S(#owner)
  if string.byte(raw, 1) ~= 80 or string.byte(raw, 4) ~= 32 then return nil end
  local b = string.find(raw, ' ', 5, true)
  local c = b and string.find(raw, ' ', b + 1, true)
  local d = c and string.find(raw, ' ', c + 1, true)
  local e = d and string.find(raw, ' ', d + 1, true)
  if not e or string.sub(raw, c + 1, d - 1) ~= ownerLen then return nil end
  local ol = #owner
  if string.sub(raw, e + 1, e + ol) ~= owner then return nil end
  local hl = tonumber(string.sub(raw, d + 1, e - 1))
  return string.sub(raw, e + ol + 1, e + ol + hl), string.byte(raw, 3) == 49
end

-- endLease removes lease id and returns its record, or nil if it is not
-- out or not the caller's (when mine).
local function endLease(id, mine)
  local raw = redis.call('HGET', leases, id)
  if not raw then return nil end
  local rec = unrec(raw)
  if mine and rec.o ~= owner then return nil end
  redis.call('HDEL', leases, id)
  if rec.x or TERM > 0 then redis.call('ZREM', exp, id) end
  if rec.k ~= 'S' then rec.left = redis.call('HINCRBY', hkey(rec.h), 'n', -1) end
  return rec
end

-- putBack queues the Request of an ended lease again, to be taken at at:
-- enc is the Request as it is now; tries, for a robots.txt, its tries.
local function putBack(id, rec, at, enc, tries)
  local hk = hkey(rec.h)
  if rec.k == 'R' then
    redis.call('HDEL', hk, 'rf')
    if tries then redis.call('HSET', hk, 'rt', tries) end
    local nx = tonumber(redis.call('HGET', hk, 'nx')) or 0
    if at > nx then redis.call('HSET', hk, 'nx', S(at)) end
  else
    -- rn counts the host's retries, so that a Take need not look for
    -- them when there are none; absent, it is not known.
    if redis.call('ZADD', rkey(rec.h), S(at), id .. ':' .. enc) == 1 and redis.call('HEXISTS', hk, 'rn') == 1 then
      redis.call('HINCRBY', hk, 'rn', 1)
    end
    add('queued', 1)
  end
  settle(rec.h)
end

-- release puts a lease back as if it had never been taken: a new Request
-- goes back to the head of its host's queue, unpaid by the budget, and the
-- host's delay is not charged.
local function release(id, rec)
  local hk = hkey(rec.h)
  if tonumber(redis.call('HGET', hk, 'nx') or 0) == rec.nx then
    redis.call('HSET', hk, 'nx', S(rec.pn))
  end
  if rec.k ~= 'R' and rec.t == 0 then
    redis.call('LPUSH', qkey(rec.h), rec.e)
    add('queued', 1)
    add('fresh', 1)
    add('pages', -1)
    settle(rec.h)
    unpark()
  else
    putBack(id, rec, 0, rec.e, nil)
  end
end

-- releaseAll releases the leases ahead of ids, ended already, of records
-- recs: the latest leased first, so that each goes back to the head of
-- its host's queue in the order it was admitted (a lease's ID starts with
-- the counter that numbered it).
local function releaseAll(ids, recs)
  local o = {}
  for j = 1, #ids do o[j] = j end
  local function seq(j) return tonumber(string.match(ids[j], '^(%d+)')) or 0 end
  table.sort(o, function(x, y) return seq(x) > seq(y) end)
  for _, j in ipairs(o) do release(ids[j], recs[j]) end
end

-- takeBack ends lease id of record rec (ended already), taken back from
-- its holder: its Request is queued again at at; a page leased ahead
-- (never handed out) is added to aids and arecs instead, for releaseAll.
local function takeBack(id, rec, at, aids, arecs)
  if rec.k == 'S' then
    aids[#aids + 1] = id
    arecs[#arecs + 1] = rec
  else
    putBack(id, rec, at, rec.e, nil)
  end
end

-- aheadOf leases ahead, to the caller, the next new Request of host h
-- (whose hash's fields nx and rd are nx and rd): a page that holds no
-- slot of the host (kind 'S'), which the caller starts when one of its
-- own leases of the host ends, and acks that lease with it, so that the
-- host's slot goes from the one to the other with no round trip between
-- (see the Frontier's Ack). Only on a crawl with no page budget and no
-- delay, for a host that is not paused (nx, its hash's field, not past
-- now) and has no Crawl-delay (rd): a lease ahead must never hold a Take
-- back nor start a request early. rules is the host's rules version, x
-- the record's term flag. The caller leases ahead only for a host at
-- HostWorkers, so that no Take waits for a Request held ahead while the
-- host has room (and the process gives one back, or promotes it, when a
-- lease of the host that has none ends: see aheadFor in ahead.go). It
-- returns the lease's reply field and record;
-- or nil, and true if the host's queue was found empty.
local function aheadOf(h, id, nx, rd, rules, x)
  if MAXPAGES ~= 0 or DELAY ~= 0 or (tonumber(rd) or 0) ~= 0 or (tonumber(nx) or 0) > now then return nil end
  -- Nor for a host whose robots.txt is due again.
  if ROBOTS and rules and stale(rules) then return nil end
  local e = redis.call('LPOP', qkey(h))
  if not e then return nil, true end
  add('fresh', -1)
  add('pages', 1)
  add('queued', -1)
  local pn = nx or '0'
  return ns('S' .. id .. ' ' .. (rules or '') .. ' ' .. e), mkrec('S', '0', x, pn, pn, h, e)
end

-- giveBack releases the caller's leases ahead listed in ids (comma
-- separated), as if never taken.
local function giveBack(ids)
  local aids, arecs = {}, {}
  for id in string.gmatch(ids, '[^,]+') do
    local rec = endLease(id, true)
    if rec then
      aids[#aids + 1] = id
      arecs[#arecs + 1] = rec
    end
  end
  releaseAll(aids, arecs)
end

-- flush writes the counters and wakes the other processes if work came
-- up now.
local function flush()
  incr(meta, cnt, base)
  if wakeup then redis.call('PUBLISH', P .. 'ev', 'w') end
end

-- record records the reply for a replay.
local function record(reply)
  if opseq ~= '0' then
    redis.call('ZADD', ops, opseq, opseq .. ':' .. reply)
  end
  return reply
end

-- done flushes and records.
local function done(reply)
  flush()
  return record(reply)
end

-- serverRun returns the server's run ID, or '-' when ARGV[10] is '-', and
-- whether ARGV[10], the run a process's seen cache dropped links under,
-- is another one ('' drops nothing): a server restarted (or a replica
-- promoted) may have lost URLs the cache took as seen.
local function serverRun()
  if ARGV[10] == '-' then return '-', false end
  local info = redis.call('INFO', 'server')
  local at = string.find(info, 'run_id:', 1, true)
  local run = at and string.match(info, '^%x+', at + 7) or ''
  return run, ARGV[10] ~= '' and ARGV[10] ~= run
end

-- over reports whether Join may return: nothing pending, or the budget
-- spent and nothing pending but new Requests.
local function over()
  -- With the counters done() writes, in one HMGET.
  load({'unfinished', 'fresh', 'done', 'queued', 'pages'})
  local unf = base.unfinished + (cnt.unfinished or 0)
  local fresh = base.fresh + (cnt.fresh or 0)
  return unf == 0 or spent() and unf == fresh
end

-- target points the helpers at the keys of the shard under prefix p and
-- at the arguments args (args[10] on), with counters of their own: a
-- section of a call on several shards of one node.
local function target(p, args)
  P = p
  meta = p .. 'meta'
  ready = p .. 'ready'
  parked = p .. 'parked'
  leases = p .. 'leases'
  exp = p .. 'exp'
  cnt, base = {}, {}
  wakeup = false
  A = args
end

-- many runs body on each section of ARGV (ARGV[10] sections, each its
-- shard's key prefix, its number of arguments, then them) after pre, the
-- counters it reads, are loaded: every section's counters are read
-- first, so that a key another node serves fails the call before it
-- writes anything. Reply: each section's reply, framed.
local function many(pre, body)
  local secs, i = {}, 11
  for s = 1, tonumber(ARGV[10]) do
    local p, k = ARGV[i], tonumber(ARGV[i + 1])
    local args = {}
    for j = 1, k do args[9 + j] = ARGV[i + 1 + j] end
    target(p, args)
    if not alive(pre) then return redis.error_reply(NOCRAWL) end
    secs[s] = {p, args, base}
    i = i + 2 + k
  end
  local out = {}
  for s, sec in ipairs(secs) do
    target(sec[1], sec[2])
    base = sec[3]
    out[s] = ns(body())
    flush()
  end
  return record(table.concat(out))
end
`

// startScript records the crawl's Roots and Scope on first use and refuses
// others; it takes back the leases of its owner (a process restarted under
// the same Options.Owner) and settles the hosts the budget held back (a
// Run with a larger MaxPages may take them).
// ARGV[10] roots (JSON), ARGV[11] scope, ARGV[12] seen bucket bits,
// ARGV[13] the caller's number of shards ("" on a shard of a sharded
// crawl, whose control keys hold it).
// Reply: "ok:<bits>:<fin>", fin the time the crawl was found done (µs)
// if it is done, "0" if not, or "new:<bits>:0" for a crawl made now; or
// "other:" the crawl's roots, a tab, its scope; or "shards:" and the
// crawl's number of shards, having done nothing, if it is not the
// caller's.
var startScript = redis.NewScript(prelude + `
local m = redis.call('HMGET', meta, 'roots', 'scope', 'sb', 'unfinished', 'fin', 'fd', 'done', 'dl', 'reset', 'shards')
if m[9] then return 'reset:' end
if m[1] and (m[1] ~= ARGV[10] or m[2] ~= ARGV[11]) then
  return 'other:' .. m[1] .. '\t' .. m[2]
end
if m[1] and ARGV[13] ~= '' and (m[10] or '1') ~= ARGV[13] then return 'shards:' .. (m[10] or '1') end
local state = 'ok:'
if not m[1] then
  redis.call('HSET', meta, 'roots', ARGV[10], 'scope', ARGV[11], 'sb', ARGV[12], 'format', '2')
  if ARGV[13] ~= '' and ARGV[13] ~= '1' then redis.call('HSET', meta, 'shards', ARGV[13]) end
  m[3] = ARGV[12]
  state = 'new:'
end
local fin = '0'
-- A sharded crawl's control keys count nothing: its caller checks the
-- shards (startShards).
if m[5] and ((tonumber(m[10]) or 1) > 1 or (tonumber(m[4]) or 0) == 0 and m[6] == (m[7] or '0')) then fin = m[5] end
redis.call('DEL', ops)
-- The sets that keep SKIP (not on a sharded crawl's control keys, which
-- have none): made here if need be, to expire with the meta hash if it is
-- to (a crawl done, its keys swept).
if (tonumber(m[10] or ARGV[13]) or 1) <= 1 then
  redis.call('ZADD', ready, FAR, SKIP)
  redis.call('ZADD', exp, FAR, SKIP)
  -- The owners whose replies (ops:<owner>) the sweep of the keys sets
  -- to expire (see ownKeys).
  redis.call('SADD', P .. 'owners', owner)
  local pt = redis.call('PTTL', meta)
  if pt > 0 then
    redis.call('PEXPIRE', ready, pt)
    redis.call('PEXPIRE', exp, pt)
    redis.call('PEXPIRE', P .. 'owners', pt)
  end
end
-- An owner that dies leaves its replies: they go a week after its Start,
-- or with the crawl's keys if they expire sooner.
redis.call('ZADD', ops, 0, '0:')
local dl = tonumber(m[8]) or 0
if dl > 0 and dl < now + 604800000000 then
  redis.call('PEXPIREAT', ops, S(math.floor(dl / 1000)))
else
  redis.call('PEXPIRE', ops, 604800000)
end
local all = redis.call('HGETALL', leases)
local aids, arecs = {}, {}
for i = 1, #all, 2 do
  local rec = unrec(all[i + 1])
  if rec.o == owner then
    endLease(all[i], true)
    takeBack(all[i], rec, 0, aids, arecs)
  end
end
releaseAll(aids, arecs)
unpark()
done('')
return state .. m[3] .. ':' .. fin
`)

// finishScript records that the crawl is done, when a Join finds it so
// (or its page budget spent, with nothing left but new Requests the
// budget holds back): fin (when, µs), fd (the count done then) and dl
// (when its keys expire, µs; "0" keeps them), unless the crawl is done as
// it was at the last finish (nothing acked since: the time and the
// deadline stay). ARGV[10] is the caller's TTL (µs; 0 or less keeps the
// keys). On the control keys of a sharded crawl, ARGV[11] is the count
// done over its shards, which the caller found done (the control keys
// count nothing themselves); "" on a crawl of one shard. ARGV[12] "1" if
// the caller found the budget spent (Policy.MaxPages, ARGV[8]).
// Reply: "no" if the crawl is not done after all; "kept" if there is
// nothing to sweep; or "sweep:<dl>:<fd>": the caller sets the expiry of
// every key of the crawl to dl (PERSIST for "0"), then runs sweptScript.
var finishScript = redis.NewScript(guard + prelude + `
local m = redis.call('HMGET', meta, 'unfinished', 'done', 'fin', 'dl', 'fd', 'sw', 'fresh', 'pages')
local unf = tonumber(m[1]) or 0
if unf ~= 0 and not (ARGV[12] == '1' and MAXPAGES > 0 and (tonumber(m[8]) or 0) >= MAXPAGES and unf == (tonumber(m[7]) or 0)) then
  return 'no'
end
local dn = m[2] or '0'
if (ARGV[11] or '') ~= '' then dn = ARGV[11] end
if m[3] and m[5] == dn then
  if m[6] == dn then return 'kept' end
  -- The same finish, its sweep not done (its process died, another
  -- process sweeps now, or a process revived the keys since: see
  -- reviveScript): sweep again, to the same deadline.
  redis.call('HDEL', meta, 'rv')
  return 'sweep:' .. m[4] .. ':' .. dn
end
local ttl = tonumber(ARGV[10])
local dl = '0'
if ttl > 0 then dl = S(now + ttl) end
redis.call('HSET', meta, 'fin', S(now), 'fd', dn, 'dl', dl)
redis.call('HDEL', meta, 'rv')
if dl == '0' and (tonumber(m[4]) or 0) == 0 then
  -- Kept, as its keys were: nothing to sweep.
  redis.call('HSET', meta, 'sw', dn)
  return 'kept'
end
return 'sweep:' .. dl .. ':' .. dn
`)

// sweptScript ends a sweep: if the finish it swept for is still the
// crawl's (ARGV[10] dl, ARGV[11] fd) and no process revived the keys
// since (see reviveScript), it records the sweep done and sets the meta
// hash's expiry last, so that the crawl's keys never outlive their meta
// hash by more than the sweep's own time. Reply: "rv" if a process
// revived the keys meanwhile: the sweep may have set some to expire
// after the revival kept them, and its caller keeps them again.
var sweptScript = redis.NewScript(guard + prelude + `
local m = redis.call('HMGET', meta, 'dl', 'fd', 'rv')
if m[3] then return 'rv' end
if m[1] ~= ARGV[10] or m[2] ~= ARGV[11] then return '' end
redis.call('HSET', meta, 'sw', ARGV[11])
local dl = tonumber(ARGV[10])
if dl > 0 then
  redis.call('PEXPIREAT', meta, S(math.floor(dl / 1000)))
else
  redis.call('PERSIST', meta)
end
return ''
`)

// reviveScript begins a revival of a crawl whose keys are set to expire,
// or about to be (it was done, or its budget spent: dl, set before the
// sweep), and that has work again for the caller: it marks the meta hash
// revived (rv), so that a sweep under way records nothing (and its
// process keeps the keys it set to expire again: see sweptScript), and
// forgets that the finish was swept, so that the next Join that finds
// the crawl as it was then sweeps again, to the same deadline. The caller
// then keeps every other key of the crawl, and the meta hash last
// (persistedScript): a revival cut short leaves the meta hash's expiry,
// and the next one does it again. Reply: "1", or "0" if the keys were
// not set to expire nor about to be, or were revived already.
var reviveScript = redis.NewScript(guard + prelude + `
local m = redis.call('HMGET', meta, 'dl', 'rv')
local pt = redis.call('PTTL', meta)
if pt < 0 and ((tonumber(m[1]) or 0) <= 0 or m[2]) then return '0' end
redis.call('HSET', meta, 'rv', '1')
redis.call('HDEL', meta, 'sw')
return '1'
`)

// persistedScript ends a revival (see reviveScript): the crawl's other
// keys kept, it keeps the meta hash, unless a finish came since (a new
// deadline, no rv), which may have set keys to expire that the revival
// then kept: it replies "sweep:<dl>:<fd>", as finishScript does, and the
// caller sweeps again for that finish. Else "".
var persistedScript = redis.NewScript(guard + prelude + `
if redis.call('HEXISTS', meta, 'rv') == 1 then
  redis.call('PERSIST', meta)
  return ''
end
local m = redis.call('HMGET', meta, 'dl', 'fd')
if not m[1] or not m[2] then return '' end
return 'sweep:' .. m[1] .. ':' .. m[2]
`)

// resetScript begins a Reset: unless ARGV[1] is "1" (forced), it refuses
// a crawl with leases out; else it replaces the crawl's meta hash with a
// mark, a hash of the one field reset, so that every script of a process
// still on the crawl fails (see guard) and Start refuses the crawl until
// the Reset has deleted the other keys and then the mark: a Reset cut
// short (its process killed, its context cancelled) leaves the mark, and
// no crawl is made anew over the seen set and queues it left. A crawl
// marked so is reset again, forced or not. KEYS[1] the meta hash, KEYS[2]
// the leases hash, KEYS[3] their terms, KEYS[4] the processes on the
// crawl (see presenceScript); ARGV[2] "1" counts no lease (a crawl of
// several shards: the shards' are counted apart). Reply: {1, meta deleted
// (0 or 1)}, and a third element 1 if the crawl was marked already (a
// Reset cut short: its mark, which the caller deletes last, is then the
// crawl's last key); or {0, leases out, processes on it} refused.
var resetScript = redis.NewScript(`
local cut = redis.call('HEXISTS', KEYS[1], 'reset') == 1
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
-- The leases out whose term has not ended: those that ended are their
-- stopped process's, which holds nothing any more. And the processes on
-- the crawl, leases or none (one waiting out a host's delay).
local n = 0
if ARGV[2] ~= '1' then n = redis.call('HLEN', KEYS[2]) - redis.call('ZCOUNT', KEYS[3], '-inf', now) end
local on = redis.call('ZCOUNT', KEYS[4], '(' .. now, '+inf')
if n + on > 0 and ARGV[1] ~= '1' and not cut then return {0, n, on} end
local d = redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'reset', '1')
if cut then return {1, 0, 1} end
return {1, d}
`)

// presenceScript records (ARGV[1] "1") or forgets ("0") its owner,
// ARGV[2], among the processes on the crawl: the sorted set KEYS[2], each
// scored by when its presence ends, ARGV[3] µs from now (see
// Frontier.present), on the server's clock; those ended are dropped. The
// set takes the expiry of the crawl's meta hash, KEYS[1], when it has one. A crawl deleted
// (its meta hash gone, or a Reset's mark) is left as it is.
var presenceScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], 'sb') == 0 then return 0 end
if ARGV[1] == '0' then
  redis.call('ZREM', KEYS[2], ARGV[2])
  return 1
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. string.format('%d', now))
redis.call('ZADD', KEYS[2], string.format('%d', now + tonumber(ARGV[3])), ARGV[2])
-- Never PERSIST: a sweep that sets the crawl's keys to expire sets the
-- meta hash's last, and would leave this set kept for good.
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
`)

// closeScript puts back the leases of its owner, at once, and forgets the
// owner's replies: its process is done with them. On a crawl deleted, or
// being deleted (a Reset cut short, or under way on a Redis Cluster, the
// shards it has not reached yet), it writes nothing: the leases would
// outlive the Reset.
var closeScript = redis.NewScript(guard + prelude + `
local all = redis.call('HGETALL', leases)
local aids, arecs = {}, {}
for i = 1, #all, 2 do
  local rec = unrec(all[i + 1])
  if rec.o == owner then
    endLease(all[i], true)
    takeBack(all[i], rec, now, aids, arecs)
  end
end
releaseAll(aids, arecs)
done('')
redis.call('DEL', ops)
return ''
`)

// pushScript admits Requests. ARGV[10] the run the caller's seen cache
// dropped Requests under (see serverRun), ARGV[11..] as admit reads them.
// Reply: framed, the server's run, then the number admitted; or "stale:"
// and the server's run, having done nothing, if ARGV[10] is another.
var pushScript = redis.NewScript(prelude + `
if not alive({'unfinished', 'fresh', 'queued'}) then return redis.error_reply(NOCRAWL) end
local run, stale = serverRun()
if stale then return 'stale:' .. run end
local added = admit(11)
return done(ns(run) .. ns(added))
`)

// takeScript takes back the expired leases and leases up to ARGV[10]
// Requests that may start now, hosts taking turns (a host with room and no
// delay gives a run, its share of the leases wanted, up to 16, in one
// turn); ARGV[11] is the call's
// token, random, which every lease ID it makes carries after the counter
// lseq and a dash; ARGV[12..] are random numbers in [0, 1) for the hosts'
// pauses.
// Reply: framed fields, the count of leases, then for each its kind ("R"
// for a robots.txt, "P" else), its ID, its host key (R) or Request
// encoding (P), its tries (R) or its host's rules version (P, "" if none);
// then the microseconds until something may be taken, -1 if nothing is
// timed.
const takeBody = `
local TAKEPRE = {'lseq', 'fresh', 'pages', 'queued'}
-- drained is set when a take found no host ready at all: nothing is left
-- that another Take could start now.
local drained = false
-- RUN is how many leases a host gives at most in its turn: a host with
-- room (below HostWorkers), no delay (Policy.HostDelay, Crawl-delay) and
-- no retry due gives its next new Requests in a run, popped at once, and
-- its leases out counted once, rather than one a turn; its next lease is
-- after the other hosts' turns. A run is the host's share of the leases
-- the call still wants among the hosts ready: a call that wants 40 of 5
-- hosts takes 8 of each in one turn, not one a turn in 8 passes, and one
-- that wants 16 of 100 hosts one of each, as before. Not more: a host's
-- requests at once each need a connection of their own (HTTP/1.1), and a
-- crawl of 300 hosts given runs of 16 whatever the hosts ready kept about
-- 16 times the connections open, and went 25% slower.
local RUN = 16
local function takeBody()
-- A[10] is the number of leases wanted, then, for leases ahead too (see
-- aheadOf), an 'a' and how many a lease may have.
local want, AHEAD = string.match(A[10], '^(%d+)a?(%d*)$')
want, AHEAD = tonumber(want), tonumber(AHEAD) or 0
local token = '-' .. A[11]
local ri = 12
local function rnd() local r = tonumber(A[ri]) or 0.5 ri = ri + 1 return r end
local expired = redis.call('ZRANGEBYSCORE', exp, '-inf', S(now), 'LIMIT', 0, 100)
local aids, arecs = {}, {}
for _, id in ipairs(expired) do
  local rec = endLease(id, false)
  if rec then takeBack(id, rec, 0, aids, arecs) else redis.call('ZREM', exp, id) end
end
releaseAll(aids, arecs)
local vt = now
-- out holds the reply's lease fields, in pieces (a string made costs
-- the script more than its bytes); nout counts the fields.
local out, nout = {}, 0
local got = 0
-- The leases' records and terms, written once at the end.
local recs, terms = {}, {}
-- Lease IDs: one counter step for the call, and the call's token. The
-- counter alone would not do: a server rolled back to an older state
-- (a backup restored, the AOF's last second lost) counts from where it
-- was then, and would give the ID of a lease it forgot to another, whose
-- lease the forgotten lease's holder would then end.
load({'lseq', 'fresh', 'pages', 'queued'})
local termAt = S(now + TERM)
local nextID = base.lseq
-- outP adds to the reply the field of page lease id of Request e, rp its
-- host's rules version framed in spaces: ns('P' .. id .. rp .. e), in
-- pieces (a string made costs the script more than its bytes).
local function outP(id, rp, e)
  nout = nout + 1
  out[#out + 1] = S(#id + #rp + #e + 1) .. ':P'
  out[#out + 1] = id
  out[#out + 1] = rp
  out[#out + 1] = e
end
-- keep adds lease id, of record rec, to those written at the end, with
-- its term if x is '1'.
local function keep(id, rec, x)
  recs[#recs + 1] = id
  recs[#recs + 1] = rec
  if x == '1' then
    terms[#terms + 1] = termAt
    terms[#terms + 1] = id
  end
end

-- The queue's length of the host takeFrom serves, asked only where it
-- matters: a new Request is popped without it (nil: not known, taken as
-- more to come; a host found empty later leaves the ready set then).
local llen
local function qlen(h)
  if not llen then llen = redis.call('LLEN', qkey(h)) end
  return llen
end
-- NOTOP is a host's first retry when it has none.
local NOTOP = {}
-- takeFrom leases the Request host h would start now, if any (up to
-- share of them, a run: see RUN), and returns true, the host's time after
-- it (nil: it has nothing it may start whatever the time), as settle would
-- find it, and how many leases it made beyond the first.
local function takeFrom(h, share)
  local hk = hkey(h)
  local st = redis.call('HMGET', hk, 'n', 'nx', 'rf', 'r', 'rt', 'rd', 'rn')
  local n = tonumber(st[1]) or 0
  if n >= HW or st[3] then return false end
  local nx = tonumber(st[2]) or 0
  if nx > vt then return false end
  llen = nil
  -- The host's fields written once, at the end (made only if any).
  local hset
  local rn = tonumber(st[7])
  local top = NOTOP
  if rn ~= 0 then
    top = redis.call('ZRANGE', rkey(h), 0, 0, 'WITHSCORES')
    if not rn and not top[1] then
      rn = 0
      hset = {'rn', '0'}
    end
  end
  nextID = nextID + 1
  local id = S(nextID) .. token
  local kind, tk, enc, rules, rp, es
  -- A host with no rules, or rules too old (Policy.RobotsMaxAge),
  -- gives its robots.txt first.
  local robots = ROBOTS and (not st[4] or stale(st[4]))
  if robots then
    if not (qlen(h) > 0 and not spent() or top[1]) then return false end
    kind, tk, enc = 'R', '1', ''
    hset = hset or {}
    hset[#hset + 1] = 'rf'
    hset[#hset + 1] = id
    nout = nout + 1
    out[#out + 1] = ns('R' .. id .. ' ' .. (st[5] or '0') .. ' ' .. h)
  else
    kind = 'P'
    if top[1] and tonumber(top[2]) <= vt then
      redis.call('ZREM', rkey(h), top[1])
      enc = string.sub(top[1], string.find(top[1], ':', 1, true) + 1)
      tk = '1'
      if rn then
        rn = rn - 1
        hset = hset or {}
        hset[#hset + 1] = 'rn'
        hset[#hset + 1] = S(rn)
      end
      top = NOTOP
      if rn ~= 0 then top = redis.call('ZRANGE', rkey(h), 0, 0, 'WITHSCORES') end
    elseif not spent() then
      -- A run: up to RUN new Requests of a host with room and no delay
      -- in its turn, with one LPOP.
      local k = 1
      if DELAY == 0 and (tonumber(st[6]) or 0) == 0 and MAXPAGES >= 0 then
        k = math.min(RUN, share, HW - n)
        if MAXPAGES > 0 then k = math.min(k, MAXPAGES - base.pages - (cnt.pages or 0)) end
      end
      if k > 1 then
        es = redis.call('LPOP', qkey(h), k)
        enc = es and es[1]
      else
        enc = redis.call('LPOP', qkey(h))
      end
      if not enc then
        llen = 0
        return false
      end
      if es and #es < k then
        -- A run cut short: the queue is empty.
        llen = 0
      elseif llen then
        llen = llen - (es and #es or 1)
      end
      tk = '0'
      add('fresh', -1)
      add('pages', 1)
    else
      return false
    end
    add('queued', -1)
    if ROBOTS and RAGE > 0 and st[4] and not string.find(st[4], '@', 1, true) then
      -- The first URL that goes by the host's rules: their age counts
      -- from now (see stale).
      st[4] = st[4] .. '@' .. S(now)
      hset = hset or {}
      hset[#hset + 1] = 'r'
      hset[#hset + 1] = st[4]
    end
    rules = st[4] or ''
    rp = rules == '' and '  ' or ' ' .. rules .. ' '
    outP(id, rp, enc)
  end
  local rd = tonumber(st[6]) or 0
  local d = math.max(DELAY, rd)
  -- The host's next start before and after, as text: a number turned
  -- into text costs a sprintf.
  local pn = st[2] or '0'
  local nxs = pn
  if d > 0 then
    -- Never sooner than the host's robots.txt Crawl-delay.
    nx = vt + math.max(jitter(d, rnd()), rd)
    nxs = S(nx)
    hset = hset or {}
    hset[#hset + 1] = 'nx'
    hset[#hset + 1] = nxs
  end
  local x = '0'
  if TERM > 0 then
    x = '1'
    terms[#terms + 1] = termAt
    terms[#terms + 1] = id
  end
  recs[#recs + 1] = id
  recs[#recs + 1] = mkrec(kind, tk, x, pn, nxs, h, enc)
  -- A run: more new Requests of the host in the same turn, with one LPOP,
  -- for a host with room and no delay (see RUN).
  local m = 0
  if es and #es > 1 then
    m = #es - 1
    add('fresh', -m)
    add('pages', m)
    add('queued', -m)
    -- mkrec('P', '0', x, pn, nxs, h, e), its start made once a run.
    local rh = mkrec('P', '0', x, pn, nxs, h, '')
    for j = 2, #es do
      nextID = nextID + 1
      local rid = S(nextID) .. token
      outP(rid, rp, es[j])
      keep(rid, rh .. es[j], x)
    end
  end
  if not hset then
    -- The usual case: no number to turn into text (a sprintf).
    redis.call('HINCRBY', hk, 'n', m == 0 and '1' or S(m + 1))
  else
    hset[#hset + 1] = 'n'
    hset[#hset + 1] = S(n + 1 + m)
    redis.call('HSET', hk, unpack(hset))
  end
  n = n + m
  -- A lease ahead only for a host this lease fills: one with room would
  -- have a Take wait for the Request held ahead.
  if kind == 'P' and n + 1 >= HW then
    for _ = 1, AHEAD do
      nextID = nextID + 1
      local sid = S(nextID) .. token
      local field, rec = aheadOf(h, sid, st[2], st[6], st[4], x)
      if not field then
        nextID = nextID - 1
        if rec then llen = 0 end
        break
      end
      nout = nout + 1
      out[#out + 1] = field
      keep(sid, rec, x)
      if llen then llen = llen - 1 end
    end
  end
  -- The host's time now, as wake would compute it.
  if robots or n + 1 >= HW then return true, nil, m end
  if llen ~= 0 and not spent() then return true, nx, m end
  if top[2] then return true, math.max(nx, tonumber(top[2])), m end
  if qlen(h) > 0 then redis.call('SADD', parked, h) end
  return true, nil, m
end

-- Each pass serves the hosts ready, in order of their time, one lease
-- or one run each; a host served goes behind the hosts waiting (its time
-- is at least vt, past theirs): hosts take turns. One that could not serve is not
-- asked again in this pass.
local pass, unparked = 0, false
while got < want and pass < 8 do
  pass = pass + 1
  local cands = redis.call('ZRANGEBYSCORE', ready, '-inf', S(vt), 'LIMIT', 0, want - got)
  -- Hosts parked by a process under a smaller page budget than the
  -- caller's, which no ack of the caller's would unpark; as many as the
  -- passes may ask, so that the call's work stays bounded however many
  -- there are (that process's Takes may park them again).
  if #cands == 0 and not unparked then
    unparked = true
    if unpark(8 * want) then cands = redis.call('ZRANGEBYSCORE', ready, '-inf', S(vt), 'LIMIT', 0, want - got) end
  end
  if #cands == 0 then
    drained = true
    break
  end
  local zadd, zrem = {}, {}
  for j, h in ipairs(cands) do
    if got >= want then break end
    -- Each host of the pass its share of the leases still wanted: a run
    -- only where the hosts ready are fewer than the leases wanted.
    local ok, w, more = takeFrom(h, math.ceil((want - got) / (#cands - j + 1)))
    if ok then
      got = got + 1 + more
      vt = vt + 1
      if w then
        zadd[#zadd + 1] = S(math.max(w, vt))
        zadd[#zadd + 1] = h
      else
        zrem[#zrem + 1] = h
      end
    else
      w = settle(h)
      if w and w <= vt then
        zadd[#zadd + 1] = S(vt + 1)
        zadd[#zadd + 1] = h
      end
    end
  end
  if #zadd > 0 then redis.call('ZADD', ready, unpack(zadd)) end
  if #zrem > 0 then redis.call('ZREM', ready, unpack(zrem)) end
end
add('lseq', nextID - base.lseq)
if #recs > 0 then redis.call('HSET', leases, unpack(recs)) end
if #terms > 0 then redis.call('ZADD', exp, unpack(terms)) end
local wait = -1
if got == 0 then
  local r = redis.call('ZRANGEBYSCORE', ready, '-inf', '(' .. FAR, 'WITHSCORES', 'LIMIT', 0, 1)
  local e = redis.call('ZRANGEBYSCORE', exp, '-inf', '(' .. FAR, 'WITHSCORES', 'LIMIT', 0, 1)
  local at
  if r[2] then at = tonumber(r[2]) end
  if e[2] and (not at or tonumber(e[2]) < at) then at = tonumber(e[2]) end
  if at then wait = math.max(0, at - now) end
end
return ns(nout) .. table.concat(out) .. ns(S(wait))
end
`

var takeScript = redis.NewScript(prelude + takeBody + `
if not alive(TAKEPRE) then return redis.error_reply(NOCRAWL) end
return done(takeBody())
`)

// ackScript ends leases as done: ARGV[10] the run the caller's seen cache
// dropped links under (see serverRun), then ARGV[11] leases, each framed
// as: its ID; "" for the usual ack (sent, no rules, no lease ahead, the
// fields below "0" or ""), or "x" and then, for robots.txt "1" if
// Unsent, "1" if it comes with rules, their encoding and their delay
// (µs), a random number, what becomes of its lease ahead ("" none; "+"
// and its ID: promoted, it takes the slot of the lease acked, then a
// comma and the IDs of the leases ahead that stay behind it, comma
// separated, renewed for the term; "?" and the same: promoted the same
// way unless its host may not start a request now (paused, by any
// process), in which case it goes back, as if never taken: the caller
// has not handed it out yet; "-" and the IDs of leases ahead,
// comma separated: released), for leases ahead of the promoted one how
// many at most, a dot and a random token ("" for none; their IDs are a
// counter, a dash, the token); then its stats counters, each framed as
// the length of its name, a colon, the name, the increment and a space
// (a robots.txt's lease, kind R, counts none: it takes them back); then
// its links as admit
// reads them. After the last lease: the number of stats counters, then
// the name and increment of each, summed over the leases: an ack whose
// lease is lost (or acked twice in the call) takes its own back, so that
// the usual call reads its counters once, not once a lease. The links are
// admitted even when the lease is lost. Reply:
// framed, the server's run, then one framed field: for each lease "1" if
// it was the caller's ("0" if lost) then the number of its links
// admitted, and a space; then one framed field of a framed field for each
// lease ahead promoted: "0" if it was not the caller's any more, else "1"
// then the leases ahead of it made (each framed as takeScript frames a
// lease); or
// "stale:" and the server's run, having done nothing, if ARGV[10] is
// another.
const ackBody = `
local ACKPRE = {'unfinished', 'fresh', 'queued', 'done', 'pages'}
-- callStats, when set, gathers the stats counters of the acks of every
-- section of a call on several shards of a node (ackManyScript), which
-- counts them once, on one shard, at its end: Stats sums every shard's,
-- and a hash written once a call, not once a shard, saves the server two
-- redis.calls a shard.
local callStats
-- ackEnd is the index of the argument after the last lease, once ackBody
-- has run; isOver is set if it found the crawl over; aheadOut is the
-- reply's field of the leases ahead promoted.
local ackEnd, isOver, aheadOut = 0, false, ''
-- unstat takes the counters framed in s (an ack's own) back from stats.
local function unstat(stats, s)
  local p = 1
  while p <= #s do
    local c = string.find(s, ':', p, true)
    local l = tonumber(string.sub(s, p, c - 1))
    local v = c + l + 1
    local sp = string.find(s, ' ', v, true)
    local k = string.sub(s, c + 1, v - 1)
    stats[k] = (stats[k] or 0) - tonumber(string.sub(s, v, sp - 1))
    p = sp + 1
  end
end
local function ackBody()
local i = 12
local out = {}
local stats = {}
local any = false
local ents, ids = {}, {}
local acking = {}
-- The links of all the leases, queued once a host after the acks (the
-- Requests the call's leases ahead take are those queued before it).
local q = {byHost = {}, hosts = {}}
for e = 1, tonumber(A[11]) do
  local ent
  if A[i + 1] == '' then
    -- The usual ack: its other fields are filled in only if the loop
    -- below needs them (see ackOne).
    ent = {id = A[i], st = A[i + 2], u = true}
    i = i + 3
  else
    ent = {id = A[i], unsent = A[i + 2], hasRules = A[i + 3], rules = A[i + 4],
      rd = tonumber(A[i + 5]), r = tonumber(A[i + 6]), op = A[i + 7], ahead = A[i + 8], st = A[i + 9]}
    i = i + 10
  end
  ent.added, i = admit(i, q)
  ents[e] = ent
  ids[e] = ent.id
  acking[ent.id] = true
end
for _ = 1, tonumber(A[i]) do
  stats[A[i + 1]] = (stats[A[i + 1]] or 0) + tonumber(A[i + 2])
  i = i + 2
end
ackEnd = i + 1
-- The leases ahead to promote, read with the leases acked.
for _, ent in ipairs(ents) do
  if not ent.u and ent.op ~= '' then
    ent.sop, ent.sid = string.sub(ent.op, 1, 1), string.sub(ent.op, 2)
    if ent.sop == '?' then
      -- Not handed out yet: promoted only if its host may start it now.
      ent.sop, ent.unheld = '+', true
    end
    if ent.sop == '+' then
      -- The IDs after the first are the rest of its chain, renewed.
      local c = string.find(ent.sid, ',', 1, true)
      if c then
        ent.renew = string.sub(ent.sid, c + 1)
        ent.sid = string.sub(ent.sid, 1, c - 1)
      end
      ids[#ids + 1] = ent.sid
      ent.si = #ids
    end
  end
end
local raws = {}
if #ids > 0 then raws = redis.call('HMGET', leases, unpack(ids)) end
local ended, timed = {}, false
local dec, decHosts = {}, {}
-- The leases promoted by this call, by ID: their records as they are
-- now; and those written at the end, with their terms.
local promoted, precs, pterms, aouts, renews = {}, {}, {}, {}, {}
-- promote makes lease ahead ent.sid, of record srec, a lease of the
-- slot it takes, with a lease ahead of its own if ent asks for one and
-- it is not acked in this call too.
local function promote(ent, srec)
  local x = srec.x and '1' or '0'
  promoted[ent.sid] = {k = 'P', t = 0, x = srec.x, pn = srec.pn, nx = srec.nx, o = owner, h = srec.h, e = srec.e}
  if acking[ent.sid] then return '1' end
  precs[#precs + 1] = ent.sid
  precs[#precs + 1] = mkrec('P', '0', x, S(srec.pn), S(srec.nx), srec.h, srec.e)
  local termAt
  if x == '1' then
    termAt = S(now + TERM)
    pterms[#pterms + 1] = termAt
    pterms[#pterms + 1] = ent.sid
    -- The leases ahead that stay behind it are renewed with it: a chain
    -- whose holders each end quicker than the crawler extends would
    -- otherwise outlive its term (ZADD XX: one given back or taken back
    -- has left exp, and an ID is never used twice).
    for a in string.gmatch(ent.renew or '', '[^,]+') do
      renews[#renews + 1] = termAt
      renews[#renews + 1] = a
    end
  end
  local k, tok = string.match(ent.ahead, '^(%d+)%.(%x+)$')
  if not k then return '1' end
  local st = redis.call('HMGET', hkey(srec.h), 'nx', 'rd', 'r', 'n')
  -- The host's leases out, less the call's usual acks of it, counted
  -- down after the loop: a host they leave with room gets none ahead.
  if (tonumber(st[4]) or 0) - (dec[srec.h] or 0) < HW then return '1' end
  load({'lseq'})
  local made = {'1'}
  for _ = 1, tonumber(k) do
    local aid = S(base.lseq + (cnt.lseq or 0) + 1) .. '-' .. tok
    local field, rec = aheadOf(srec.h, aid, st[1], st[2], st[3], x)
    if not field then break end
    add('lseq', 1)
    made[#made + 1] = field
    precs[#precs + 1] = aid
    precs[#precs + 1] = rec
    if termAt then
      pterms[#pterms + 1] = termAt
      pterms[#pterms + 1] = aid
    end
  end
  return table.concat(made)
end
-- countDown counts one of host h's leases out down, for a usual ack:
-- once for all the call's usual acks of the host, after the loop.
local function countDown(h)
  local d = dec[h]
  if not d then decHosts[#decHosts + 1] = h end
  dec[h] = (d or 0) + 1
end
-- ackOne acks ent, the e-th lease of the call, whatever its kind and
-- its fields.
local function ackOne(e, ent)
  local id = ent.id
  if ent.u then
    ent.unsent, ent.hasRules, ent.rules, ent.rd, ent.r, ent.op, ent.ahead = '0', '0', '', 0, 0, '', ''
  end
  local rec = promoted[id] or raws[e] and unrec(raws[e])
  -- The lease ahead this ack promotes, if it is still the caller's.
  local srec
  if ent.sop == '+' and not promoted[ent.sid] then
    srec = raws[ent.si] and unrec(raws[ent.si])
    if srec and (srec.o ~= owner or srec.k ~= 'S') then srec = nil end
    -- It goes back rather than start if its host's robots.txt is due
    -- again (it was made under the rules before), or, not handed out
    -- yet ('?'), if its host may not start a request now (paused since,
    -- by any process: its next start, nx, past now). One read for both.
    local aging, unheld = ROBOTS and RAGE > 0, ent.unheld
    if srec and (aging or unheld) then
      local st = redis.call('HMGET', hkey(srec.h), 'r', 'nx')
      if aging and stale(st[1] or '') or unheld and (tonumber(st[2]) or 0) > now then
        giveBack(ent.sid)
        srec = nil
      end
    end
  end
  if not rec or rec.o ~= owner or ended[id] then
    unstat(stats, ent.st)
    out[#out + 1] = '0' .. digits(ent.added) .. ' '
    if srec then redis.call('HINCRBY', hkey(srec.h), 'n', '1') end
  else
    ended[id] = true
    ended[#ended + 1] = id
    timed = timed or rec.x
    any = true
    local hk = hkey(rec.h)
    local must = false
    if srec and rec.k == 'P' and srec.h == rec.h then
      -- The lease ahead takes the slot this lease leaves: the host's
      -- leases out and its place in the ready set stay as they are.
    elseif rec.k == 'S' then
      -- A lease ahead acked unpromoted (the call that was to promote it
      -- failed): it holds no slot of its host.
      if srec then redis.call('HINCRBY', hkey(srec.h), 'n', '1') end
    elseif rec.k == 'P' and not srec and ent.unsent ~= '1' then
      countDown(rec.h)
    else
      local left = redis.call('HINCRBY', hk, 'n', '-1')
      must = left + 1 >= HW
      if srec then redis.call('HINCRBY', hkey(srec.h), 'n', '1') end
    end
    if rec.k == 'R' then
      -- A robots.txt counts no stats.
      unstat(stats, ent.st)
      must = true
      local rules = ent.rules
      if ent.hasRules ~= '1' then rules = '' end
      -- Its tries go: the next fetch of it (see stale) counts its own.
      redis.call('HDEL', hk, 'rf', 'rt')
      redis.call('HSET', hk, 'r', id, 'rb', rules, 'rd', S(ent.rd))
      if ent.rd > DELAY then
        local nx = tonumber(redis.call('HGET', hk, 'nx')) or 0
        local n2 = now + math.max(jitter(ent.rd, ent.r), ent.rd)
        if n2 > nx then redis.call('HSET', hk, 'nx', S(n2)) end
      end
    else
      add('unfinished', -1)
      add('done', 1)
      if ent.unsent == '1' then
        must = true
        if rec.t == 0 then add('pages', -1) end
        if tonumber(redis.call('HGET', hk, 'nx') or 0) == rec.nx then
          -- The delay its Take charged goes back; a Pause made since
          -- (pz) does not.
          local pz = tonumber(redis.call('HGET', hk, 'pz')) or 0
          redis.call('HSET', hk, 'nx', S(math.max(rec.pn, pz)))
        end
      end
    end
    -- A host below its limit before the ack, its time unchanged, is
    -- where it was in the ready set. One whose time or room changed may
    -- serve the other processes' Takes now.
    if must then
      settle(rec.h)
      wakeup = true
    end
    out[#out + 1] = '1' .. digits(ent.added) .. ' '
  end
  if srec then
    aouts[#aouts + 1] = ns(promote(ent, srec))
  elseif ent.sop == '+' then
    aouts[#aouts + 1] = ns('0')
  elseif ent.sop == '-' then
    giveBack(ent.sid)
  end
end
for e, ent in ipairs(ents) do
  local id = ent.id
  -- The usual ack of a page lease of the caller's, the most of a call:
  -- it needs its host only, read with no table made.
  local h, x
  if ent.u and not promoted[id] and raws[e] and not ended[id] then h, x = peek(raws[e]) end
  if h then
    ended[id] = true
    ended[#ended + 1] = id
    timed = timed or x
    any = true
    countDown(h)
    add('unfinished', -1)
    add('done', 1)
    out[#out + 1] = '1' .. digits(ent.added) .. ' '
  else
    ackOne(e, ent)
  end
end
for _, h in ipairs(decHosts) do
  local d = dec[h]
  -- A host at its limit before has room now: it may serve the other
  -- processes' Takes.
  if redis.call('HINCRBY', hkey(h), 'n', S(-d)) + d >= HW then
    settle(h)
    wakeup = true
  end
end
queueAll(q)
if #ended > 0 then
  redis.call('HDEL', leases, unpack(ended))
  if timed or TERM > 0 then redis.call('ZREM', exp, unpack(ended)) end
end
if #precs > 0 then redis.call('HSET', leases, unpack(precs)) end
if #pterms > 0 then redis.call('ZADD', exp, unpack(pterms)) end
if #renews > 0 then redis.call('ZADD', exp, 'XX', unpack(renews)) end
aheadOut = table.concat(aouts)
if callStats then
  for k, v in pairs(stats) do callStats[k] = (callStats[k] or 0) + v end
else
  incr(P .. 'stats', stats, {})
end
if (cnt.pages or 0) < 0 then unpark() end
if any and over() then
  redis.call('PUBLISH', P .. 'ev', 'j')
  isOver = true
end
return table.concat(out)
end
`

var ackScript = redis.NewScript(prelude + ackBody + `
if not alive(ACKPRE) then return redis.error_reply(NOCRAWL) end
local run, stale = serverRun()
if stale then return 'stale:' .. run end
local acked = ackBody()
return done(ns(run) .. ns(acked) .. ns(aheadOut))
`)

// ackTakeScript is ackScript then takeScript in one call, for a process
// whose Takes wait while its Acks go to the server: a host's slot that an
// ack frees is leased again at once, with no round trip between, and the
// other processes are not woken for work this call took. ARGV[10..] as
// ackScript's, then takeScript's own arguments (ARGV[10] on) after the
// last lease. Reply: framed, ackScript's two fields (or "stale:" and the
// server's run, having done nothing), then takeScript's reply, then "1"
// if the call left no host ready (the other processes were not woken:
// there is nothing for them to take now), else "0".
var ackTakeScript = redis.NewScript(prelude + ackBody + takeBody + `
if not alive(ACKPRE) then return redis.error_reply(NOCRAWL) end
local run, stale = serverRun()
if stale then return 'stale:' .. run end
local acked = ackBody()
local T = {}
for j = ackEnd, #ARGV do T[10 + j - ackEnd] = ARGV[j] end
A = T
local taken = takeBody()
local quiet = '0'
if drained and not isOver and #redis.call('ZRANGEBYSCORE', ready, '-inf', '(' .. FAR, 'LIMIT', 0, 1) == 0 then
  wakeup = false
  quiet = '1'
end
return done(ns(run) .. ns(acked) .. ns(taken) .. ns(quiet) .. ns(aheadOut))
`)

// retryScript ends lease ARGV[10] by putting its Request back: ARGV[11]
// is how many µs from now it may be taken again, ARGV[12] the Request as
// it is now, ARGV[13] its tries; ARGV[14] "1" releases the lease instead,
// as if it had never been taken; ARGV[15], if not "", are the IDs of
// leases ahead (see aheadOf), comma separated, released first. Reply: "1", or "0" if the
// lease is lost.
var retryScript = redis.NewScript(guard + prelude + `
local id = ARGV[10]
giveBack(ARGV[15] or '')
local rec = endLease(id, true)
if not rec then return done('0') end
if ARGV[14] == '1' then
  release(id, rec)
else
  putBack(id, rec, now + math.max(0, tonumber(ARGV[11])), ARGV[12], ARGV[13])
end
wakeup = true
return done('1')
`)

// extendScript renews lease ARGV[10] for the term, and the leases ahead of
// it, ARGV[11], comma separated (see aheadOf). Run twice, it renews twice: no
// replay needed. Reply: "1", or "0" if the lease is lost.
var extendScript = redis.NewScript(guard + prelude + `
local raw = redis.call('HGET', leases, ARGV[10])
if not raw or unrec(raw).o ~= owner then return '0' end
if TERM > 0 then
  redis.call('ZADD', exp, S(now + TERM), ARGV[10])
  for a in string.gmatch(ARGV[11] or '', '[^,]+') do
    if redis.call('HEXISTS', leases, a) == 1 then redis.call('ZADD', exp, S(now + TERM), a) end
  end
end
return '1'
`)

// pauseScript holds host ARGV[10] back for ARGV[11] µs from now. Run
// twice, it pauses until the later time: no replay needed.
var pauseScript = redis.NewScript(guard + prelude + `
local hk = hkey(ARGV[10])
-- A host paused before any Request of it was queued has a hash now:
-- the sweep of the crawl's keys finds it in hosts (see queueAll).
redis.call('SADD', P .. 'hosts', ARGV[10])
local until_ = now + tonumber(ARGV[11])
local nx = tonumber(redis.call('HGET', hk, 'nx')) or 0
if until_ > nx then redis.call('HSET', hk, 'nx', S(until_)) end
local pz = tonumber(redis.call('HGET', hk, 'pz')) or 0
if until_ > pz then redis.call('HSET', hk, 'pz', S(until_)) end
settle(ARGV[10])
return done('')
`)

// The scripts of a sharded crawl only (see Options.Shards).

// pushGroupsScript admits groups of links on shards of one node (its
// sections, see many): the links of other shards' Acks, sent before those
// Acks end their leases, so that a link is counted on its shard before
// its page's lease ends on another. A section's arguments: "-" (a sharded
// crawl has no seen cache), the number of groups, then each as admit
// reads them. A section's reply: the number admitted of each group,
// spaced.
const pushGroupsBody = `
local PRE = {'unfinished', 'fresh', 'queued'}
local function body()
  local i = 12
  local out = {}
  for g = 1, tonumber(A[11]) do
    local added
    added, i = admit(i)
    out[g] = digits(added)
  end
  return table.concat(out, ' ')
end
`

var pushGroupsScript = redis.NewScript(prelude + pushGroupsBody + `
return many(PRE, body)
`)

// shardGrantScript brings a shard's part of the page budget to what the
// control keys granted it: ARGV[10], the pages granted to it in all (a
// total, so that the script run twice, or after a later grant, adds
// nothing twice), and settles the hosts the budget held back.
var shardGrantScript = redis.NewScript(guard + prelude + `
load({'cg'})
local g = tonumber(ARGV[10])
if g > base.cg then
  add('cg', g - base.cg)
  unpark()
end
return done('')
`)

// shardGiveScript gives back the part of the page budget a shard holds
// and does not use. A shard that took more pages than it holds (taken
// while the crawl had no budget, a Run before this one) grants itself
// what it took beyond, for the control keys to count as granted. Reply:
// the pages granted to it in all, a space, those it gave back in all,
// for the control keys (see ctlSyncScript).
var shardGiveScript = redis.NewScript(guard + prelude + `
load({'pages', 'cg', 'cb'})
local spare = base.cg - base.cb - base.pages
if spare > 0 then add('cb', spare) elseif spare < 0 then add('cg', -spare) end
done('')
return S(base.cg + (cnt.cg or 0)) .. ' ' .. S(base.cb + (cnt.cb or 0))
`)

// ctlGrantScript grants shard ARGV[10] up to ARGV[12] pages of the budget
// (MAXPAGES) not yet granted, on the control keys' budget hash: g:<v>
// the pages granted to shard v in all, b:<v> those it gave back in all,
// net what is granted and not given back. ARGV[11] is the total the
// shard holds (its cg): a grant it has not applied yet is not made again.
// Reply: the shard's total granted, for shardGrantScript.
var ctlGrantScript = redis.NewScript(guard + prelude + `
local B = P .. 'budget'
local gf = 'g:' .. ARGV[10]
local r = redis.call('HMGET', B, gf, 'net')
local gv = tonumber(r[1]) or 0
if gv > tonumber(ARGV[11]) then return S(gv) end
local net = tonumber(r[2]) or 0
local n = math.min(tonumber(ARGV[12]), MAXPAGES - net)
if n <= 0 then return S(gv) end
redis.call('HSET', B, gf, S(gv + n), 'net', S(net + n))
return S(gv + n)
`)

// ctlSyncScript brings the control keys' record of shard ARGV[10] up to
// what the shard says: ARGV[11] the pages granted to it in all (more than
// the control keys granted if it granted itself what it took beyond its
// part), ARGV[12] those it gave back in all; each counted once.
var ctlSyncScript = redis.NewScript(guard + prelude + `
local B = P .. 'budget'
local gf, bf = 'g:' .. ARGV[10], 'b:' .. ARGV[10]
local r = redis.call('HMGET', B, gf, bf, 'net')
local gv, bv, net = tonumber(r[1]) or 0, tonumber(r[2]) or 0, tonumber(r[3]) or 0
local cg, cb = tonumber(ARGV[11]), tonumber(ARGV[12])
local set = {}
if cg > gv then
  net = net + cg - gv
  set[#set + 1] = gf
  set[#set + 1] = S(cg)
end
if cb > bv then
  net = net - (cb - bv)
  set[#set + 1] = bf
  set[#set + 1] = S(cb)
end
if #set > 0 then
  set[#set + 1] = 'net'
  set[#set + 1] = S(net)
  redis.call('HSET', B, unpack(set))
end
return ''
`)

// takeManyScript is takeScript on shards of one node, each a section (see
// many) with takeScript's own arguments, replying as it does.
var takeManyScript = redis.NewScript(prelude + takeBody + `
return many(TAKEPRE, takeBody)
`)

// ackManyScript is ackScript on shards of one node, each a section (see
// many) with ackScript's own arguments (its run "-"); a section's reply
// is the field that follows the run in ackScript's. The stats counters of
// all its acks go to the last section's shard (see callStats).
var ackManyScript = redis.NewScript(prelude + ackBody + `
callStats = {}
local reply = many(ACKPRE, ackBody)
if type(reply) == 'table' then return reply end
incr(P .. 'stats', callStats, {})
return reply
`)
