package main

import (
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncrawl/crawl/crawltest"
)

// TestResolveFlag checks what -resolve accepts, how it spells what it keeps,
// and the error of each bad value.
func TestResolveFlag(t *testing.T) {
	good := []struct {
		value, key, to string
	}{
		{"a.example:80:127.0.0.1", "a.example:80", "127.0.0.1:80"},
		{"A.Example.:443:10.0.0.7", "a.example:443", "10.0.0.7:443"},
		{"*.example:80:127.0.0.1:8080", "*.example:80", "127.0.0.1:8080"},
		{"*:80:127.0.0.1:8080", "*:80", "127.0.0.1:8080"},
		{"bücher.example:80:127.0.0.1", "xn--bcher-kva.example:80", "127.0.0.1:80"},
		{"a.example:80:::1", "a.example:80", "[::1]:80"},
		{"a.example:80:[::1]", "a.example:80", "[::1]:80"},
		{"a.example:80:[::1]:8080", "a.example:80", "[::1]:8080"},
		{"a.example:80:::1:8080", "a.example:80", "[::1:8080]:80"}, // as curl: a port needs brackets
		{"10.1.2.3:80:127.0.0.1", "10.1.2.3:80", "127.0.0.1:80"},
	}
	for _, tt := range good {
		var f resolveFlag
		if err := f.Set(tt.value); err != nil {
			t.Errorf("Set(%q): %v, want no error", tt.value, err)
			continue
		}
		if got := f.to[tt.key]; got != tt.to || len(f.to) != 1 {
			t.Errorf("Set(%q): got %v, want %s mapped to %s", tt.value, f.to, tt.key, tt.to)
		}
	}
	bad := []struct {
		value, want string // want: in the error
	}{
		{"foo", "want HOST:PORT:ADDR"},
		{"a.example:80", "want HOST:PORT:ADDR"},
		{"a.example:http:127.0.0.1", `port "http"`},
		{"a.example:0:127.0.0.1", `port "0"`},
		{"a.example:65536:127.0.0.1", `port "65536"`},
		{"a.example:+80:127.0.0.1", `port "+80"`},
		{"a.example:80:", `address ""`},
		{"a.example:80:localhost", `address "localhost"`},
		{"a.example:80:127.0.0.1:http", `address "127.0.0.1:http"`},
		{"a.example:80:127.0.0.1:0", `address "127.0.0.1:0"`},
		{"a.example:80:127.0.0.1,127.0.0.2", `address "127.0.0.1,127.0.0.2"`},
		{":80:127.0.0.1", `HOST is empty`},
		{"::5:80:127.0.0.1", `IPv6 address as HOST goes in brackets`},
		{"[::5]80:127.0.0.1", `want an IPv6 address in brackets`},
		{"a b:80:127.0.0.1", `host "a b"`},
		{"a.example/x:80:127.0.0.1", `host "a.example/x"`},
		{"*example:80:127.0.0.1", `host "*example"`},
		{"*.*.example:80:127.0.0.1", `host "*.*.example"`},
		{"a.*.example:80:127.0.0.1", `host "a.*.example"`},
	}
	for _, tt := range bad {
		var f resolveFlag
		err := f.Set(tt.value)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Set(%q): got error %v, want one holding %q", tt.value, err, tt.want)
		}
		if len(f.to) != 0 {
			t.Errorf("Set(%q) failed but kept %v", tt.value, f.to)
		}
	}
	var f resolveFlag
	f.Set("a.example:80:127.0.0.1")
	if err := f.Set("A.example:80:127.0.0.2"); err == nil || !strings.Contains(err.Error(), "a.example:80 is mapped already, to 127.0.0.1:80") {
		t.Errorf("a host and port mapped twice: got error %v, want one naming the first mapping", err)
	}
}

