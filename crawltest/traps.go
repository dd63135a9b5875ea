package crawltest

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// Status returns a handler that answers with the status code and a short
// plain-text body naming it, such as "503 Service Unavailable".
func Status(code int) http.Handler {
	body := strconv.Itoa(code) + " " + http.StatusText(code) + "\n"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(code)
		io.WriteString(w, body)
	})
}

// calendarStart is the day a Calendar shows at its own path.
var calendarStart = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// Calendar returns an endless calendar, the classic crawler trap: mounted
// at a subtree such as "/calendar/", it answers "/calendar/" with the page
// of 2000-01-01 and "/calendar/YYYY-MM-DD" with the page of that day, and
// every day's page links to the next day and to the same day of the next
// month, so that each page yields new URLs for the next 8,000 years. A last
// segment that is not a date is a 404.
func Calendar() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dir, last := path.Split(r.URL.Path)
		day := calendarStart
		if last != "" {
			d, err := time.Parse(time.DateOnly, last)
			if err != nil {
				http.NotFound(w, r)
				return
			}
			day = d
		}
		page(day.Format(time.DateOnly), []string{
			dir + day.AddDate(0, 0, 1).Format(time.DateOnly),
			dir + day.AddDate(0, 1, 0).Format(time.DateOnly),
		}).ServeHTTP(w, r)
	})
}

// Repeater returns a path-segment repeater, the trap of a relative link on
// a lenient server: whatever the path, it answers with a page linking to
// that path with its last segment once more, so that "/a/" links to
// "/a/a/", which links to "/a/a/a/", and so on. Mount it at a subtree
// ("/a/"). The root path "/" has no segment and gets a page without links.
func Repeater() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		var links []string
		if seg := path.Base(strings.TrimSuffix(p, "/")); seg != "." && seg != "/" {
			if strings.HasSuffix(p, "/") {
				links = append(links, p+seg+"/")
			} else {
				links = append(links, p+"/"+seg)
			}
		}
		page(p, links).ServeHTTP(w, r)
	})
}

// ManyLinks returns a handler of an HTML page with n links, the i-th to
// fmt.Sprintf(format, i) for i from 0 to n-1: ManyLinks(100000, "/p/%d")
// is a page of 100,000 distinct links, written as the client reads it
// rather than built in memory.
func ManyLinks(n int, format string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		bw := bufio.NewWriter(w)
		bw.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>links</title></head><body>\n")
		for i := range n {
			fmt.Fprintf(bw, "<a href=\"%s\">%d</a>\n", html.EscapeString(fmt.Sprintf(format, i)), i)
		}
		bw.WriteString("</body></html>\n")
		bw.Flush()
	})
}

// RedirectLoop returns a loop of n redirects with the status code: mounted
// at a subtree such as "/loop/", "/loop/i" redirects to "/loop/i+1" and
// "/loop/n-1" to "/loop/0", so a client that follows redirects comes back
// where it was after n hops; "/loop/" (or any last segment that is not a
// number) redirects as "/loop/0" does. With n 1, "/loop/0" redirects to
// itself. RedirectLoop panics if n is less than 1.
func RedirectLoop(code, n int) http.Handler {
	if n < 1 {
		panic(fmt.Sprintf("crawltest: RedirectLoop of %d redirects", n))
	}
	return redirectNext(code, n)
}

// RedirectChain returns an endless chain of redirects with the status
// code: mounted at "/chain/", "/chain/i" redirects to "/chain/i+1", for
// ever, each hop to a URL not seen before. Only a limit on redirects stops
// a client that follows them.
func RedirectChain(code int) http.Handler { return redirectNext(code, 0) }

// redirectNext redirects a path ending in a number i to the same path
// ending in i+1, modulo n unless n is 0.
func redirectNext(code, n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dir, last := path.Split(r.URL.Path)
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 {
			i = 0
		}
		next := i + 1
		if n > 0 {
			next %= n
		}
		w.Header().Set("Location", dir+strconv.Itoa(next))
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(code)
	})
}

// Trickle returns a handler that sends 200 and its headers at once, then
// an endless HTML body one byte every interval, flushed, until the client
// goes away or the Site closes: the server a per-attempt timeout must cut,
// since every read makes progress. The body never completes; the client
// sees an error, never an EOF. Trickle panics if every is not positive.
func Trickle(every time.Duration) http.Handler {
	if every <= 0 {
		panic(fmt.Sprintf("crawltest: Trickle every %v", every))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		const head = "<!DOCTYPE html>\n<html><body>\n"
		for i := 0; ; i++ {
			b := byte(' ')
			if i < len(head) {
				b = head[i]
			}
			if _, err := w.Write([]byte{b}); err != nil {
				panic(http.ErrAbortHandler)
			}
			if err := rc.Flush(); err != nil {
				panic(http.ErrAbortHandler)
			}
			if !sleep(r.Context(), every) {
				panic(http.ErrAbortHandler)
			}
		}
	})
}

// Stall returns a handler that sends 200 and its headers, flushed, and
// then nothing, until the client goes away or the Site closes; the body
// never completes.
func Stall() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
		panic(http.ErrAbortHandler)
	})
}

// NoResponse returns a handler that accepts the request and never writes
// a byte, not even a status line, until the client goes away or the Site
// closes; then the connection closes without a response.
func NoResponse() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		panic(http.ErrAbortHandler)
	})
}

// ConnReset returns a handler that sends 200 with a Content-Length it
// does not keep, n bytes of an HTML body, and then resets the connection
// (TCP RST, by closing it with SO_LINGER 0): the client's read of the body
// fails with ECONNRESET. It needs an HTTP/1 connection it can hijack; on
// another it closes the connection without a response.
func ConnReset(n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, bw := hijack(w)
		defer conn.Close()
		fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n", 2*n+1)
		bw.Write(filler(n))
		if bw.Flush() != nil {
			return
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	})
}

// Truncated returns a handler that sends 200 with a chunked body holding
// n bytes of HTML and closes the connection before the last chunk: the
// client gets every byte and then io.ErrUnexpectedEOF. It needs an HTTP/1
// connection it can hijack; on another it closes the connection without a
// response.
func Truncated(n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, bw := hijack(w)
		defer conn.Close()
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n")
		if n > 0 {
			fmt.Fprintf(bw, "%x\r\n%s\r\n", n, filler(n))
		}
		bw.Flush()
	})
}

// hijack takes the connection of w over, so that a handler can write a
// response net/http would not; where it cannot, it aborts the handler.
func hijack(w http.ResponseWriter) (net.Conn, *bufio.Writer) {
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	return conn, brw.Writer
}

// filler returns n bytes of an HTML page that never ends.
func filler(n int) []byte {
	const head, para = "<!DOCTYPE html>\n<html><body>\n", "<p>All work and no play.</p>\n"
	var b strings.Builder
	b.WriteString(head)
	for b.Len() < n {
		b.WriteString(para)
	}
	return []byte(b.String()[:n])
}
