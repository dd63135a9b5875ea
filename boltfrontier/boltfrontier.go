// Package boltfrontier is a crawl.Frontier and crawl.ResultStore that
// keeps a crawl in one bbolt file, so that a crawl killed at any moment is
// resumed by opening the file again and giving the Frontier to a new Run
// with crawl.WithFrontier:
//
//	f, err := boltfrontier.Open("crawl.db", nil)
//	if err != nil { ... }
//	defer f.Close()
//	c, err := crawl.New(crawl.WithFrontier(f), ...)
//
// # Layout
//
// The file has six buckets:
//
//	meta     "format", "version" (3), "roots" (JSON) and "scope": the
//	         first Start's Policy.Roots and Policy.Scope, and the counters
//	         "seq" (the last queue number), "done", "pages", "results"
//	seenlog  8-byte big-endian number → the fingerprints of the URLs
//	         one transaction admitted, 8 bytes each, concatenated. A
//	         URL's fingerprint is the first 8 bytes of its SHA-256,
//	         big-endian. The log is only appended to, in the transaction
//	         that queues the URLs, so a commit adds one record instead
//	         of a key per URL at random places in a B+tree; Open reads it
//	         whole into the seen set in memory. Two URLs share a
//	         fingerprint with odds of about n²/2⁶⁵ for n URLs (3·10⁻⁸ at
//	         a million, 3·10⁻⁴ at a hundred million, 3% at a billion):
//	         the second is taken as seen and never crawled.
//	queue    host key, 0, queue number (8 bytes big-endian) → Request:
//	         the Requests never taken or taken and not finished, so a
//	         host's queue is a prefix scan in order of admission. A
//	         Request is stored with every field, Wire included (a record
//	         written before Wire existed has none, and reads as Wire "")
//	retry    same key → Request and the time it may be retried: the
//	         Requests put back by Retry
//	hosts    host key → the rules of its robots.txt once acked, and the
//	         tries of its robots.txt
//	results  8-byte big-endian number → crawl.Result.MarshalBinary, one
//	         per Request acked with a Result, in order of ack
//
// Every value but meta's "format" and "version" ends with 4 bytes, the
// CRC-32C (little-endian) of its key and the rest of the value: bbolt
// checksums its meta pages only, so a byte changed within a record (a
// URL's digit, a counter) would be read as it is. Open reads every record
// and refuses a file with one whose checksum fails, and each read of a
// record checks it again.
//
// A Take writes nothing: the Request stays in queue or retry until its
// Ack deletes it, and the lease lives in memory only, so the Requests
// leased when the process died are simply queued again on Open. So do
// leases expired and taken back, and pauses: they are not written.
//
// # Memory
//
// The queue is on disk. The seen set is in memory as well as on disk:
// a 64-bit fingerprint per URL ever admitted, in open-addressing tables
// of 8/0.75 to 8/0.5 bytes per URL as they fill (14 MB at a million URLs,
// 108 MB at ten million), mapped outside the Go heap on Linux, as
// crawl.MemoryFrontier's are, so that they do not raise the heap size at
// which the collector runs; they are given back at Close. Open reads the
// seen log into them: Open of a file of 1,000,000 URLs queued on 1,000
// hosts (259 MB) takes 0.4 to 0.6 s, about half of it reading the log
// and the queue, plus 0.1 to 0.2 s to check its pages first (see
// Opening). Per host the Frontier keeps a few counters and times, its
// robots.txt rules, at most Options.Prefetch of its next queued
// Requests, and the Requests waiting to be retried (those are few: the
// crawler retries a URL a few times and then gives up). With 1,000,000
// URLs queued on 1,000 hosts the Go heap in use is about 16 MiB (12 MiB
// at 100,000), where a crawl.MemoryFrontier holds 243 MiB; the file's
// pages the kernel maps in are counted in the process's RSS too, as page
// cache the kernel may drop.
//
// BenchmarkCrawlSeen in the crawl package, with CRAWL_SCALE_FRONTIER=bolt
// (one host, 50 links a page, 1,000,000 URLs seen), peaks at 72 to 97 MB
// of RSS, with 36 to 40 MB anonymous and 24 MB of the file resident at
// the end, at 2,500 to 4,200 pages/s (168 MB and 3,450 pages/s at
// 3,000,000 URLs). With the seen set a B+tree in the file (format
// version 1), whose commits copied most of the tree's leaves, it peaked
// at 500 MB, at 900 to 1,050 pages/s.
//
// # Writes and crash guarantees
//
// Every change is made in memory first and then written by one writer
// goroutine, which commits in one bbolt transaction all the changes made
// over Options.CommitEvery, at most about Options.CommitMax of them. The
// changes of one call (an Ack, its Result and the Links it admits; a
// Push) are never split between transactions, and transactions are
// committed in the order their changes were made, so the file always holds
// the crawl as it was at some moment between two calls.
//
// Push and Start return once their changes are committed. Ack and Retry
// return before (unless Options.SyncAck): their changes are in memory, so
// the Frontier behaves as if they were committed, and a crash may cost
// those not committed yet. What a crash of the process (kill -9, a panic,
// an OOM kill) costs is therefore:
//
//   - the URLs leased at the time, and the URLs whose Ack was not yet
//     committed, are fetched again after Open (a robots.txt too). The
//     calls not committed are those of the transaction being written (at
//     most CommitMax) and those waiting for it: once more than
//     2×CommitMax wait, Ack and Retry wait for their own commit. So a
//     crash refetches at most the leases out plus 3×CommitMax URLs, plus
//     one per goroutine in Ack at the time (with SyncAck: the leases
//     out);
//   - a Retry not committed is lost with its tries: its URL counts as
//     leased at the crash;
//   - no URL is lost: a URL admitted by an Ack is committed with that
//     Ack, so if the Ack is lost its URL is fetched again and finds its
//     links again; a URL admitted by Push is committed before Push
//     returns;
//   - no URL acked and committed is fetched again, and its Result is in
//     Results exactly once;
//   - host delays and pauses start afresh.
//
// With the default Options.NoSync false, each commit ends with two
// fdatasyncs (pages, then the meta page), so a power loss or a kernel
// crash costs the same as a crash of the process, on a disk that honours
// its flushes. With NoSync true, commits are not flushed: a crash of the
// process still costs no more, since the written pages are in the
// kernel's cache, but a power loss or a kernel crash may cost any part of
// the crawl or leave the file corrupt. Open refuses a file whose pages
// or records are damaged (see Opening); a record whose checksum holds
// but which does not decode (written so by a bug) shows as an error of
// the call that reads it, which stops the Frontier: every later call
// returns that error, never a crash or a hang of the program.
//
// # Opening
//
// Open creates the file when there is none (in a temporary file beside
// it, .NAME.new-RANDOM, linked into place once complete, so that a crash
// while creating leaves no state file half made; the temporary file such
// a crash leaves is removed by the next Open that creates the file, once
// it is a minute old). A file of an earlier format version is migrated to version 3 in
// one transaction, a crash meanwhile leaving it as it was: version 2's
// records get their checksums; version 1's seen set, a bucket "seen" of
// 20-byte keys (4 bytes of the SHA-256 of the host key, then 16 of the
// URL's), becomes the seen log (bytes 4 to 12 of each key are the URL's
// fingerprint) and the bucket is deleted. A file of version 3 is not
// read by an earlier version of this package. It
// refuses a file that is empty, truncated, corrupt, of another format
// version or not this package's (a bbolt file without its meta, or not a
// bbolt file at all) with an error naming the file, after reading it
// only: the file is left byte for byte as it was. A file already open,
// in this process or another, is refused after Options.LockTimeout.
//
// Before bbolt opens the file for writing (when it walks every B+tree in
// a goroutine of its own, where a damaged page would crash the program),
// Open reads every page in use itself, bounds checked, and refuses the
// file with an error naming it and the damage: both meta pages (magic,
// version, checksum, page size, root and freelist page within the file;
// a meta page that fails its checksum is refused, though bbolt would fall
// back to the other, a commit older), the freelist page if the file has
// one (its page ids within the file, none of them in use), and every page
// of every bucket's tree (page ids within the file, each page reached
// once, its type, its elements within it, keys in order within each page
// and between a branch and its children, nested buckets). Then, opened,
// it reads every record and refuses the file if one fails its checksum,
// naming the bucket and the key.
package boltfrontier

