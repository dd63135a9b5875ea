package boltfrontier

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncrawl/crawl"
	bolt "go.etcd.io/bbolt"
)

// The buckets of the state file; see the package doc.
var (
	bucketMeta    = []byte("meta")
	bucketSeenLog = []byte("seenlog")
	bucketQueue   = []byte("queue")
	bucketRetry   = []byte("retry")
	bucketHosts   = []byte("hosts")
	bucketResults = []byte("results")
	allBuckets    = [][]byte{bucketMeta, bucketSeenLog, bucketQueue, bucketRetry, bucketHosts, bucketResults}

	// bucketSeenV1 is version 1's seen set, which Open migrates: a key
	// per URL, 4 bytes of the SHA-256 of its host key then 16 of the
	// SHA-256 of the URL.
	bucketSeenV1 = []byte("seen")
	allBucketsV1 = [][]byte{bucketMeta, bucketSeenV1, bucketQueue, bucketRetry, bucketHosts, bucketResults}
)

// Keys of the meta bucket.
var (
	metaFormat  = []byte("format")  // formatName
	metaVersion = []byte("version") // formatVersion, 8 bytes big-endian
	metaRoots   = []byte("roots")   // the first Start's Policy.Roots, in JSON
	metaScope   = []byte("scope")   // the first Start's Policy.Scope
	metaSeq     = []byte("seq")     // the last queue sequence number given out
	metaDone    = []byte("done")    // Counts.Done
	metaPages   = []byte("pages")   // Counts.Pages (every Request kind but RobotsRequest) of finished or retried Requests
	metaResults = []byte("results") // the last key of the results bucket
)

const (
	formatName    = "asyncrawl boltfrontier"
	formatVersion = 3
)

// fingerprint is the fingerprint of a URL in the seen log: the first 8
// bytes of its SHA-256, big-endian, the same in every process (and the
// bytes 4 to 12 of its version 1 key, so that Open can migrate those).
func fingerprint(url string) uint64 {
	s := sha256.Sum256([]byte(url))
	return binary.BigEndian.Uint64(s[:8])
}

// queueKey is the key of a Request in the queue and retry buckets: its
// host key, a 0 byte (which no URL holds), and its sequence number, so
// that a host's queue is a prefix scan in the order of admission.
func queueKey(host string, seq uint64) []byte {
	k := make([]byte, len(host)+9)
	copy(k, host)
	binary.BigEndian.PutUint64(k[len(host)+1:], seq)
	return k
}

// splitQueueKey returns the host key and sequence number of a queue key.
func splitQueueKey(k []byte) (string, uint64, bool) {
	if len(k) < 9 || k[len(k)-9] != 0 {
		return "", 0, false
	}
	return string(k[:len(k)-9]), binary.BigEndian.Uint64(k[len(k)-8:]), true
}

