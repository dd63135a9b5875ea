package warc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// indexEntry is one line of the CDXJ index, the fields in the order
// warcio.js writes them.
type indexEntry struct {
	URL         string `json:"url"`
	Mime        string `json:"mime,omitempty"`
	Status      string `json:"status,omitempty"`
	Digest      string `json:"digest,omitempty"`
	Length      string `json:"length"`
	Offset      string `json:"offset"`
	Filename    string `json:"filename"`
	Method      string `json:"method,omitempty"`
	RequestBody string `json:"requestBody,omitempty"`
}

// placement is where a record was written: its file and the offset and
// length of the record (or of its gzip member) in it.
type placement struct {
	file           string
	offset, length int64
}

// maxQueryBody bounds the part of a request body put in a urlkey, as
// warcio's DEFAULT_MAX_QUERY_SIZE does.
const maxQueryBody = 4096

// indexLine returns the CDXJ line of the response or revisit record of x
// written at p, without its line end.
func indexLine(x *exchange, p placement, revisit bool, payloadDigest string) (string, error) {
	status, hdr, _ := parseHead(x.head)
	e := indexEntry{
		URL:      x.targetURI,
		Length:   fmt.Sprint(p.length),
		Offset:   fmt.Sprint(p.offset),
		Filename: filepath.Base(p.file),
	}
	if status != 0 {
		e.Status = fmt.Sprint(status)
	}
	if revisit {
		e.Mime = "warc/revisit"
	} else if ct, ok := hdr["content-type"]; ok {
		mime, _, _ := strings.Cut(ct, ";")
		e.Mime = strings.TrimSpace(mime)
	}
	_, e.Digest, _ = strings.Cut(payloadDigest, ":")
	key := x.targetURI
	if method := requestMethod(x.request); method != "GET" && method != "" {
		_, body, _ := bytes.Cut(x.request, []byte("\r\n\r\n"))
		q := "__wb_post_data=" + base64.StdEncoding.EncodeToString(body)
		if len(q) > maxQueryBody {
			q = q[:maxQueryBody]
		}
		e.Method, e.RequestBody = method, q
		sep := "?"
		if strings.Index(key, "?") > 0 {
			sep = "&"
		}
		key += sep + "__wb_method=" + method + "&" + q
	}
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false) // as JSON.stringify: a URL's & stays &
	if err := enc.Encode(e); err != nil {
		return "", err
	}
	return SURT(key) + " " + indexTimestamp(x.date) + " " + strings.TrimSuffix(js.String(), "\n"), nil
}

// writeIndex sorts the index lines bytewise, as pywb requires, and writes
// them to f, then closes it.
func writeIndex(f io.WriteCloser, lines []string) error {
	slices.Sort(lines)
	var buf bytes.Buffer
	for _, l := range lines {
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
	_, err := f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

var wwwPrefix = regexp.MustCompile(`^(https?://)www\d*\.`)

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
	s := strings.ToLower(wwwPrefix.ReplaceAllString(u, "$1"))
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

// indexTimestamp is how a CDXJ line gives a record's WARC-Date.
func indexTimestamp(t time.Time) string { return t.UTC().Format("20060102150405") }