import (
	"bytes"
	"container/heap"
	"container/list"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/internal/fpset"
	"github.com/asyncrawl/crawl/internal/offheap"
	"github.com/asyncrawl/crawl/internal/sched"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Options are the settings of a Frontier; the zero value of each field
// is its default.
type Options struct {
	// LockTimeout is how long Open waits for the file's lock when it is
	// open elsewhere (another process or another Open); 0 means 2s.
	LockTimeout time.Duration
	// CommitEvery is the longest a change waits for the changes grouped
	// with it before the writer commits them; 0 means 20ms. A caller that
	// waits for its commit (Push, Start, Close) has it at once.
	CommitEvery time.Duration
	// CommitMax is the most calls whose changes one transaction holds
	// (an Ack with its Result and the Links it admits is one, as is a
	// Retry or a Push); the writer commits as soon as that many wait. 0
	// means 256.
	CommitMax int
	// NoSync skips the fdatasyncs of each commit: faster, as safe against
	// a crash of the process, not safe against power loss (see the
	// package doc). The default is false.
	NoSync bool
	// SyncAck makes Ack wait for its commit, so that a crash costs only
	// the URLs leased; the default, false, lets it return at once.
	SyncAck bool
	// Prefetch is how many of a host's next queued Requests are held in
	// memory; 0 means 16, and more than 64 means 64.
	Prefetch int
}

func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.LockTimeout <= 0 {
		v.LockTimeout = 2 * time.Second
	}
	if v.CommitEvery <= 0 {
		v.CommitEvery = 20 * time.Millisecond
	}
	if v.CommitMax <= 0 {
		v.CommitMax = 256
	}
	if v.Prefetch <= 0 {
		v.Prefetch = 16
	}
	v.Prefetch = min(v.Prefetch, 64)
	return v
}