func u64(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

func getU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// Flags of a stored Request.
const (
	recCrossHost = 1 << iota
	recFirst     // First is set
	recAt        // a retry's time is set
	recWire      // Wire is set: it follows Referrer (files written before Wire have none)
)

// encodeRequest is the stored form of a Request, with a retry's time when
// at is not zero.
func encodeRequest(r *crawl.Request, at time.Time) []byte {
	b := make([]byte, 0, 32+len(r.URL)+len(r.Referrer)+len(r.Wire))
	var flags byte
	if r.CrossHost {
		flags |= recCrossHost
	}
	if !r.First.IsZero() {
		flags |= recFirst
	}
	if !at.IsZero() {
		flags |= recAt
	}
	if r.Wire != "" {
		flags |= recWire
	}
	b = append(b, byte(r.Kind), flags)
	b = binary.AppendVarint(b, int64(r.Depth))
	b = binary.AppendVarint(b, int64(r.Redirects))
	b = binary.AppendVarint(b, int64(r.Tries))
	if !r.First.IsZero() {
		b = binary.AppendVarint(b, r.First.UnixNano())
	}
	if !at.IsZero() {
		b = binary.AppendVarint(b, at.UnixNano())
	}
	b = binary.AppendUvarint(b, uint64(len(r.URL)))
	b = append(b, r.URL...)
	b = binary.AppendUvarint(b, uint64(len(r.Referrer)))
	b = append(b, r.Referrer...)
	if r.Wire != "" {
		b = binary.AppendUvarint(b, uint64(len(r.Wire)))
		b = append(b, r.Wire...)
	}
	return b
}

var errRecord = errors.New("corrupt record")

// decodeRequest decodes what encodeRequest made.
func decodeRequest(b []byte) (r crawl.Request, at time.Time, err error) {
	if len(b) < 2 {
		return r, at, errRecord
	}
	r.Kind = crawl.RequestKind(b[0])
	flags := b[1]
	b = b[2:]
	bad := false
	varint := func() int64 {
		v, n := binary.Varint(b)
		if n <= 0 {
			bad = true
			return 0
		}
		b = b[n:]
		return v
	}
	str := func() string {
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			bad = true
			return ""
		}
		s := string(b[n : n+int(l)])
		b = b[n+int(l):]
		return s
	}
	r.Depth = int(varint())
	r.Redirects = int(varint())
	r.Tries = int(varint())
	r.CrossHost = flags&recCrossHost != 0
	if flags&recFirst != 0 {
		r.First = time.Unix(0, varint())
	}
	if flags&recAt != 0 {
		at = time.Unix(0, varint())
	}
	r.URL = str()
	r.Referrer = str()
	if flags&recWire != 0 {
		r.Wire = str()
	}
	if bad || len(b) != 0 {
		return r, at, errRecord
	}
	return r, at, nil
}

// hostRecord is what the hosts bucket keeps of a host: its robots.txt
// rules once acked, and the tries of its robots.txt so far.
type hostRecord struct {
	rules       *crawl.HostRules
	robotsTries int
	// opened means its robots.txt was acked, with rules or with none
	// (a nil Rules, which allows every URL); a record with rules is
	// always opened.
	opened bool
}

// Flags of a stored host record.
const (
	hostHasRules = 1 << iota
	hostHasBody  // Rules.Robots is not nil
	hostOpened   // robots.txt acked, maybe with nil Rules
)

func encodeHost(h hostRecord) []byte {
	var flags byte
	if h.opened || h.rules != nil {
		flags |= hostOpened
	}
	if h.rules != nil {
		flags |= hostHasRules
		if h.rules.Robots != nil {
			flags |= hostHasBody
		}
	}
	b := []byte{1, flags} // 1: the record's own version
	b = binary.AppendVarint(b, int64(h.robotsTries))
	if h.rules != nil {
		b = binary.AppendVarint(b, int64(h.rules.Delay))
		b = binary.AppendUvarint(b, uint64(len(h.rules.Denied)))
		b = append(b, h.rules.Denied...)
		b = append(b, h.rules.Robots...)
	}
	return b
}

func decodeHost(b []byte) (hostRecord, error) {
	var h hostRecord
	if len(b) < 2 || b[0] != 1 {
		return h, errRecord
	}
	flags := b[1]
	b = b[2:]
	tries, n := binary.Varint(b)
	if n <= 0 {
		return h, errRecord
	}
	b = b[n:]
	h.robotsTries = int(tries)
	// Records written before hostOpened was kept have rules when opened.
	h.opened = flags&(hostOpened|hostHasRules) != 0
	if flags&hostHasRules == 0 {
		return h, nil
	}
	delay, n := binary.Varint(b)
	if n <= 0 {
		return h, errRecord
	}
	b = b[n:]
	l, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) < l {
		return h, errRecord
	}
	h.rules = &crawl.HostRules{Delay: time.Duration(delay), Denied: string(b[n : n+int(l)])}
	if flags&hostHasBody != 0 {
		h.rules.Robots = append([]byte{}, b[n+int(l):]...)
	}
	return h, nil
}

// opKind says what an op does to the state file.
type opKind uint8

const (
	opAdmit opKind = iota // seenlog += fp; queue += req
	opAck                 // queue or retry -= req; results += result
	opRetry               // queue or retry -= req; retry += req at
	opHost                // hosts[host] = val
	opMeta                // meta[name] = val
)

