//go:build unix

// Command floor measures the crawler against the least any crawler must do,
// for the 1,000-worker figures of docs/performance.md. It is run by
// bench/floor.sh, which serves the shared benchmark site and alternates the
// engines:
//
//   - ceiling: GET every page of the site once, the URLs known in
//     advance, reading and discarding each body (compare.sh's ceiling);
//   - bare: the same GETs, then each page's href="..." found with
//     bytes.Index, resolved with net/url and put in a map: what no crawler
//     can skip, without a tokenizer, a queue or robots.txt;
//   - crawl: this package from the site's root, through crawl.New and Run
//     (compare.sh's runner).
//
// It prints one line: the engine, the pages fetched (status 200) and the
// CPU seconds the process used (user and system, from getrusage).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/asyncrawl/crawl"
)

func main() {
	engine := flag.String("engine", "crawl", "ceiling, bare or crawl")
	root := flag.String("root", "", "the site's root URL, with its trailing slash")
	workers := flag.Int("workers", 1000, "workers")
	pages := flag.Int("pages", 10000, "pages of the site (ceiling and bare)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the run to `file`")
	flag.Parse()
	if *root == "" {
		fmt.Fprintln(os.Stderr, "floor: -root is required")
		os.Exit(2)
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		defer f.Close()
	}
	var fetched atomic.Int64
	switch *engine {
	case "ceiling", "bare":
		loop(*engine == "bare", *root, *workers, *pages, &fetched)
	case "crawl":
		c, err := crawl.New(
			crawl.WithWorkers(*workers),
			crawl.WithHostWorkers(*workers),
			crawl.WithPageHook(func(p *crawl.Page) {
				if p.Status == http.StatusOK {
					fetched.Add(1)
				}
			}),
		)
		if err == nil {
			_, err = c.Run(context.Background(), *root)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "floor: unknown engine %q: want ceiling, bare or crawl\n", *engine)
		os.Exit(2)
	}
	pprof.StopCPUProfile()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintln(os.Stderr, "floor: getrusage:", err)
		os.Exit(1)
	}
	cpu := float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	fmt.Printf("engine=%s fetched=%d cpu_s=%.3f\n", *engine, fetched.Load(), cpu)
}

// loop GETs the site's pages p/0.html to p/(pages-1).html with workers
// goroutines, through a transport with an idle connection for each.
func loop(parse bool, root string, workers, pages int, fetched *atomic.Int64) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 2*workers, 2*workers
	client := &http.Client{Transport: t}
	var mu sync.Mutex
	seen := make(map[string]struct{})
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			for u := range jobs {
				resp, err := client.Get(u)
				if err != nil {
					continue
				}
				if !parse {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					fetched.Add(1)
					continue
				}
				buf.Reset()
				buf.ReadFrom(resp.Body)
				resp.Body.Close()
				body := buf.Bytes()
				for {
					i := bytes.Index(body, []byte(`href="`))
					if i < 0 {
						break
					}
					body = body[i+len(`href="`):]
					j := bytes.IndexByte(body, '"')
					if j < 0 {
						break
					}
					if l, err := resp.Request.URL.Parse(string(body[:j])); err == nil {
						l.Fragment = ""
						k := l.String()
						mu.Lock()
						seen[k] = struct{}{}
						mu.Unlock()
					}
					body = body[j:]
				}
				fetched.Add(1)
			}
		}()
	}
	for i := range pages {
		jobs <- fmt.Sprintf("%sp/%d.html", root, i)
	}
	close(jobs)
	wg.Wait()
}