// Frontier is a crawl.Frontier and crawl.ResultStore kept in a bbolt
// file; see the package doc. Every method is safe for concurrent use. If
// a commit fails (a full disk), the file is written no more and every
// call, blocked Takes and Joins included, returns that error naming the
// file; what was committed before stays, as after a crash.
type Frontier struct {
	path string
	opts Options
	db   *bolt.DB
	w    *writer

	mu       sync.Mutex
	policy   crawl.Policy
	identity bool // roots and scope recorded
	roots    []string
	scope    string
	closed   bool
	closedCh chan struct{}
	hosts    map[string]*host
	sched    sched.Hosts[*host]
	// parked are the hosts whose new requests only the page budget
	// holds back, brought back by unpark when an Unsent ack gives a page
	// back.
	parked      list.List
	waiters     []*popper
	armed       time.Time
	leases      map[string]*leaseRec
	expiries    expiryHeap
	leasePrefix string
	leaseSeq    uint64
	seq         uint64 // the last queue number given out
	pages       int
	done        int
	unfinished  int
	fresh       int
	pending     int
	idle        chan struct{}
	idleClosed  bool
	seen        fpset.Set       // the fingerprints admitted, committed or not, as placed
	tables      *offheap.Tables // seen's tables
	placeKey    uint64          // drawn at Open: see place
	behind      uint64          // the last gen submitted with the writer behind
}

var _ crawl.ResultStore = (*Frontier)(nil)

// ErrNotState means the file is not a state file this package can use:
// not a bbolt file, a bbolt file of something else, empty, truncated,
// corrupt, or of another format version. Open's error wraps it.
var ErrNotState = errors.New("not a usable boltfrontier state file")

// ErrLocked means the file is open elsewhere; Open's error wraps it.
var ErrLocked = errors.New("state file in use")

// Open opens the state file at path, creating it if there is none, and
// returns its Frontier, with the crawl it holds queued as it was (leases
// out when it was last used queued again). opts nil means the defaults.
// The Frontier is the caller's to Close. See the package doc for what
// Open refuses.
func Open(path string, opts *Options) (*Frontier, error) {
	o := opts.withDefaults()
	_, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := create(path, o.LockTimeout); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("boltfrontier: open %s: %w", path, err)
	default:
		if err := validate(path, o.LockTimeout); err != nil {
			return nil, err
		}
	}
	// Opened for writing, bbolt reads every page to rebuild its freelist:
	// guarded as the checks are.
	var db *bolt.DB
	err = guard(func() error {
		var err error
		db, err = bolt.Open(path, 0o600, boltOptions(&o, false))
		return err
	})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("boltfrontier: open %s: %w (locked for more than %v)", path, ErrLocked, o.LockTimeout)
		}
		return nil, fmt.Errorf("boltfrontier: open %s: %w", path, err)
	}
	f := &Frontier{
		path: path, opts: o, db: db,
		closedCh: make(chan struct{}),
		hosts:    make(map[string]*host),
		leases:   make(map[string]*leaseRec),
		idle:     make(chan struct{}),
		tables:   &offheap.Tables{},
		policy:   crawl.Policy{HostWorkers: crawl.DefaultHostWorkers},
	}
	f.seen = fpset.New(f.tables)
	runtime.AddCleanup(f, (*offheap.Tables).Release, f.tables)
	var nonce [4]byte
	rand.Read(nonce[:])
	f.leasePrefix = hex.EncodeToString(nonce[:]) + "-"
	var key [8]byte
	rand.Read(key[:])
	f.placeKey = binary.LittleEndian.Uint64(key[:])
	f.w = newWriter(db, path, &o)
	if err := guard(func() error { return migrate(db) }); err != nil {
		db.Close()
		f.tables.Release()
		return nil, fmt.Errorf("boltfrontier: %s: migrate from an earlier format version: %w", path, err)
	}
	if err := guard(func() error { return db.View(checkRecords) }); err != nil {
		db.Close()
		f.tables.Release()
		return nil, fmt.Errorf("boltfrontier: %s: %w: %v", path, ErrNotState, err)
	}
	if err := guard(func() error { return f.load() }); err != nil {
		db.Close()
		f.tables.Release()
		return nil, fmt.Errorf("boltfrontier: %s: %w: %v", path, ErrNotState, err)
	}
	f.update(time.Now())
	go f.w.loop()
	return f, nil
}

