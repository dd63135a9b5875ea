// Package redistest starts a real redis-server for tests: on a free
// loopback port, in a directory of the test's own, with the persistence a
// crawl should run with (appendonly yes, appendfsync everysec, no RDB
// snapshots), stopped when the test ends. Kill and Restart crash it and
// start it again on its files; Snapshot and RestartFrom bring it back from
// an older state.
//
//	s := redistest.Start(t)
//	f, err := redisfrontier.Open(ctx, s.URL(), nil)
//
// StartCluster starts a Redis Cluster of such servers, formed by redis-cli,
// with replicas that take over from a master KillMaster crashes:
//
//	c := redistest.StartCluster(t, 3, 1) // 3 masters, a replica each
//	m := c.MasterOf(key)
//	c.KillMaster(m)
//	promoted := c.WaitFailover(t, m)
//
// A test that calls Start is skipped when redis-server is not installed,
// and one that calls StartCluster when redis-server or redis-cli is not,
// except when the environment variable CI is set: then it fails, so that a
// CI without Redis does not pass by skipping (.ci/run installs them). On Linux the servers die with
// the test binary, even when it ends without running its cleanups.
package redistest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is a redis-server a test started. Its methods are safe for
// concurrent use.
type Server struct {
	t     testing.TB
	bin   string
	dir   string
	port  int
	extra []string // arguments of redis-server after Start's own

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Start starts a redis-server on a free loopback port in a t.TempDir, waits
// until it answers PING, and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, lookPath(t, "redis-server"), nil, false)
}

// lookPath returns the path of the program name, installed with Redis. It
// skips the test when the program is missing, or fails it when the
// environment variable CI is set.
func lookPath(t testing.TB, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found (%v): .ci/run installs it (apt-get install redis-server redis-tools)", name, err)
		}
		t.Skipf("%s not installed: %v", name, err)
	}
	return bin
}

// start starts the redis-server bin with the arguments extra after its own
// on a free loopback port, in a t.TempDir, and stops it when t ends. With
// bus set the port's cluster bus port (the port + 10000) must be free too.
func start(t testing.TB, bin string, extra []string, bus bool) *Server {
	t.Helper()
	s := &Server{t: t, bin: bin, dir: t.TempDir(), extra: extra}
	t.Cleanup(s.stop)
	// The port is free when picked, but another process may take it
	// before redis-server binds it: try again with another.
	for range 10 {
		s.port = freePort(t, bus)
		err := s.launch()
		if err == nil {
			return s
		}
		t.Logf("redis-server on port %d: %v; trying another port", s.port, err)
	}
	t.Fatalf("redis-server would not start")
	return nil
}

// freePort returns a loopback port free when asked; with bus set, one
// whose cluster bus port (the port + 10000) is free as well.
func freePort(t testing.TB, bus bool) int {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if !bus {
			l.Close()
			return port
		}
		if port+busOffset > 65535 {
			l.Close()
			continue
		}
		lb, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+busOffset)))
		l.Close()
		if err == nil {
			lb.Close()
			return port
		}
	}
	t.Fatalf("no free loopback port with a free cluster bus port")
	return 0
}

// busOffset is how far above its port a cluster node listens for the
// cluster bus (Redis's fixed default).
const busOffset = 10000

// Addr returns the server's "127.0.0.1:PORT".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL returns the server's "redis://127.0.0.1:PORT/0".
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Dir returns the server's directory: its AOF and its log.
func (s *Server) Dir() string { return s.dir }

// launch starts redis-server on s.port and waits for its PING.
func (s *Server) launch() error {
	cmd := exec.Command(s.bin,
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--dir", s.dir, "--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
		"--daemonize", "no", "--logfile", filepath.Join(s.dir, logName),
		"--maxmemory-policy", "noeviction")
	cmd.Args = append(cmd.Args, s.extra...)
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("redis-server exited: see %s", filepath.Join(s.dir, logName))
		default:
		}
		if ping(s.Addr()) {
			s.mu.Lock()
			s.cmd = cmd
			s.mu.Unlock()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-exited
	return fmt.Errorf("redis-server on %s did not answer PING in 10s", s.Addr())
}

