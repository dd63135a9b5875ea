package warc

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/asyncrawl/crawl/internal/extsort"
)

// indexLine is a line of the CDXJ index made before its record is
// placed: all but the length, offset and file name, which come between
// head and tail. The JSON fields are in the order warcio.js writes them.
type indexLine struct {
	head string // urlkey, timestamp, and the JSON object up to "length"
	tail string // the JSON object after "filename"
}

// maxQueryBody bounds the part of a request body put in a urlkey, as
// warcio's DEFAULT_MAX_QUERY_SIZE does.
const maxQueryBody = 4096

// newIndexLine returns the CDXJ line of the response or revisit record of
// x, but for where it is placed.
func newIndexLine(x *exchange, revisit bool) *indexLine {
	var b strings.Builder
	key := x.targetURI
	var method, requestBody string
	if m := requestMethod(x.request); m != "GET" && m != "" {
		_, body, _ := bytes.Cut(x.request, []byte("\r\n\r\n"))
		q := "__wb_post_data=" + base64.StdEncoding.EncodeToString(body)
		if len(q) > maxQueryBody {
			q = q[:maxQueryBody]
		}
		method, requestBody = m, q
		sep := "?"
		if strings.Index(key, "?") > 0 {
			sep = "&"
		}
		key += sep + "__wb_method=" + m + "&" + q
	}
	// The urlkey ends at the line's first space: one in the target's
	// authority (a damaged file's) is encoded, as is a control character.
	b.WriteString(spaceless(SURT(key)))
	b.WriteByte(' ')
	b.WriteString(indexTimestamp(x.date))
	b.WriteString(` {"url":`)
	b.WriteString(jsonString(x.targetURI))
	mime := x.mediaType
	if revisit {
		mime = "warc/revisit"
	}
	if mime != "" {
		b.WriteString(`,"mime":`)
		b.WriteString(jsonString(mime))
	}
	if x.status != 0 {
		b.WriteString(`,"status":"`)
		b.WriteString(strconv.Itoa(x.status))
		b.WriteByte('"')
	}
	if _, d, _ := strings.Cut(x.payload, ":"); d != "" {
		b.WriteString(`,"digest":`)
		b.WriteString(jsonString(d))
	}
	b.WriteString(`,"length":"`)
	l := &indexLine{head: b.String(), tail: "}"}
	if method != "" {
		l.tail = `,"method":` + jsonString(method) + `,"requestBody":` + jsonString(requestBody) + "}"
	}
	return l
}

// format returns the line of a record placed at offset, of length bytes,
// in the file whose base name is fname, given as a JSON string.
func (l *indexLine) format(offset, length int64, fname string) string {
	var b strings.Builder
	b.Grow(len(l.head) + len(l.tail) + len(fname) + 48)
	b.WriteString(l.head)
	var n [20]byte
	b.Write(strconv.AppendInt(n[:0], length, 10))
	b.WriteString(`","offset":"`)
	b.Write(strconv.AppendInt(n[:0], offset, 10))
	b.WriteString(`","filename":`)
	b.WriteString(fname)
	b.WriteString(l.tail)
	return b.String()
}

// jsonString returns s as a JSON string, as JSON.stringify writes it: a
// URL's & stays &.
func jsonString(s string) string {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\'
	}
	if plain {
		return `"` + s + `"`
	}
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string: no error
	return strings.TrimSuffix(js.String(), "\n")
}

// indexMemory is how many bytes of index lines a Writer holds in memory
// before it spills them to disk (see "The CDXJ index").
var indexMemory = 8 << 20 // a var for TestIndex, which makes it small

// writeIndex writes the index lines sorted bytewise, as pywb requires, each
// ended by a newline, to f, then closes it.
func writeIndex(f io.WriteCloser, lines *extsort.Sorter) error {
	bw := bufio.NewWriterSize(f, 64<<10)
	err := lines.Each(func(line []byte) error {
		bw.Write(line)
		return bw.WriteByte('\n') // the first error of bw's, if any
	})
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SURT returns the urlkey of an HTTP or HTTPS URL in a CDXJ index: the
// Sort-friendly URI Reordering Transform as pywb and warcio.js write it.
// The scheme, a leading "www." (or "www2." ...) and a default port are
// dropped, the host's labels reversed and joined with commas and closed
// with ")", then come the path and the query arguments sorted; all lower
// case. http://www.Example.com:8080/a/B?y=2&x=1 becomes
// com,example:8080)/a/b?x=1&y=2. Any other URL, or one that does not
// parse, is returned as it is. It is safe for concurrent use.
func SURT(u string) string {
	if !strings.HasPrefix(u, "http:") && !strings.HasPrefix(u, "https:") {
		return u
	}
	s := strings.ToLower(dropWWW(u))
	p, err := url.Parse(s)
	if err != nil || p.Host == "" || p.Opaque != "" {
		return u
	}
	host := p.Hostname()
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6, kept whole as WHATWG URL does
	}
	labels := strings.Split(host, ".")
	slices.Reverse(labels)
	var b strings.Builder
	b.WriteString(strings.Join(labels, ","))
	if port := p.Port(); port != "" && !(p.Scheme == "http" && port == "80") && !(p.Scheme == "https" && port == "443") {
		b.WriteString(":" + port)
	}
	b.WriteString(")")
	path := p.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(path)
	if p.RawQuery != "" {
		args := strings.Split(p.RawQuery, "&")
		slices.Sort(args)
		b.WriteString("?" + strings.Join(args, "&"))
	}
	return b.String()
}

// dropWWW returns u without the "www." (or "www2.", ...) that starts its
// host, u being an http: or https: URL.
func dropWWW(u string) string {
	scheme := "http://"
	if strings.HasPrefix(u, "https://") {
		scheme = "https://"
	}
	rest, ok := strings.CutPrefix(u, scheme)
	if !ok || !strings.HasPrefix(rest, "www") {
		return u
	}
	i := len("www")
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == len(rest) || rest[i] != '.' {
		return u
	}
	return scheme + rest[i+1:]
}

// indexTimestamp is how a CDXJ line gives a record's WARC-Date.
func indexTimestamp(t time.Time) string { return t.UTC().Format("20060102150405") }

// spaceless returns s with its spaces and control characters
// percent-encoded (" " is %20), and s itself when it has none.
func spaceless(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return s
	}
	return encodeFrom(s, 0, func(s string, i int) bool { return s[i] > ' ' && s[i] != 0x7f })
}