func boltOptions(o *Options, readOnly bool) *bolt.Options {
	return &bolt.Options{
		Timeout:  o.LockTimeout,
		ReadOnly: readOnly,
		NoSync:   o.NoSync,
		// The freelist is rebuilt on open instead of written at each
		// commit: fewer pages per commit.
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	}
}

// guard runs fn, turning a panic or a fault on the mapped file (a page
// the file does not have) into an error: a corrupt file must not crash
// the program.
func guard(fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt: %v", p)
		}
	}()
	return fn()
}

// create makes a new state file at path: in a temporary file beside it,
// linked into place only once complete. If another Open made it
// meanwhile, it opens that one, waiting up to lock for its lock. The
// temporary files of creates a crash cut short (a minute old: a create
// takes milliseconds) are removed first.
func create(path string, lock time.Duration) error {
	var nonce [6]byte
	rand.Read(nonce[:])
	dir, stem := filepath.Dir(path), "."+filepath.Base(path)+".new-"
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), stem) {
				continue
			}
			if st, err := e.Info(); err == nil && time.Since(st.ModTime()) > time.Minute {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	tmp := filepath.Join(dir, stem+hex.EncodeToString(nonce[:]))
	defer os.Remove(tmp)
	db, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("boltfrontier: create %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if err := meta.Put(metaFormat, []byte(formatName)); err != nil {
			return err
		}
		return meta.Put(metaVersion, u64(formatVersion))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp, path)
		if errors.Is(err, fs.ErrExist) {
			// Made by someone else meanwhile: open theirs.
			return validate(path, lock)
		}
	}
	if err != nil {
		return fmt.Errorf("boltfrontier: create %s: %w", path, err)
	}
	return nil
}

