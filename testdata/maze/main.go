// Command maze serves crawltest.Maze on a loopback address until it is
// interrupted or its time is up, then prints which of the maze's cases were
// found (their targets requested) and which were missed, so that any
// crawler can be measured on it:
//
//	go run ./testdata/maze -addr 127.0.0.1:8711 -for 2m &
//	crawl -robots=false -sitemaps -requisites -references -speculative http://127.0.0.1:8711/
//	kill -INT %1
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/asyncrawl/crawl/crawltest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8711", "loopback address to listen on")
	limit := flag.Duration("for", 5*time.Minute, "stop after this long")
	flag.Parse()
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		log.Fatal(err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		log.Fatalf("maze: %s is not a loopback address", *addr)
	}
	maze := crawltest.NewMaze()
	srv := &http.Server{Addr: *addr, Handler: maze}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *limit)
	defer cancel()
	go func() {
		<-ctx.Done()
		srv.Shutdown(context.Background())
	}()
	fmt.Fprintf(os.Stderr, "maze: serving http://%s/\n", *addr)
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		log.Fatal(err)
	}
	found := maze.Found()
	fmt.Printf("found %d of %d\n", len(found), len(crawltest.MazeCases()))
	for _, c := range crawltest.MazeCases() {
		mark := "missed"
		if slices.Contains(found, c) {
			mark = "found "
		}
		fmt.Printf("%s %-11s %s\n", mark, c.Role, c.Name)
	}
}