// op is one change to the state file, made in memory first and written
// by the writer.
type op struct {
	kind    opKind
	host    string // the host key of the Request, or of the host record
	seq     uint64
	inRetry bool // the Request's record is in the retry bucket
	page    bool // the stored Pages counts the Request from now on
	req     crawl.Request
	fp      uint64 // an admitted URL's fingerprint
	at      time.Time
	result  *crawl.Result // a copy, owned by the op
	name    []byte
	val     []byte
}

// unit is the ops of one call (a page's ack and its children, a Push),
// which are always committed in one transaction.
type unit struct {
	gen uint64
	t   time.Time // when it was handed to the writer
	ops []op
}

// writer is the one goroutine that writes the state file: it commits
// units in the order they were made, grouped into transactions, so that
// the file always holds a prefix of the changes made in memory, cut
// between units.
type writer struct {
	db       *bolt.DB
	path     string
	every    time.Duration
	maxUnits int // units per transaction
	maxQueue int // units waiting beyond which callers wait for their commit

	committed atomic.Uint64 // the last gen committed

	mu       sync.Mutex
	units    []unit // not yet taken by the loop
	genN     uint64 // the last gen given out
	urgent   bool   // a caller waits: commit without waiting for more
	closing  bool
	err      error         // the first write error; the file is written no more
	broken   chan struct{} // closed when err is set
	commitCh chan struct{} // closed at each commit, then replaced
	kick     chan struct{} // size 1: the loop has something to look at
	exited   chan struct{}

	// Counters as the file has them, owned by the loop.
	seq, done, pages, results uint64
}

func newWriter(db *bolt.DB, path string, o *Options) *writer {
	return &writer{
		db: db, path: path, every: o.CommitEvery, maxUnits: o.CommitMax,
		maxQueue: 2 * o.CommitMax,
		commitCh: make(chan struct{}),
		kick:     make(chan struct{}, 1),
		exited:   make(chan struct{}),
		broken:   make(chan struct{}),
	}
}

// submit hands u to the writer and returns its gen, and whether the writer
// is behind so far that the caller should wait for the commit.
func (w *writer) submit(u unit) (gen uint64, behind bool) {
	if len(u.ops) == 0 {
		return 0, false
	}
	w.mu.Lock()
	w.genN++
	u.gen = w.genN
	u.t = time.Now()
	w.units = append(w.units, u)
	behind = len(w.units) > w.maxQueue
	w.mu.Unlock()
	w.poke()
	return u.gen, behind
}

func (w *writer) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// fail stops the writer with err, unless an error stopped it already: no
// commit follows, and every call of the Frontier returns the error. w.mu
// is held.
func (w *writer) fail(err error) {
	if w.err == nil {
		w.err = err
		close(w.broken)
	}
}

// stop is fail for a caller that does not hold w.mu: the Frontier, when
// the file holds a record it cannot read.
func (w *writer) stop(err error) {
	w.mu.Lock()
	w.fail(err)
	w.mu.Unlock()
	w.poke()
}

