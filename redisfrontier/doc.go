// Package redisfrontier is a crawl.Frontier kept in Redis, so that crawler
// processes on several machines share one crawl: one seen set, one queue,
// one per-host schedule, one budget of requests (Policy.MaxPages), one
// count of what is pending, and the Stats of the whole crawl (it is a
// crawl.StatsStore).
//
//	f, err := redisfrontier.Open(ctx, "redis://127.0.0.1:6379/0", nil)
//	if err != nil { ... }
//	defer f.Close()
//	c, err := crawl.New(crawl.WithFrontier(f), ...)
//	stats, err := c.Run(ctx, roots...)
//
// Run the same command on N machines against one Redis: with no
// Options.Name, Start names the crawl after its roots and scope (a short
// hash), so they all join one crawl, and a process that joins late or
// restarts resumes it. Start refuses a crawl of the same name started
// with other roots or scope, and says so.
//
// # Server
//
// Redis 7.0 or later (Debian 12's redis-server), configured with
//
//	appendonly yes
//	appendfsync everysec
//	maxmemory-policy noeviction
//
// Redis writes a script's changes to the AOF before it answers, so a
// redis-server killed (kill -9, a crash of the server alone) and started
// again on its AOF has lost nothing the Frontier was told was done, but
// on a slow disk: while an fsync of the AOF is under way, Redis puts its
// writes off (up to 2 s) and answers meanwhile, so a kill -9 then loses
// them, as a crash of the machine loses at most the last second or two.
// Either way what is lost is a state the crawl was in (each script is one
// MULTI/EXEC in the AOF), so it costs only work done again (the
// repository's docs/durability.md measured 17 to 22 of 400 pages fetched
// again after a kill -9 under a busy disk). Eviction would drop the crawl's keys: keep
// it off. RDB snapshots alone roll the crawl back to the snapshot.
//
// # Guarantees
//
//   - At least once: a Request is leased to one holder at a time, until
//     its Ack or Retry or until Policy.LeaseTerm passes without an Extend;
//     then any process's Take takes it back and leases it again, and the
//     first holder's Ack, Retry and Extend return crawl.ErrLeaseLost (the
//     lease's owner and ID are checked on the server). A lease ID is a
//     counter kept in Redis and 64 random bits drawn by the Take that
//     made it, so that a server rolled back to an older state (a backup
//     restored, the AOF's last second lost in a crash of the machine)
//     never gives a forgotten lease's ID to another: the forgotten lease
//     gets crawl.ErrLeaseLost, and its URL, queued again, is handed out
//     and counted once. A shared crawl
//     needs a LeaseTerm (the crawler's default is a minute): with none,
//     the leases of a process that dies without Close stay out for good
//     (unless it is restarted with the same Options.Owner) and Join never
//     returns. After a crash, at most the leases out are fetched again,
//     each after its term. The Frontier is no crawl.ResultStore: a
//     process's crawler delivers a Result once its Ack returned, so a
//     process killed in between loses those Results (at most one a
//     worker), while their URLs are done for the whole crawl.
//   - Exact termination: Join returns when nothing is queued, leased or
//     waiting to be retried in the whole crawl (or when the page budget is
//     spent and only new Requests are left), not after an idle time. An
//     Ack admits its links in the same step (in a crawl of several
//     shards, those of other shards on their own shards first), so the
//     count never touches zero early.
//   - Politeness across processes, on the server's clock (TIME in the
//     scripts): Policy.HostWorkers leases of a host out at once, the
//     starts of its requests spaced by Policy.HostDelay or its robots.txt
//     Crawl-delay, whichever is larger (each pause drawn from [d/2, 3d/2],
//     and never under the Crawl-delay),
//     Pause, and hosts taking turns (a host below its HostWorkers with
//     no delay gives a Take that wants more leases than there are hosts
//     ready its share of them, up to 16, in one turn: see Speed). The
//     clocks of the crawler machines
//     never matter: Retry and Pause send the server a duration, not a
//     time. A host's robots.txt is handed out once for the crawl, and
//     again once its rules are Policy.RobotsMaxAge old (on the server's
//     clock); its rules, kept in Redis, come with every lease of the
//     host.
//   - Policy.MaxPages is a budget of the whole crawl: it counts the
//     Requests of every kind but RobotsRequest (pages, sitemaps,
//     requisites, references, external checks) taken for their first
//     attempt, over every process, less those acked Unsent (a robots.txt
//     is never counted; a retry, or a Request taken back from an expired
//     lease, is not counted again). Once it is spent, only retries and
//     taken-back Requests are handed out (with the robots.txt of a host
//     that has one and no rules yet).
//   - While Redis is unreachable (or loading its data), every method waits
//     and tries again, backing off up to 2 s, until its ctx is done; it
//     does not return connection errors. Every script is safe to run twice
//     (go-redis resends a command whose reply was lost; so does the
//     Frontier): a script that changes the crawl records its reply under
//     the caller's call number, and a second run returns that reply and
//     changes nothing, so an Ack sent twice counts once.
//
// Each process sends its Policy with each call: processes of one crawl
// should run with the same Policy.
//
// # A Redis Cluster
//
// OpenCluster (or New with a *redis.ClusterClient and Options.Shards)
// spreads a crawl over the masters of a Redis Cluster by host: a crawl of
// Options.Shards shards (OpenCluster's default, DefaultShards, is 256),
// each host's state under the hash tag of its shard, "crawl:{NAME:v}:",
// in the layout below; the roots, scope and what is left of the page
// budget under the crawl's own, "crawl:{NAME}:". Every guarantee above
// holds across shards: an Ack admits its page's links of other shards on
// their shards before it ends the lease (a process killed between the two
// leaves the lease to expire, and the page's second Ack admits nothing
// twice); Policy.MaxPages is handed to the shards in parts of up to 32
// pages, taken back when a shard has no use for its part and another has;
// Join returns when two reads of every shard find nothing pending and no
// shard changed between them. What differs: no seen cache (every link is
// asked of its shard), Counts summed over shards read one after the other
// (not at one instant), and a crawl of many shards costs more server CPU
// a URL than one under one tag (about 205 to 227 µs summed over 3
// masters against 57 on one server, BenchmarkCluster), spread over the
// masters.
// Redis replicates asynchronously, so a master that dies may take its
// last writes with it. On its own shards that costs work done again,
// never a URL lost; but the other masters keep what they did meanwhile,
// so a link that a page of another master's shard had just sent it is
// lost when that page's ack was kept: crawled only if another page
// links to it. With Options.WaitReplicas each write waits for a replica, and a
// failover loses no write (pages are fetched again only when the failover
// and the wait outlast Policy.LeaseTerm). docs/cluster.md in the repository tells every
// step and its failure cases, and what was measured.
//
// # Layout
//
// A crawl of one shard keeps its keys under "crawl:{NAME}:", one hash
// tag, so that a Redis Cluster keeps the crawl on one master:
//
//	meta         hash: roots, scope, sb (bits of the seen buckets), and
//	             the counters queued, fresh (never taken), unfinished
//	             (pending), done, pages (what Policy.MaxPages counts),
//	             lseq (the leases made); once a Join found the crawl
//	             done, fin (when, µs), fd (done then), dl (when the
//	             keys expire, µs; 0: kept), sw (done at the last sweep
//	             of the keys' expiry); format (2, this layout; 1:
//	             made by an earlier version, with no sets hosts and
//	             owners, whose keys are found by SCAN); shards
//	             (a crawl of several: their number); rv (set while a
//	             process revives a crawl whose keys were set to expire).
//	             A Reset under way replaces it with a hash of the one
//	             field reset, until it has deleted the other keys
//	s:<b>        set: the seen set's bucket b (see below)
//	q:<host>     list: the host's new Requests, in order of admission
//	r:<host>     sorted set: the host's Requests put back, by the time
//	             they may be taken (µs); member "<lease ID>:<Request>"
//	h:<host>     hash: n (leases out), nx (no start before, µs), pz (the
//	             latest Pause's end, µs, which an Unsent ack's giving back
//	             of its Take's delay does not undo), rf (the
//	             robots.txt lease out), r, rb, rd (the rules: version,
//	             its robots.txt's lease ID, then "@" and when the first
//	             URL went by them (µs), body, delay), rt (tries of the robots.txt), rn (the
//	             count of r:<host>, so that a Take looks there only when
//	             it is not 0; absent: not known yet)
//	ready        sorted set: the hosts that have a Request they may
//	             start, by when; a host at its HostWorkers is not in it.
//	             Start adds a member of 82 bytes at 9e15 (µs: the year
//	             2255), which no time reaches, so that Redis keeps the
//	             set a skiplist (by default it keeps a sorted set of at
//	             most 128 members of at most 64 bytes as a listpack,
//	             whose ZADD costs time linear in its size)
//	parked       set: hosts held back only by the page budget
//	hosts        set: every host whose keys (q:, r:, h:) the crawl may
//	             have, for the sweep of the keys (see Lifecycle)
//	owners       set: every Owner that started on the crawl, whose
//	             replies (ops:<owner>) the sweep sets to expire
//	leases       hash: lease ID ("<lseq>-<the call's random token>") →
//	             its record (a short text: kind (a page, a robots.txt,
//	             or a page leased ahead: see Speed), first attempt or not,
//	             timed or not, the host's times, owner, host, Request;
//	             records in MessagePack, as earlier versions wrote them,
//	             are read too)
//	exp          sorted set: lease ID → when its term ends (µs); and
//	             the member at 9e15 that ready has
//	stats        hash: the crawl.Stats counters
//	ops:<owner>  sorted set: the owner's recent replies, for replay
//	live         sorted set: the processes on the crawl (Owner → when
//	             their presence ends, µs), for Inspect and Reset
//	ev           pub/sub channel: "w", work came up (the Takes waiting
//	             ask again), or "j", the crawl may be over (the Takes
//	             and the Joins waiting ask again); Start returns
//	             subscribed, and a subscription made again on a new
//	             connection, which may have missed events, counts as
//	             both
//
// A Request is stored as a short text (its numbers, then referrer, URL and,
// when it has one, its Wire form).
// Each change is one Lua script (scripts.go): Start, Push, Take, Ack (and
// Ack then Take, in one call), Retry (which also gives back leases ahead),
// Extend, Pause, Close, and the
// lifecycle's Finish, Swept and Reset. Take takes back the expired leases, then
// pops hosts from ready in order of time, leases from each what it may
// start (a robots.txt first for a host with no rules under Policy.Robots,
// a retry whose time has come, a new Request; for a host with room and
// no delay, a run of new Requests, its share of the leases wanted among
// the hosts ready, up to 16, popped at once), sets the
// host's next start, and puts the host back behind the others. Ack ends
// the lease (if it is still the caller's), admits the links, counts the
// Result; the leases of one host that a call acks are counted down once
// for all, and the links its acks send are queued once a host.
//
// Why not a Stream and a consumer group, the first design studied: the
// contract asks for more than one FIFO gives, namely HostWorkers above 1,
// robots.txt first and alone, retries by their time per host, turns
// between hosts, a page budget, and a Retry that gives a Request back
// with its new tries. With one stream these need a gate that defers and
// re-adds entries (and churns), and XACK does not check the owner, so
// every script would check XPENDING first anyway. Per-host queues and a
// ready set make each rule one comparison in the script that leases,
// with leases as plain records checked by owner and ID.
//
// # Lifecycle
//
// A crawl is made by the first Start under its name. When a Join finds
// nothing pending in the whole crawl, the crawl is done; when it finds
// the page budget spent, with nothing left but the new Requests it holds
// back, the crawl is stopped (not done: Status.Done and WasDone say no).
// Either way Join records when (Status.Finished) and sets every key of
// the crawl to expire Options.TTL later (7 days by default; a negative TTL keeps them), at
// one deadline: it sets each key with PEXPIREAT, the meta hash last, so
// that no key outlives it, and another process that finds the sweep
// unfinished (its process died) does it again. A crawl of one shard
// names its keys itself: the fixed ones, every bucket its seen set's bits
// allow (some may not exist), and the keys of each host of its set hosts
// and the replies of each process of its set owners (one SADD a call that
// queues links, one a Start), so that its sweep costs what the crawl
// has, whatever else the database holds. Those of a crawl of several
// shards on a Redis Cluster are read from the slots of its hash tags
// (CLUSTER GETKEYSINSLOT on the masters that serve them; by SCAN if one
// holds more than 100,000 keys). A SCAN, which reads every key of the
// database, finds the keys of a crawl of several shards on one server and
// of one made by an earlier version (its meta hash's format 1). On a
// redis-server that also held 300,000 other keys (those of crawls done,
// kept for their TTL, say), a crawl of 10,001 URLs by the command took
// 0.3 to 0.45 s more of the server's CPU with SCAN than on an empty one,
// and 0.5 to 0.9 s more of its own time (it sweeps before it exits);
// naming its keys, it took what it takes on an empty one. A process that joins a
// crawl done (or stopped) as it was (nothing acked since) moves neither
// the time nor the deadline, and WasDone tells it of a crawl done; so
// running the command again never keeps a crawl longer. One that has
// work in it again (a Start under a larger page budget; a Push of new
// URLs by a process that found the crawl done or stopped; the Join of any
// process that finds work left for it under its own budget, such as one
// under a larger budget than the one that stopped the crawl) keeps its
// keys (PERSIST, the same keys, the meta hash last; if a finish comes
// meanwhile, it sets them to expire again for it) until it ends anew (see
// Options.TTL). Inspect reads a crawl's state (done or not, the
// counters, the retries, who holds leases and until when) without
// joining it. Reset deletes its keys (SCAN, then UNLINK in batches),
// refusing while leases are out unless forced; one cut short leaves the
// crawl marked, and Start refuses it until a Reset is run again. A
// process still on a crawl that was reset, or whose keys expired, gets
// ErrCrawlDeleted from its next call: every script checks first that the
// meta hash is there, so that none makes a half crawl of the keys it
// writes; a new Start makes the crawl anew. Reset finds the keys by SCAN
// over the database (on each master of a Redis Cluster), so that it
// deletes every one, whatever version made it; Inspect reads the retries
// where the sweep reads the keys.
//
// # Seen set and memory
//
// The seen set keeps 64 bits of xxhash per URL: the top bits pick one of
// Options.SeenBuckets sets (of its host's shard, in a crawl of several), the
// rest is an integer member, so each set is an intset, 8 bytes a member,
// while it has at most the server's set-max-intset-entries (512) members. Two
// URLs share the 64 bits with odds of about n²/2⁶⁵ over n URLs (3·10⁻⁸ at a
// million, 3% at a billion); the second would be taken as seen. Measured
// (TestSeenMemory, REDISFRONTIER_MEM=1, redis-server 7.0.15, 1,000,000 URLs
// of 55 bytes, used_memory delta): 10.8 bytes a URL with the default 16384
// buckets, 9.4 with 4096, against about 120 for a set of the URLs. A URL
// queued costs about 73 bytes more until it is taken (its list entry); a
// host, about 72 bytes in the set hosts (100,000 hosts of 26 bytes: 7.2
// MB), besides its own keys.
//
// # Speed
//
// A Frontier is a crawl.AckTaker: an Acks' call of a crawl of one shard
// also leases the next lease of each AckTake in it (and of the Takes of
// the process that wait), so that a crawler's worker pays one round trip
// a URL, not two, and each call carries more URLs.
//
// Leases ahead, on a crawl of one shard: a host at Policy.HostWorkers has
// every slot held, and a slot an Ack frees would be leased again by the
// next call at best, a round trip later, the host idle in between. So a
// process whose Takes wait for work (its last call that leased for them
// had fewer leases than Takes) leases, with each lease that fills a host,
// up to 4 of the host's next new Requests ahead: leases that hold no slot
// of the host. When the lease they follow is acked, the first is handed at
// once to a Take of the process that waits (or kept for the AckTake's
// caller), and the Ack's call promotes it to the slot the acked lease
// leaves and leases more ahead: the slot goes from one request to the
// next with no round trip between, and the host's requests out never
// exceed HostWorkers. Leases ahead are made only for a host at its
// HostWorkers, with no page budget (Policy.MaxPages 0), no delay (no
// Policy.HostDelay, no Crawl-delay) and no Pause in force, so that no
// Take waits for a Request held ahead while the host has room, and none
// starts a request early; a lease of the host that ends with none of its
// own takes one of another lease's (promoted by an Ack, given back by a
// Retry). A lease ahead goes back, first in its host's queue and as if
// never taken (not counted by the budget), when no Take waits for it at
// its lease's Ack, when its lease is retried, when its host is paused (at
// this process's Pause; one kept for an AckTake's caller when a Pause of
// any process comes, by the call that was to promote it, and the AckTake
// hands out nothing; one handed at once to a waiting Take, without asking
// the server, runs as a lease taken just before the Pause would), at Close,
// and when its term ends (Extend renews it with its lease, and
// each Ack that promotes a lease ahead of the same lease renews the rest,
// so a chain handed from holder to holder quicker than the crawler
// extends does not outlive its term). A lease ahead whose term was set
// half a term ago or more, on the process's clock, is never handed to a
// Take but given back: a process stopped longer than the term (SIGSTOP, a
// paused VM) may have lost it to another process meanwhile. The
// process's Counts count it as queued, not leased nor taken; the other
// processes' Counts and Inspect count it as leased, by its holder. A
// host's leases ahead are one process's: another process's Takes for the
// host wait until one of its slots is freed (see docs/performance.md for
// what this does to two processes on one host).
//
// BenchmarkFrontier: one redis-server 7.0.15 with AOF everysec on the same
// 2-core machine as the benchmark, 32 workers, each acking with 10 links by
// AckTake, as the crawler's workers do ("ack+take": Ack then Take) (go
// test -run '^$' -bench BenchmarkFrontier -benchtime 20000x -benchmem
// ./redisfrontier/). Measured on a machine shared with other jobs (load
// about 1.5), the code before AckTake (old, run with its own benchmark,
// whose workers Ack then Take) and this one (new) run in turn in the same
// minutes, 3 runs each (the lowest and highest of each):
//
//	                          URLs/s                          client µs/URL   server µs/URL      allocs/URL
//	                          old → new                       old → new       old → new          old → new
//	one link in ten new       10,200-12,200 → 13,000-13,900   36-42 → 26-29   72-83 → 55-60      40 → 32
//	all ten links new          5,900-6,200  →  6,700-7,100    51-59 → 37-40   145-150 → 119-126  92 → 83
//	one in ten, 2 processes   10,100-12,500 → 15,300-17,100   39-45 → 27-31   76-95 → 56-61      57 → 43
//	one in ten, ack+take      (new code only) 11,200-12,300   38-39           69-80              40
//
// The script calls a URL fell from 0.21 to 0.064 (about 16 URLs a call,
// against 5). The server's CPU a URL swings with the other jobs (at the
// start of the same session, quieter, the old code took 50 to 59 µs; in
// 3 more runs in turn, old 62 to 76, new 49 to 53): compare within a run.
// Of the new code's 50 µs a URL (INFO commandstats and cpu, one run), 40
// are in the scripts, of which 8 in the 7.7 commands a URL they call
// (SADD 1.5, HINCRBY 2, HMGET 1.3, LPOP 1, RPUSH 1, ZADD, HSET, ...), and
// 10 outside them. Ack then Take ("ack+take") costs what it did:
// the numbers the scripts format as integers ('%d', a third of the
// '%.0f' they used) gain less than the noise. Where AckTake gains nothing:
// when the hosts' slots, not the workers, set the pace (a crawl of one
// fast host at the default 8 host workers), an Acks' call already
// leased each slot it freed for a Take waiting, in the same call. Leases
// ahead are for that case (BenchmarkFrontier's hosts, at HostWorkers
// 1000, never fill, and it makes none): a crawl of one local host of
// 10,001 pages (the site of bench/hosts, -hosts 1 -latency 0s) by the
// command at its defaults (-workers 100, -host_workers 8), one process on
// a redis-server without AOF, took 1.29 to 1.34 s against 1.87 to 2.09
// before (3 rounds each, docs/performance.md's table); in 3 other runs
// each, in turn, the server's CPU was 57 to 59 µs a URL against 78 to 82
// (INFO cpu), the process's 0.96 to 1.04 CPU seconds against 1.24 to
// 1.29.
//
// Since: an ack call sends the stats counters of its acks summed once,
// not nine arguments an ack (an ack whose lease is lost takes its own
// back), and the usual ack's six other fields as one: the server ran
// 296,000 instructions a URL on "one link in ten new" against 319,000
// (redis-server under callgrind, 4,000 URLs; docs/performance.md says
// where they go).
//
// Since: a host with room and no delay gives a Take a run of new
// Requests in its turn, popped at once and counted once: its share of the
// leases the call wants among the hosts ready, up to 16 (a call that wants
// 40 leases of 5 hosts takes 8 of each in one pass, not one of each in 8);
// the usual acks of a call count their hosts' leases out down once a
// host, and the links they send are queued once a host; a link two acks
// of one call send goes to the server once (pages fetched together share
// links); and the usual ack reads its lease's host from the record
// without making a table of it. Runs of 16 whatever the hosts ready, the
// first version, cut "one link in ten new" from 289,700 instructions a
// URL to 177,700 (callgrind, 8,000 URLs; the server's CPU 50 to 56 µs a
// URL against 79 to 86 in the same minutes), but a crawl of many hosts
// paid for it: each host's requests at once need connections of their
// own, and bench/hosts.sh's 300 hosts (20 ms a response, -workers 100
// -host_workers 300, one process) took 4.2 to 4.5 s against 3.3 to 3.4,
// with 7,500 to 8,000 connections closed against about 330 and twice the
// crawler's system CPU. With a host's share, the order among hosts is as
// before and so are the crawl's connections (3.4 s, 330 closed), and the
// benchmark, whose 32 workers' calls find 100 hosts ready, gains what
// the acks do: 275,100 instructions a URL against 289,700. Runs pay where
// the hosts ready are fewer than the workers waiting, as in a crawl of a
// few hosts.
//
// What the version before gained, measured then (load 6 to 7, medians):
//
//   - ready and exp keep a member that makes Redis keep them as
//     skiplists (see Layout): with 100 hosts, ZADD took 1.4 µs of the
//     server's time a URL against 4.1 (INFO commandstats), a gain the
//     whole server's CPU does not show above its noise.
//   - The client allocates a quarter less a URL: room made only for the
//     links the seen cache keeps, the seen set's bucket and member sent as
//     numbers, the usual stats keys and the jitter's random numbers made
//     once as script arguments, one channel a waiting Take.
//   - A Join waiting asks the server again when a process says the crawl
//     may be over, or each second, not after every Ack of every process:
//     200 URLs acked while a Join waits (TestJoinAsksWhenOver) cost it 66
//     to 67 reads of the counters before, 2 now; on 8 shards, 71
//     to 82 reads of every shard before, 6 to 18 now. BenchmarkFrontier
//     runs no Join: its figures above do not show this.
//
// Where the server's time went before AckTake (INFO commandstats, one
// link in ten new, Ack then Take): of about 57 µs a URL, 45 in the scripts, of which 10 in the commands
// they call (about 9 a URL: HMGET, ZADD, SADD, LPOP, HINCRBY, HSET,
// RPUSH, ZRANGEBYSCORE, and INFO for the seen cache's run) and the rest in
// Lua: a redis.call costs 1.5 to 2 µs above its command's own time
// (2,000 EVALSHAs of a script of 5 HMGETs of an absent key: 12 µs each,
// against 3 for one that returns at once), and the prelude every script
// runs 7 to 10 µs (redis-benchmark -c 1, EVALSHA of the prelude alone);
// the other 12 µs of a URL are outside the scripts (reading the calls,
// writing the replies and the AOF). BenchmarkScriptCalls splits a call's
// cost from a lease's: about 50 µs a take call and 85 an ack call however
// few their leases, and about 13 µs more a lease in each;
// BenchmarkFrontier made about 0.21 script calls a URL then (some 5 URLs
// a call). Earlier changes, and what they
// gained then:
//
//   - The seen cache (Options.SeenCache): an Ack drops the links this
//     process already sent, which in a crawl's steady state are most of
//     them, without encoding or sending them, where before each link cost
//     a pipelined SISMEMBER (10 server commands a URL): the client's CPU
//     a URL down by a third, the server's by about a tenth.
//   - Lease records as a short text instead of cmsgpack, a lease as one
//     field of the Take's reply, fewer numbers turned into text (each a
//     sprintf in Lua): the rest of the server's gain (all links new gains
//     too, where the cache cannot help).
//   - Fewer redis.call a URL, from about 11 to about 7 (the counters in
//     one HMGET and one HSET, a host's fields in one HSET, its retries
//     counted so that a Take asks for them only when there are some, a new
//     Request popped without asking its queue's length), and a third fewer
//     bytes allocated an Ack: no gain these measurements could tell from
//     their noise.
//
// An Acks' call of a crawl of one shard also leases for the Takes of the
// process that wait (ackTakeScript), so that a host's slot an ack frees
// is leased again with no round trip between: no gain on
// BenchmarkFrontier, 1.29 times as fast on one fast host shared by two
// processes (docs/performance.md). Bigger calls are what pays: with Ack
// then Take, 128 workers and Options.MaxTake 128 took 43 to 45 µs of the
// server's CPU a URL against 74 to 83 with 32 and 16 (0.05 script calls a
// URL against 0.21; 2 runs each in turn), 64 and 64 took 62 to 66; what
// AckTake does for 32 workers. Tried and dropped, for no measurable
// gain: a Take asking for up to 32 leases instead of 16 with 32 workers
// (7 runs each in turn: no difference above the noise), two Acks' calls
// in flight at once, a Take
// waiting for the Acks' call on its way to lease for it rather than making
// a call of its own (0.19 to 0.20 script calls a URL against 0.21, no
// gain in CPU). What is left is spread thin: a perf profile of
// redis-server puts about 70% of its time in Lua, of which about a third
// in the commands the scripts call and the rest in the interpreter
// (argument tables, strings, numbers as text); the replies take about 7%,
// the AOF about 8%. At about 50 µs of server CPU a URL on this machine
// (loaded), one Redis core serves about 20,000 URLs a second, and the
// client needs about 25 µs more on the same 2 cores: 10,000 URLs a second
// is reached when the machine is quiet enough, not when other jobs take a
// core. Leasing ahead of need for any host (a Take asking for more than
// its process's Takes wait for, kept for the next ones) also made bigger
// calls (0.1 script calls a URL, 0.8 of the server's CPU), but a lease
// kept so showed in Counts as leased while no worker had it, held the
// page budget, and could hold a Take back: frontiertest's contract and
// model, which count what was handed out, rightly failed it. The leases
// ahead above are made only where none of these can happen. A
// polite crawl needs far less: a request a second to each of 5,000 hosts
// is 5,000 URLs a second.
//
// The processes of one crawl should run the same version of this package:
// a crawl is resumed by a newer one, but an older one does not read the
// records a newer one writes, nor adds to the sets hosts and owners (the
// keys of hosts it alone queued would outlive the crawl's TTL).
package redisfrontier