// TestResolveLookup checks which entry a dialled host and port get: the
// exact host, then the longest wildcard, then "*", on the same port only.
func TestResolveLookup(t *testing.T) {
	var f resolveFlag
	for _, v := range []string{
		"*:80:10.0.0.1",
		"*.example:80:10.0.0.2",
		"*.b.example:80:10.0.0.3",
		"a.b.example:80:10.0.0.4",
		"a.b.example:443:10.0.0.5:8443",
		"[0:0::5]:80:10.0.0.6",
	} {
		if err := f.Set(v); err != nil {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	tests := []struct {
		addr, want string // want "": not mapped
	}{
		{"a.b.example:80", "10.0.0.4:80"},
		{"A.B.example.:80", "10.0.0.4:80"},
		{"a.b.example:443", "10.0.0.5:8443"},
		{"x.b.example:80", "10.0.0.3:80"},
		{"x.y.b.example:80", "10.0.0.3:80"},
		{"b.example:80", "10.0.0.2:80"},
		{"example:80", "10.0.0.1:80"}, // *.example is for names under it
		{"elsewhere.org:80", "10.0.0.1:80"},
		{"x.b.example:443", ""},
		{"elsewhere.org:8080", ""},
		{"[::1]:80", "10.0.0.1:80"},
		{"[::5]:80", "10.0.0.6:80"}, // an IPv6 HOST, in its canonical form
	}
	for _, tt := range tests {
		got, ok := f.lookup(tt.addr)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("lookup(%q): got %q, %t; want %q", tt.addr, got, ok, tt.want)
		}
	}
	var none resolveFlag
	if got, ok := none.lookup("a.example:80"); ok {
		t.Errorf("no -resolve: lookup mapped a.example:80 to %q", got)
	}
}

// hostSite is a crawltest Site serving two virtual hosts, a.example and
// b.example, of two pages each.
func hostSite(t *testing.T) *crawltest.Site {
	s := crawltest.Start(t)
	for _, h := range []string{"a", "b"} {
		host := s.Host(h + ".example")
		host.Page("/", "/"+h)
		host.Page("/"+h, "/")
	}
	return s
}

// checkHostRequests checks that each host of hostSite was sent each of its
// pages once, and robots.txt once, under its own name in the Host header.
func checkHostRequests(t *testing.T, s *crawltest.Site, hosts ...string) {
	t.Helper()
	for _, h := range hosts {
		var got []string
		for _, r := range s.Host(h + ".example").Requests() {
			if r.Host != h+".example" {
				t.Errorf("%s: a request with Host %q, want %q", r.URI, r.Host, h+".example")
			}
			got = append(got, r.URI)
		}
		slices.Sort(got)
		if want := []string{"/", "/" + h, "/robots.txt"}; !slices.Equal(got, want) {
			t.Errorf("%s.example was sent %q, want %q, each once", h, got, want)
		}
	}
}

// -resolve '*.example:80:127.0.0.1:PORT' serves every host under .example
// from one loopback server: each is sent its own pages under its own name,
// once, and the report and the archive name the real hosts, the archive
// the address dialled.
func TestResolveVirtualHosts(t *testing.T) {
	s := hostSite(t)
	file := filepath.Join(t.TempDir(), "site.warc.gz")
	r := runCrawl(t, "-q", "-warc", file, "-resolve", "*.example:80:"+s.Addr(), "http://a.example/", "http://b.example/")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	checkHostRequests(t, s, "a", "b")
	if n := s.Total(); n != 6 {
		t.Errorf("the server was sent %d requests, want 6", n)
	}
	urls, _, _, _, _ := splitReport(t, r.stdout)
	var got []string
	for _, u := range urls {
		got = append(got, strings.Join(strings.Fields(u)[:2], " "))
	}
	want := []string{"http://a.example/ 200", "http://a.example/a 200", "http://b.example/ 200", "http://b.example/b 200"}
	if !slices.Equal(got, want) {
		t.Errorf("the report's URLs: got %q, want %q", got, want)
	}
	archive := readWARC(t, file)
	for _, u := range []string{"http://a.example/", "http://a.example/a", "http://b.example/robots.txt"} {
		if n := strings.Count(archive, "WARC-Target-URI: "+u+"\r\n"); n != 2 {
			t.Errorf("%s: %d records, want 2 (its request and its response)", u, n)
		}
	}
	host, _, _ := net.SplitHostPort(s.Addr())
	if n, m := strings.Count(archive, "WARC-IP-Address: "+host+"\r\n"), strings.Count(archive, "WARC-IP-Address: "); n != 12 || m != n {
		t.Errorf("%d records with WARC-IP-Address %s, %d with any, want 12 of each", n, host, m)
	}
}

// readWARC returns the records of a .warc.gz file.
func readWARC(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("the WARC file: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// An exact HOST wins over a wildcard, whichever is given first.
func TestResolveExactBeatsWildcard(t *testing.T) {
	for _, exactFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("exact first %t", exactFirst), func(t *testing.T) {
			wild, exact := hostSite(t), hostSite(t)
			flags := []string{"-resolve", "*.example:80:" + wild.Addr(), "-resolve", "a.example:80:" + exact.Addr()}
			if exactFirst {
				flags[1], flags[3] = flags[3], flags[1]
			}
			r := runCrawl(t, append(append([]string{"-q"}, flags...), "http://a.example/", "http://b.example/")...)
			if r.code != 0 {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			checkHostRequests(t, exact, "a")
			checkHostRequests(t, wild, "b")
			if n := len(exact.Host("b.example").Requests()); n != 0 {
				t.Errorf("the server of a.example was sent %d requests for b.example, want 0", n)
			}
			if n := len(wild.Host("a.example").Requests()); n != 0 {
				t.Errorf("the server of *.example was sent %d requests for a.example, want 0", n)
			}
		})
	}
}

// With -block_private, the guard judges the address -resolve maps a name
// to: a name mapped to loopback is refused before anything is sent, as
// loopback itself is.
func TestResolveBlockPrivate(t *testing.T) {
	s := hostSite(t)
	r := runCrawl(t, "-q", "-block_private", "-resolve", "a.example:80:"+s.Addr(), "http://a.example/")
	if r.code != 1 || !strings.Contains(r.stderr, "blocked address") || !strings.Contains(r.stderr, "http://a.example/") {
		t.Errorf("exit %d, stderr %q; want 1 and the root refused as a blocked address", r.code, r.stderr)
	}
	if n := s.Total(); n != 0 {
		t.Errorf("the server was sent %d requests, want 0", n)
	}
}

// A bad -resolve is an error naming it before anything is fetched.
func TestResolveBad(t *testing.T) {
	s := hostSite(t)
	for _, v := range []string{"foo", "a.example:http:" + s.Addr(), "a.example:80:nowhere", "a b:80:" + s.Addr(),
		"::5:80:" + s.Addr(), "[::5:80:" + s.Addr(), "[1.2.3.4]:80:" + s.Addr(), "a.example,b.example:80:" + s.Addr(), "-a.example:80:" + s.Addr(), "+a.example:80:" + s.Addr()} {
		r := runCrawl(t, "-resolve", "*.example:80:"+s.Addr(), "-resolve", v, "http://a.example/")
		want := fmt.Sprintf("invalid value %q for flag -resolve", v)
		if r.code != 1 || !strings.Contains(r.stderr, want) || r.stdout != "" {
			t.Errorf("-resolve %q: exit %d, stdout %q, stderr %q; want 1, nothing, %s", v, r.code, r.stdout, r.stderr, want)
		}
	}
	r := runCrawl(t, "-resolve", "a.example:80:"+s.Addr(), "-resolve", "A.example:80:"+s.Addr(), "http://a.example/")
	if r.code != 1 || !strings.Contains(r.stderr, "a.example:80 is mapped already") {
		t.Errorf("a.example:80 mapped twice: exit %d, stderr %q; want 1 and an error saying so", r.code, r.stderr)
	}
	if n := s.Total(); n != 0 {
		t.Errorf("the server was sent %d requests, want 0", n)
	}
}

// tlsHosts is an HTTPS server with a certificate for a.example, which it
// records the names that reach it by: the TLS server name and the Host
// header of each request.
type tlsHosts struct {
	srv      *httptest.Server
	certFile string // the certificate, a root of its own, in PEM

	mu    sync.Mutex
	names []string // "server name|Host|path"
}

func newTLSHosts(t *testing.T) *tlsHosts {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "a.example"},
		DNSNames:              []string{"a.example"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	h := &tlsHosts{certFile: filepath.Join(t.TempDir(), "root.pem")}
	if err := os.WriteFile(h.certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o666); err != nil {
		t.Fatal(err)
	}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.names = append(h.names, r.TLS.ServerName+"|"+r.Host+"|"+r.URL.Path)
		h.mu.Unlock()
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="/x">x</a>`)
		case "/x":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="/">home</a>`)
		default:
			http.NotFound(w, r)
		}
	}))
	h.srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	h.srv.StartTLS()
	t.Cleanup(h.srv.Close)
	return h
}