// validate checks, reading only, that the file at path is a state file
// of this format version.
func validate(path string, timeout time.Duration) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("boltfrontier: open %s: %w", path, err)
	}
	if st.Size() == 0 {
		return fmt.Errorf("boltfrontier: %s: %w: empty file", path, ErrNotState)
	}
	wait := timeout
	if wait <= 0 {
		wait = time.Second // bbolt's 0 waits for ever
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: wait, ReadOnly: true})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return fmt.Errorf("boltfrontier: open %s: %w (locked for more than %v)", path, ErrLocked, wait)
		}
		return fmt.Errorf("boltfrontier: %s: %w: %v", path, ErrNotState, err)
	}
	defer db.Close()
	// bbolt opened for writing walks every tree in a goroutine of its own,
	// where a damaged page would crash the program: check them first,
	// while the lock keeps writers out.
	file, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("boltfrontier: open %s: %w", path, err)
	}
	if st, err = file.Stat(); err == nil { // its size now, locked
		err = checkPages(file, st.Size())
	}
	file.Close()
	if err != nil {
		return fmt.Errorf("boltfrontier: %s: %w: %v", path, ErrNotState, err)
	}
	err = guard(func() error {
		return db.View(func(tx *bolt.Tx) error {
			if tx.Size() > st.Size() {
				return fmt.Errorf("truncated: %d bytes, its pages need %d", st.Size(), tx.Size())
			}
			meta := tx.Bucket(bucketMeta)
			if meta == nil || string(meta.Get(metaFormat)) != formatName {
				return errors.New("a bbolt file without boltfrontier's meta")
			}
			buckets := allBuckets
			switch v := getU64(meta.Get(metaVersion)); v {
			case formatVersion, 2:
			case 1:
				buckets = allBucketsV1 // migrated by Open
			default:
				return fmt.Errorf("format version %d, this package reads versions 1 to %d", v, formatVersion)
			}
			for _, b := range buckets {
				if tx.Bucket(b) == nil {
					return fmt.Errorf("bucket %q missing", b)
				}
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("boltfrontier: %s: %w: %v", path, ErrNotState, err)
	}
	return nil
}

// migrate turns a file of format version 1 or 2 into version 3, in one
// transaction. Version 1 to 2: each key of the seen bucket holds the
// first 8 bytes of its URL's SHA-256 at bytes 4 to 12, which are its
// fingerprint; they are written to the seen log and the seen bucket is
// deleted. Version 2 to 3: every record gets its checksum (seal.go). A
// file of version 3 is left as it is.
func migrate(db *bolt.DB) error {
	var v uint64
	db.View(func(tx *bolt.Tx) error {
		v = getU64(tx.Bucket(bucketMeta).Get(metaVersion))
		return nil
	})
	if v == formatVersion {
		return nil // and nothing written: an Update would commit a new meta page
	}
	return db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if v == 1 {
			if err := seenLogFromV1(tx); err != nil {
				return err
			}
		}
		if err := sealAll(tx); err != nil {
			return err
		}
		return meta.Put(metaVersion, u64(formatVersion))
	})
}

// seenLogFromV1 makes the seen log of version 2 from the seen bucket of
// version 1, and deletes that.
func seenLogFromV1(tx *bolt.Tx) error {
	old := tx.Bucket(bucketSeenV1)
	if old == nil {
		return errors.New("seen bucket missing")
	}
	log, err := tx.CreateBucket(bucketSeenLog)
	if err != nil {
		return err
	}
	log.FillPercent = 1
	const perRecord = 1 << 13 // 64 KB records
	fps := make([]byte, 0, 8*perRecord)
	flush := func() error {
		n, err := log.NextSequence()
		if err != nil {
			return err
		}
		err = log.Put(u64(n), bytes.Clone(fps)) // sealed by sealAll
		fps = fps[:0]
		return err
	}
	c := old.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) != 20 {
			return fmt.Errorf("seen key %x: %d bytes, want 20", k, len(k))
		}
		fps = append(fps, k[4:12]...)
		if len(fps) == cap(fps) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if len(fps) > 0 {
		if err := flush(); err != nil {
			return err
		}
	}
	return tx.DeleteBucket(bucketSeenV1)
}

// place returns where the seen set keeps fp: fp mixed with a key drawn at
// Open, one to one, so that a site, which can compute the fingerprints of
// its URLs, cannot choose URLs that crowd one table of the set.
func (f *Frontier) place(fp uint64) uint64 {
	x := (fp ^ f.placeKey) * 0x9e3779b97f4a7c15
	return x ^ x>>29
}