// failed returns the write error that stopped the writer, if any.
func (w *writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// wait blocks until gen is committed, or the writer failed, or done is
// closed (ctx); it asks for the commit to come at once.
func (w *writer) wait(done <-chan struct{}, gen uint64) error {
	for {
		if w.committed.Load() >= gen {
			return nil
		}
		w.mu.Lock()
		if w.err != nil {
			err := w.err
			w.mu.Unlock()
			return err
		}
		if w.committed.Load() >= gen {
			w.mu.Unlock()
			return nil
		}
		w.urgent = true
		ch := w.commitCh
		w.mu.Unlock()
		w.poke()
		select {
		case <-ch:
		case <-done:
			return errWaitAbandoned
		case <-w.exited:
			if w.committed.Load() >= gen {
				return nil
			}
			if err := w.failed(); err != nil {
				return err
			}
			return crawl.ErrFrontierClosed
		}
	}
}

var errWaitAbandoned = errors.New("wait abandoned")

// close commits what is left and stops the loop.
func (w *writer) close() error {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	w.poke()
	<-w.exited
	return w.failed()
}

// loop commits units until closed.
func (w *writer) loop() {
	defer close(w.exited)
	var tm *time.Timer
	for {
		w.mu.Lock()
		n, closing, urgent, failed := len(w.units), w.closing, w.urgent, w.err != nil
		var oldest time.Time
		if len(w.units) > 0 {
			oldest = w.units[0].t
		}
		w.mu.Unlock()
		if failed || n == 0 && closing {
			return
		}
		if n == 0 {
			<-w.kick
			continue
		}
		if d := w.every - time.Since(oldest); n < w.maxUnits && !closing && !urgent && d > 0 {
			// Group commit: wait for more, up to the oldest unit's due.
			if tm == nil {
				tm = time.NewTimer(d)
			} else {
				tm.Reset(d)
			}
			select {
			case <-tm.C:
			case <-w.kick:
				if !tm.Stop() {
					select {
					case <-tm.C:
					default:
					}
				}
			}
			continue
		}
		w.mu.Lock()
		k := min(len(w.units), w.maxUnits)
		batch := w.units[:k:k]
		w.units = w.units[k:]
		if len(w.units) == 0 {
			w.units = nil
			w.urgent = false
		}
		w.mu.Unlock()
		err := w.commit(batch)
		w.mu.Lock()
		if err != nil {
			w.fail(fmt.Errorf("boltfrontier: write %s: %w", w.path, err))
		} else {
			w.committed.Store(batch[len(batch)-1].gen)
		}
		close(w.commitCh)
		w.commitCh = make(chan struct{})
		w.mu.Unlock()
	}
}

// commit writes the units in one transaction.
func (w *writer) commit(batch []unit) error {
	seq, done, pages, results := w.seq, w.done, w.pages, w.results
	err := w.db.Update(func(tx *bolt.Tx) error {
		meta, seen, queue := tx.Bucket(bucketMeta), tx.Bucket(bucketSeenLog), tx.Bucket(bucketQueue)
		retry, hosts, res := tx.Bucket(bucketRetry), tx.Bucket(bucketHosts), tx.Bucket(bucketResults)
		var fps []byte // the fingerprints admitted, one record of the log
		for _, u := range batch {
			for i := range u.ops {
				o := &u.ops[i]
				var err error
				switch o.kind {
				case opAdmit:
					fps = binary.BigEndian.AppendUint64(fps, o.fp)
					err = put(queue, queueKey(o.host, o.seq), encodeRequest(&o.req, time.Time{}))
					seq = max(seq, o.seq)
				case opAck:
					from := queue
					if o.inRetry {
						from = retry
					}
					err = from.Delete(queueKey(o.host, o.seq))
					done++
					if o.page {
						pages++
					}
					if err == nil && o.result != nil {
						var b []byte
						if b, err = o.result.MarshalBinary(); err == nil {
							results++
							err = put(res, u64(results), b)
						}
					}
				case opRetry:
					if !o.inRetry {
						err = queue.Delete(queueKey(o.host, o.seq))
					}
					if err == nil {
						err = put(retry, queueKey(o.host, o.seq), encodeRequest(&o.req, o.at))
					}
					if o.page {
						pages++
					}
				case opHost:
					err = put(hosts, []byte(o.host), o.val)
				case opMeta:
					err = put(meta, o.name, o.val)
				}
				if err != nil {
					return err
				}
			}
		}
		if len(fps) > 0 {
			if err := appendSeen(seen, fps); err != nil {
				return err
			}
		}
		for _, kv := range []struct {
			k []byte
			v uint64
		}{{metaSeq, seq}, {metaDone, done}, {metaPages, pages}, {metaResults, results}} {
			if err := put(meta, kv.k, u64(kv.v)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		w.seq, w.done, w.pages, w.results = seq, done, pages, results
	}
	return err
}

// appendSeen appends a record of fingerprints (8 bytes each, big-endian)
// to the seen log, under the log's next number.
func appendSeen(log *bolt.Bucket, fps []byte) error {
	n, err := log.NextSequence()
	if err != nil {
		return err
	}
	// Keys only ever grow: pages split full, not half full.
	log.FillPercent = 1
	return put(log, u64(n), fps)
}