// settle waits, for at most 3 s, until no fsync of the AOF is under way on
// the server at addr, then makes a round trip: Redis writes its AOF buffer
// before it sends the replies of an event-loop turn, unless an fsync is
// under way, so once none is, the PING's reply comes after the buffer of
// every write answered before it was written.
func settle(addr string) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return
	}
	defer c.Close()
	r := bufio.NewReader(c)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		c.SetDeadline(time.Now().Add(time.Second))
		if _, err := c.Write([]byte("INFO persistence\r\n")); err != nil {
			return
		}
		head, err := r.ReadString('\n') // $<length>
		if err != nil || len(head) < 2 || head[0] != '$' {
			return
		}
		n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
		if err != nil {
			return
		}
		body := make([]byte, n+2)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if !strings.Contains(string(body), "aof_pending_bio_fsync:1") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err == nil {
		r.ReadString('\n')
	}
}

// ping reports whether a Redis server at addr answers PING with PONG (and
// not with LOADING while it reads its AOF).
func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}

// Kill kills the server with SIGKILL, as a crash would, and waits for it
// to be gone. It first lets the server write to its AOF what it has
// already answered for (see settle), so that what a test shows is what the
// AOF keeps, not Redis's own window: with appendfsync everysec, Redis
// answers writes it holds back for up to 2 s while the disk is still busy
// with the last fsync, and a crash then loses them, whatever the client.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	settle(s.Addr())
	cmd.Process.Kill()
	for ping(s.Addr()) {
		time.Sleep(10 * time.Millisecond)
	}
}

// Restart starts the server again (after Kill, or killing it first) on the
// same port and directory, so that it loads its AOF, and waits for PING.
// It fails the test if the server will not start: call it from the test's
// goroutine.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	var err error
	for range 50 { // the port may linger a moment after the kill
		if err = s.launch(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("restarting redis-server on %s: %v", s.Addr(), err)
}

// Snapshot copies the server's files (its AOF, and its RDB if it wrote
// one) as they are now, once the server has written to them what it has
// answered for (see Kill), and returns the directory of the copy, for
// RestartFrom.
func (s *Server) Snapshot() string {
	s.t.Helper()
	settle(s.Addr())
	dst := s.t.TempDir()
	if err := copyData(dst, s.dir); err != nil {
		s.t.Fatalf("snapshot of redis-server's files: %v", err)
	}
	return dst
}

// RestartFrom kills the server and starts it again on the files of
// snapshot, as Snapshot copied them: the server comes back from an older
// state, as after a restore of a backup, or a crash that lost the AOF's
// last second. It fails the test if the server will not start: call it
// from the test's goroutine.
func (s *Server) RestartFrom(snapshot string) {
	s.t.Helper()
	s.Kill()
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != logName {
			if err := os.RemoveAll(filepath.Join(s.dir, e.Name())); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	if err := copyData(s.dir, snapshot); err != nil {
		s.t.Fatalf("restoring redis-server's files: %v", err)
	}
	s.Restart()
}

// copyData copies the files under src, but the server's log, to dst.
func copyData(dst, src string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil || rel == "." || rel == logName {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
}

// logName is the server's log, in its directory.
const logName = "redis.log"

func (s *Server) stop() {
	s.Kill()
}

// Freeze stops the server with SIGSTOP: it holds its connections and
// answers nothing, reads nothing (as a replica, nothing of its master's
// stream) until Thaw.
func (s *Server) Freeze() { s.signal(syscall.SIGSTOP) }

// Thaw lets a frozen server go on (SIGCONT).
func (s *Server) Thaw() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		s.t.Fatalf("redistest: signal %v to %s: the server is not running", sig, s.Addr())
	}
	if err := cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("redistest: signal %v to %s: %v", sig, s.Addr(), err)
	}
}