// load reads into memory what the schedule keeps of the file: the seen
// set, the counters, the number of queued Requests of each host, the
// retries, the rules of the hosts with work.
func (f *Frontier) load() error {
	return f.db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return errors.New("meta bucket missing")
		}
		b, err := get(meta, bucketMeta, metaRoots)
		if err != nil {
			return err
		}
		if b != nil {
			roots, err := splitRoots(b)
			if err != nil {
				return fmt.Errorf("roots: %w", err)
			}
			scope, err := get(meta, bucketMeta, metaScope)
			if err != nil {
				return err
			}
			f.identity = true
			f.roots = roots
			f.scope = string(scope)
		}
		err = tx.Bucket(bucketSeenLog).ForEach(func(k, v []byte) error {
			v, err := unseal(bucketSeenLog, k, v)
			if err != nil {
				return err
			}
			if len(v)%8 != 0 {
				return fmt.Errorf("seen log record %x: %d bytes, not a multiple of 8", k, len(v))
			}
			for ; len(v) > 0; v = v[8:] {
				f.seen.Add(f.place(binary.BigEndian.Uint64(v)))
			}
			return nil
		})
		if err != nil {
			return err
		}
		w := f.w
		var counters [4]uint64
		for i, k := range [][]byte{metaSeq, metaDone, metaPages, metaResults} {
			v, err := get(meta, bucketMeta, k)
			if err != nil {
				return err
			}
			counters[i] = getU64(v)
		}
		w.seq, w.done, w.pages, w.results = counters[0], counters[1], counters[2], counters[3]
		f.seq, f.done, f.pages = w.seq, int(w.done), int(w.pages)
		hostOf := func(key string) *host {
			h := f.hosts[key]
			if h == nil {
				h = &host{key: key, delay: f.policy.HostDelay}
				f.hosts[key] = h
			}
			return h
		}
		c := tx.Bucket(bucketQueue).Cursor()
		var h *host
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			key, _, ok := splitQueueKey(k)
			if !ok {
				return fmt.Errorf("queue key %q", k)
			}
			if h == nil || h.key != key {
				h = hostOf(key)
			}
			h.spill++
			f.fresh++
		}
		err = tx.Bucket(bucketRetry).ForEach(func(k, v []byte) error {
			v, err := unseal(bucketRetry, k, v)
			if err != nil {
				return err
			}
			key, seq, ok := splitQueueKey(k)
			r, at, err := decodeRequest(v)
			if !ok || err != nil {
				return fmt.Errorf("retry record %q", k)
			}
			h := hostOf(key)
			h.later = append(h.later, entry{Request: r, seq: seq, at: at, taken: true, retried: true})
			return nil
		})
		if err != nil {
			return err
		}
		hosts := tx.Bucket(bucketHosts)
		for _, h := range f.hosts {
			h.later.init()
			f.pending += h.fresh() + len(h.later)
			b, err := get(hosts, bucketHosts, []byte(h.key))
			if err != nil {
				return err
			}
			if b != nil {
				rec, err := decodeHost(b)
				if err != nil {
					return fmt.Errorf("host %s: %w", h.key, err)
				}
				h.rules, h.robotsTries, h.opened = rec.rules, rec.robotsTries, rec.opened
				if h.rules != nil {
					h.delay = max(h.delay, h.rules.Delay)
				}
			}
		}
		f.unfinished = f.pending
		return nil
	})
}

// Close commits what is not committed yet and closes the file. Blocked
// Takes return crawl.ErrFrontierClosed, and so does every later call;
// leases still out are queued again when the file is opened anew. It
// returns the error of the last commit or of closing the file, if any.
// It is safe for concurrent use.
func (f *Frontier) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return crawl.ErrFrontierClosed
	}
	f.closed = true
	close(f.closedCh)
	// No call touches the seen set once closed is set.
	f.tables.Release()
	f.seen = fpset.Set{}
	f.mu.Unlock()
	err := f.w.close()
	if cerr := f.db.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("boltfrontier: close %s: %w", f.path, cerr)
	}
	return err
}

// Results calls yield with each Result stored, in the order of their
// acks, until yield returns false or ctx is done. It sees the Results
// committed when it reads them, a batch at a time, and holds no lock
// while yield runs: yield may call the Frontier. It is safe for
// concurrent use.
func (f *Frontier) Results(ctx context.Context, yield func(crawl.Result) bool) error {
	f.mu.Lock()
	err := f.usable()
	f.mu.Unlock()
	if err != nil {
		return err
	}
	// What was acked before the call is in the file: commit it.
	if err := f.w.wait(ctx.Done(), f.w.gen()); err != nil {
		if errors.Is(err, errWaitAbandoned) {
			return ctx.Err()
		}
		return err
	}
	var after []byte
	batch := make([]crawl.Result, 0, 256)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch = batch[:0]
		err := f.db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketResults).Cursor()
			k, v := c.First()
			if after != nil {
				if k, v = c.Seek(after); k != nil && string(k) == string(after) {
					k, v = c.Next()
				}
			}
			for ; k != nil && len(batch) < cap(batch); k, v = c.Next() {
				v, err := unseal(bucketResults, k, v)
				if err != nil {
					return fmt.Errorf("boltfrontier: %s: result: %w", f.path, err)
				}
				var r crawl.Result
				if err := r.UnmarshalBinary(v); err != nil {
					return fmt.Errorf("boltfrontier: %s: result %x: %w", f.path, k, err)
				}
				batch = append(batch, r)
				after = append(after[:0], k...)
			}
			return nil
		})
		if errors.Is(err, berrors.ErrDatabaseNotOpen) {
			return crawl.ErrFrontierClosed
		}
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		for _, r := range batch {
			if !yield(r) {
				return nil
			}
		}
	}
}

// gen returns the last gen given out.
func (w *writer) gen() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.genN
}

func (rh *retryHeap) init() { heap.Init(rh) }
