package crawl

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1", time.Second, true},
		{"0", 0, true},
		{" 120 ", 2 * time.Minute, true},
		{"+5", 5 * time.Second, true}, // strconv accepts a sign
		{"-1", 0, false},
		{"", 0, false},
		{"   ", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"1s", 0, false},
		// Past int64, still delta-seconds (RFC 9110: 1*DIGIT; RFC 9111
		// reads such a value as the largest it can): the longest pause,
		// which the caller caps at WithBackoff's 10 minutes.
		{"99999999999999999999", time.Duration(1<<62/time.Second) * time.Second, true},
		{"-99999999999999999999", 0, false},
		{now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{now.Format(http.TimeFormat), 0, true},
		{"Sunday, 06-Nov-94 08:49:37 GMT", 0, true}, // RFC 850, in the past
		{"Sun Nov  6 08:49:37 1994", 0, true},       // asctime, in the past
		{"Mon, 06 May 2024 07:08:19 GMT", 10 * time.Second, true},
		{"Mon, 06 May 2024 07:08:19", 0, false}, // no zone
	} {
		got, ok := retryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("retryAfter(%q): got %v, %v, want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}

	// A huge number of seconds is capped, not wrapped into a negative
	// duration.
	d, ok := retryAfter("10000000000", now)
	if !ok || d <= 0 {
		t.Errorf("retryAfter(1e10 seconds): got %v, %v, want a positive duration, true", d, ok)
	}
}

func TestMediaType(t *testing.T) {
	for _, tc := range []struct {
		in, typ, charset string
	}{
		{"", "", ""},
		{"text/html", "text/html", ""},
		{"foo", "foo", ""},
		{"TEXT/HTML", "text/html", ""},
		{"text/html; charset=utf-8", "text/html", "utf-8"},
		{"Text/HTML;Charset=UTF-8", "text/html", "UTF-8"}, // the label as sent
		{`text/html; charset="iso-8859-1"`, "text/html", "iso-8859-1"},
		{`text/html; charset='koi8-r'`, "text/html", "koi8-r"},
		{" text/plain ; format=flowed ; charset = latin1 ", "text/plain", "latin1"},
		{"Application/Foo; x=y", "application/foo", ""},
		{"text/html; charset", "text/html", ""},
		{"text/html; xcharset=utf-8", "text/html", ""},
		{"text/html;", "text/html", ""},
		{"; charset=utf-8", "", "utf-8"},
	} {
		typ, cs := mediaType(tc.in)
		if typ != tc.typ || cs != tc.charset {
			t.Errorf("mediaType(%q): got %q, %q, want %q, %q", tc.in, typ, cs, tc.typ, tc.charset)
		}
	}
}

func TestDecode(t *testing.T) {
	late := "<p>" + strings.Repeat("a", 1100) + "</p>café"
	for _, tc := range []struct {
		name, body, mediaType, label string
		want, enc                    string
	}{
		{"ascii", "<p>hi</p>", "text/html", "", "<p>hi</p>", "utf-8"},
		{"utf-8 sniffed", "café", "text/html", "", "café", "utf-8"},
		{"utf-8 after 1k", late, "text/html", "", late, "utf-8"},
		{"utf-8 label", "\xef\xbb\xbfcafé", "text/html", "UTF8", "café", "utf-8"},
		{"latin-1 label", "caf\xe9", "text/html", "ISO-8859-1", "café", "windows-1252"},
		{"latin-1 undeclared", "caf\xe9", "text/html", "", "café", "windows-1252"},
		{"unknown label", "caf\xe9", "text/plain", "no-such-charset", "café", "windows-1252"},
		{"meta", `<meta charset="koi8-r">` + "\xf0\xd2\xc9\xd7\xc5\xd4", "text/html", "", `<meta charset="koi8-r">Привет`, "koi8-r"},
		{"label beats meta", `<meta charset="koi8-r">caf` + "\xe9", "text/html", "latin1", `<meta charset="koi8-r">café`, "windows-1252"},
		{"utf-16be BOM", "\xfe\xff\x00h\x00i", "text/plain", "utf-8", "hi", "utf-16be"},
		{"utf-16le BOM", "\xff\xfeh\x00i\x00", "text/plain", "", "hi", "utf-16le"},
		{"ascii meta windows-1252", `<meta charset="windows-1252"><p>hi</p>`, "text/html", "", `<meta charset="windows-1252"><p>hi</p>`, "windows-1252"},
		{"ascii meta latin-1", `<META HTTP-EQUIV="Content-Type" CONTENT="text/html; CHARSET=iso-8859-1">hi`, "text/html", "", `<META HTTP-EQUIV="Content-Type" CONTENT="text/html; CHARSET=iso-8859-1">hi`, "windows-1252"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, enc := decode([]byte(tc.body), tc.mediaType, tc.label)
			if string(got) != tc.want || enc != tc.enc {
				t.Errorf("decode(%q, %q, %q): got %q, %q, want %q, %q", tc.body, tc.mediaType, tc.label, got, enc, tc.want, tc.enc)
			}
		})
	}
}

// TestDirectDo checks that a request sent straight through the crawler's
// own transport comes back as it would through its client: a redirect as
// a response, a failure wrapped in the same *url.Error.
func TestDirectDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/next", http.StatusFound)
	}))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close()

	cfg := defaultConfig()
	client, _, err := cfg.newClient()
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections()
	f := newFetcher(&cfg, client)
	if f.direct == nil {
		t.Fatal("the crawler's own client: got no direct transport")
	}
	for _, tc := range []struct{ method, url string }{
		{http.MethodGet, srv.URL + "/"},
		{http.MethodHead, srv.URL + "/"},
		{http.MethodGet, refused},
		{http.MethodHead, refused},
	} {
		var got, want string
		for i, send := range []func(*http.Request) (*http.Response, error){
			func(req *http.Request) (*http.Response, error) { return f.do(req, tc.method) },
			client.Do,
		} {
			req, err := http.NewRequest(tc.method, tc.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := send(req)
			var s string
			if err != nil {
				var uerr *url.Error
				s = fmt.Sprintf("error %v (*url.Error: %t)", err, errors.As(err, &uerr))
			} else {
				s = fmt.Sprintf("status %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
				resp.Body.Close()
			}
			if i == 0 {
				got = s
			} else {
				want = s
			}
		}
		if got != want {
			t.Errorf("%s %s: got %s, want %s, as through the client", tc.method, tc.url, got, want)
		}
	}
}
