package warc_test

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/asyncrawl/crawl/warc"
)

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