// With HTTPS, the TLS server name stays HOST: the certificate of HOST is
// verified, and the server sees HOST in the handshake and in Host.
func TestResolveHTTPS(t *testing.T) {
	for _, archive := range []bool{false, true} {
		t.Run(fmt.Sprintf("warc %t", archive), func(t *testing.T) {
			h := newTLSHosts(t)
			file := filepath.Join(t.TempDir(), "site.warc.gz")
			args := []string{"-q", "-resolve", "a.example:443:" + h.srv.Listener.Addr().String()}
			if archive {
				args = append(args, "-warc", file)
			}
			cmd := crawlCmd(t, append(args, "https://a.example/")...)
			cmd.Env = append(cmd.Env, "SSL_CERT_FILE="+h.certFile, "SSL_CERT_DIR="+t.TempDir())
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if err != nil {
				t.Fatalf("crawl %q: %v, stderr %q", args, err, stderr.String())
			}
			h.mu.Lock()
			got := slices.Sorted(slices.Values(h.names))
			h.mu.Unlock()
			want := []string{"a.example|a.example|/", "a.example|a.example|/robots.txt", "a.example|a.example|/x"}
			if !slices.Equal(got, want) {
				t.Errorf("the server saw (server name|Host|path) %q, want %q", got, want)
			}
			if !strings.Contains(stdout.String(), "https://a.example/x 200 ") {
				t.Errorf("the report does not show https://a.example/x 200:\n%s", stdout.String())
			}
			if !archive {
				return
			}
			records := readWARC(t, file)
			if n := strings.Count(records, "WARC-Target-URI: https://a.example/x\r\n"); n != 2 {
				t.Errorf("https://a.example/x: %d records, want 2", n)
			}
			if n := strings.Count(records, "WARC-IP-Address: 127.0.0.1\r\n"); n != 6 {
				t.Errorf("%d records with WARC-IP-Address 127.0.0.1, want 6", n)
			}
		})
	}
}
