package warc_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/crawltest"
	"github.com/asyncrawl/crawl/warc"
)

// Mirror a site into a web archive, with its pages' requisites (images,
// stylesheets, scripts) so that a replay renders them, and its CDXJ
// index: the crawl's transport records every exchange, robots.txt
// included, as it was transferred. Then the archive is read back: a
// .warc.gz is a gzip member per record, and a record's head is a MIME
// header, as textproto reads it.
func Example() {
	site := crawltest.New() // serves www.example.com offline
	defer site.Close()
	site.Page("/", "/about", "/blog/")
	site.Body("/about", "text/html", `<img src="/logo.png"><a href="/">home</a>`)
	site.Body("/logo.png", "image/png", "not really a PNG")
	site.Page("/blog/", "/about", "/blog/first")
	site.Body("/blog/first", "text/plain", "First post.")
	dir, err := os.MkdirTemp("", "mirror")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	w, err := warc.NewWriter(warc.Options{File: filepath.Join(dir, "site.warc.gz"), Index: filepath.Join(dir, "site.cdxj")})
	if err != nil {
		log.Fatal(err)
	}
	c, err := crawl.New(
		crawl.WithHTTPClient(site.Client()), // leave out on the real web
		crawl.WithRequisites(true),
		crawl.WithTransportWrapper(w.Transport),
	)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Run(context.Background(), "http://www.example.com/"); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil { // writes what is queued: call it
		log.Fatal(err)
	}

	// Read the archive back, a record (a gzip member) at a time.
	types := map[string]int{}
	var responses []string
	for _, name := range w.Files() {
		f, err := os.Open(name)
		if err != nil {
			log.Fatal(err)
		}
		br := bufio.NewReader(f)
		zr, err := gzip.NewReader(br)
		if err != nil {
			log.Fatal(err)
		}
		for {
			zr.Multistream(false) // stop at the member's end
			rec := textproto.NewReader(bufio.NewReader(zr))
			if _, err := rec.ReadLine(); err != nil { // WARC/1.1
				log.Fatal(err)
			}
			fields, err := rec.ReadMIMEHeader()
			if err != nil {
				log.Fatal(err)
			}
			types[fields.Get("WARC-Type")]++
			if fields.Get("WARC-Type") == "response" {
				responses = append(responses, fields.Get("WARC-Target-URI"))
			}
			io.Copy(io.Discard, zr) // the rest: the HTTP head and body
			if err := zr.Reset(br); err == io.EOF {
				break // no next member
			} else if err != nil {
				log.Fatal(err)
			}
		}
		f.Close()
		fmt.Println(filepath.Base(name), types)
	}
	sort.Strings(responses)
	fmt.Println(strings.Join(responses, "\n"))
	index, err := os.ReadFile(filepath.Join(dir, "site.cdxj"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("site.cdxj:", strings.Count(string(index), "\n"), "lines, the first", strings.Fields(string(index))[0])
	// Output:
	// site.warc.gz map[request:6 response:6 warcinfo:1]
	// http://www.example.com/
	// http://www.example.com/about
	// http://www.example.com/blog/
	// http://www.example.com/blog/first
	// http://www.example.com/logo.png
	// http://www.example.com/robots.txt
	// site.cdxj: 6 lines, the first com,example)/
}

// A client whose transport records every exchange it carries.
func ExampleWriter_Transport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}))
	defer srv.Close()
	dir, err := os.MkdirTemp("", "warc")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	w, err := warc.NewWriter(warc.Options{Dir: dir, Prefix: "example"})
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: w.Transport(nil)}
	resp, err := client.Get(srv.URL + "/hello")
	if err != nil {
		log.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body) // the record is written at the body's end
	resp.Body.Close()
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	// The record types, in the order written.
	for _, name := range w.Files() {
		f, err := os.Open(name)
		if err != nil {
			log.Fatal(err)
		}
		zr, err := gzip.NewReader(f) // reads every member in turn
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(filepath.Base(name))
		sc := bufio.NewScanner(zr)
		for sc.Scan() {
			if typ, ok := strings.CutPrefix(sc.Text(), "WARC-Type: "); ok {
				fmt.Println(typ)
			}
		}
		f.Close()
	}
	// Output:
	// example-00000.warc.gz
	// warcinfo
	// response
	// request
}
