package redisfrontier

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/asyncrawl/crawl"
	"github.com/cespare/xxhash/v2"
)

// encodeRequest returns the form a Request is queued in: seven numbers
// (kind, depth, redirects, cross-host, tries, first attempt in Unix
// nanoseconds or 0, length of the referrer) separated by spaces, a space,
// the referrer, then the URL. A Request with a Wire has it at the end, and
// its form starts with "w", the length of the Wire and a space: the forms
// without it are those of the versions before Wire, which still decode.
func encodeRequest(r *crawl.Request) string {
	b := make([]byte, 0, 32+len(r.Referrer)+len(r.URL)+len(r.Wire))
	if r.Wire != "" {
		b = append(b, 'w')
		b = strconv.AppendInt(b, int64(len(r.Wire)), 10)
		b = append(b, ' ')
	}
	first := int64(0)
	if !r.First.IsZero() {
		first = r.First.UnixNano()
	}
	cross := 0
	if r.CrossHost {
		cross = 1
	}
	for _, n := range []int64{int64(r.Kind), int64(r.Depth), int64(r.Redirects), int64(cross), int64(r.Tries), first, int64(len(r.Referrer))} {
		b = strconv.AppendInt(b, n, 10)
		b = append(b, ' ')
	}
	b = append(b, r.Referrer...)
	b = append(b, r.URL...)
	b = append(b, r.Wire...)
	return string(b)
}

// errCorrupt is what decoding finds in a value it did not write.
var errCorrupt = errors.New("redisfrontier: corrupt value in Redis")

// decodeRequest reverses encodeRequest.
func decodeRequest(s string) (crawl.Request, error) {
	wire := ""
	if rest, ok := strings.CutPrefix(s, "w"); ok {
		f, rest, ok := strings.Cut(rest, " ")
		n, err := strconv.Atoi(f)
		if !ok || err != nil || n <= 0 || n > len(rest) {
			return crawl.Request{}, errCorrupt
		}
		s, wire = rest[:len(rest)-n], rest[len(rest)-n:]
	}
	var n [7]int64
	for i := range n {
		f, rest, ok := strings.Cut(s, " ")
		if !ok {
			return crawl.Request{}, errCorrupt
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return crawl.Request{}, errCorrupt
		}
		n[i], s = v, rest
	}
	if n[6] < 0 || n[6] > int64(len(s)) {
		return crawl.Request{}, errCorrupt
	}
	r := crawl.Request{
		Kind:      crawl.RequestKind(n[0]),
		Depth:     int(n[1]),
		Redirects: int(n[2]),
		CrossHost: n[3] == 1,
		Tries:     int(n[4]),
		Referrer:  s[:n[6]],
		URL:       s[n[6]:],
		Wire:      wire,
	}
	if n[5] != 0 {
		r.First = time.Unix(0, n[5])
	}
	return r, nil
}

// rulesJSON is the stored form of a host's rules.
type rulesJSON struct {
	Robots []byte `json:",omitempty"`
	Denied string `json:",omitempty"`
	Delay  time.Duration
}

// encodeRules returns the stored form of rules; "" for nil.
func encodeRules(r *crawl.HostRules) (string, error) {
	if r == nil {
		return "", nil
	}
	b, err := json.Marshal(rulesJSON{Robots: r.Robots, Denied: r.Denied, Delay: r.Delay})
	return string(b), err
}

// decodeRules reverses encodeRules.
func decodeRules(s string) (*crawl.HostRules, error) {
	if s == "" {
		return nil, nil
	}
	var j rulesJSON
	if err := json.Unmarshal([]byte(s), &j); err != nil {
		return nil, errCorrupt
	}
	return &crawl.HostRules{Robots: j.Robots, Denied: j.Denied, Delay: j.Delay}, nil
}

// admission is a Request as the scripts admit it: its seen bucket, its
// fingerprint within the bucket, its host key and its encoding.
//
// The seen set keeps a 64-bit xxhash of each URL: its top bits choose one
// of 2^bits sets, and the rest is the member, an integer below 2^(64-bits),
// so that each set is an intset (8 bytes a URL) while it has at most
// set-max-intset-entries members.
type admission struct {
	bucket, member uint64 // sent as numbers: go-redis writes them without a string each
	host, enc      string
	fp             uint64 // the whole fingerprint
}

// fingerprint returns the 64-bit fingerprint the seen set keeps of url.
func fingerprint(url string) uint64 { return xxhash.Sum64String(url) }

// admissions returns the admissions of reqs.
func admissions(reqs []crawl.Request, bits uint) []admission {
	out := make([]admission, len(reqs))
	for i := range reqs {
		out[i] = admit(&reqs[i], fingerprint(reqs[i].URL), bits)
	}
	return out
}

// admit returns the admission of r, whose fingerprint is h.
func admit(r *crawl.Request, h uint64, bits uint) admission {
	return admission{
		bucket: h >> (64 - bits),
		member: h & (1<<(64-bits) - 1),
		host:   crawl.HostKey(r.URL),
		enc:    encodeRequest(r),
		fp:     h,
	}
}

// appendAdmissions appends the script arguments that admit as: their
// count, then the four fields of each.
func appendAdmissions(args []any, as []admission) []any {
	args = append(args, len(as))
	for _, a := range as {
		args = append(args, a.bucket, a.member, a.host, a.enc)
	}
	return args
}

// fields reads a script's framed reply: length, colon, field, again.
type fields struct {
	s   string
	err error
}

// next returns the next field, "" once the reply is read or broken.
func (f *fields) next() string {
	if f.err != nil {
		return ""
	}
	i := strings.IndexByte(f.s, ':')
	if i < 0 {
		f.err = errCorrupt
		return ""
	}
	n, err := strconv.Atoi(f.s[:i])
	if err != nil || n < 0 || i+1+n > len(f.s) {
		f.err = errCorrupt
		return ""
	}
	v := f.s[i+1 : i+1+n]
	f.s = f.s[i+1+n:]
	return v
}

// int returns the next field as a number.
func (f *fields) int() int64 {
	s := f.next()
	if f.err != nil {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f.err = errCorrupt
	}
	return n
}
