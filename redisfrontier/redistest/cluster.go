package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Cluster is a Redis Cluster a test started with StartCluster: redis-server
// processes on loopback, each in a directory of its own, formed into one
// cluster by redis-cli. Its methods are safe for concurrent use; those that
// take no testing.TB fail the test StartCluster was given, so call them
// from that test's goroutine.
type Cluster struct {
	t       testing.TB
	nodes   []*Server // masters first, as created
	timeout time.Duration

	mu     sync.Mutex
	killed map[string][]slotRange // node's address → the slots it served when killed
}

// ClusterOption configures StartCluster.
type ClusterOption func(*clusterConfig)

type clusterConfig struct {
	nodeTimeout time.Duration
	wait        time.Duration
}

// WithNodeTimeout sets the nodes' cluster-node-timeout: how long a master
// must be unreachable before the others take it for failed and a replica
// of it takes over. The default is 1 s; zero or negative keeps it. A
// failover takes about twice the node timeout, plus up to a second of the
// replicas' election delay.
func WithNodeTimeout(d time.Duration) ClusterOption {
	return func(c *clusterConfig) {
		if d > 0 {
			c.nodeTimeout = d
		}
	}
}

// WithWaitTimeout sets how long StartCluster waits for the cluster to form,
// and WaitFailover for a replica to take over, before failing the test. The
// default is 30 s; zero or negative keeps it.
func WithWaitTimeout(d time.Duration) ClusterOption {
	return func(c *clusterConfig) {
		if d > 0 {
			c.wait = d
		}
	}
}

// StartCluster starts a Redis Cluster of masters masters, each with
// replicasPerMaster replicas, on free loopback ports, and waits until every
// node says cluster_state:ok, every node maps each of the 16384 slots to the
// same master, and every replica is in sync with its master
// (master_link_status:up). Each node runs as Start's server does (appendonly
// yes, appendfsync everysec, in a t.TempDir), with cluster-enabled yes, the
// node timeout of WithNodeTimeout, cluster-replica-validity-factor 0 so
// that a replica may always take over from its master, however long it was
// cut from it, and cluster-allow-replica-migration no. Replicas sync at
// once (repl-diskless-sync-delay 0) and are pinged each second
// (repl-ping-replica-period 1), so that a cluster of 3 masters and 3
// replicas starts in about 2.5 s. Every process is killed when t ends.
//
// A test that calls StartCluster is skipped when redis-server or redis-cli
// is not installed, except when the environment variable CI is set: then it
// fails.
func StartCluster(t testing.TB, masters, replicasPerMaster int, opts ...ClusterOption) *Cluster {
	t.Helper()
	if masters < 3 {
		// redis-cli --cluster create refuses fewer.
		t.Fatalf("StartCluster(%d, %d): a cluster needs at least 3 masters", masters, replicasPerMaster)
	}
	if replicasPerMaster < 0 {
		t.Fatalf("StartCluster(%d, %d): negative replicas", masters, replicasPerMaster)
	}
	cfg := clusterConfig{nodeTimeout: time.Second, wait: 30 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	server := lookPath(t, "redis-server")
	cli := lookPath(t, "redis-cli")
	c := &Cluster{t: t, timeout: cfg.wait, killed: map[string][]slotRange{}}
	n := masters * (1 + replicasPerMaster)
	for range n {
		dir := t.TempDir()
		s := start(t, server, []string{
			"--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes.conf"),
			"--cluster-node-timeout", strconv.FormatInt(cfg.nodeTimeout.Milliseconds(), 10),
			"--cluster-replica-validity-factor", "0",
			// A replica syncs at once rather than 5 s later, and its
			// master pings it each second rather than each 10 s: until
			// the first ping a fresh replica's offset is 0, and nodes do
			// not list it in CLUSTER SLOTS as a replica.
			"--repl-diskless-sync-delay", "0",
			"--repl-ping-replica-period", "1",
			// A master left without replicas keeps them so: replicas do
			// not wander to it, and a test knows which node follows which.
			"--cluster-allow-replica-migration", "no",
		}, true)
		c.nodes = append(c.nodes, s)
	}

	// redis-cli makes the first masters addresses the masters and gives
	// each replicasPerMaster of the others.
	args := []string{"--cluster", "create"}
	args = append(args, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicasPerMaster), "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), cfg.wait)
	defer cancel()
	out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if err := c.poll(cfg.wait, func() error { return c.formed(masters, replicasPerMaster) }); err != nil {
		t.Fatalf("cluster of %d masters and %d replicas each did not form in %v: %v", masters, replicasPerMaster, cfg.wait, err)
	}
	return c
}

// Addrs returns every node's "127.0.0.1:PORT", killed or not: the masters
// first, as created, then the replicas.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		addrs[i] = s.Addr()
	}
	return addrs
}

// Node returns the server of the node at addr, or nil if addr is none of
// the cluster's. Its Kill crashes the node (as KillMaster does, without
// noting which slots it served); its Restart brings it back on its files
// (nodes.conf among them), where it rejoins the cluster, as a replica if
// another node took over its slots meanwhile: WaitStable waits for that.
func (c *Cluster) Node(addr string) *Server {
	for _, s := range c.nodes {
		if s.Addr() == addr {
			return s
		}
	}
	return nil
}

// Masters returns the addresses of the masters that serve slots now, as a
// live node of the cluster sees them, in the order of their first slot. A
// failover changes them.
func (c *Cluster) Masters() []string {
	c.t.Helper()
	slots, err := c.slots()
	if err != nil {
		c.t.Fatalf("masters of the cluster: %v", err)
	}
	var masters []string
	for _, r := range slots {
		if !slices.Contains(masters, r.master) {
			masters = append(masters, r.master)
		}
	}
	return masters
}

// MasterOf returns the address of the master that serves key's slot now,
// as a live node of the cluster sees it.
func (c *Cluster) MasterOf(key string) string {
	c.t.Helper()
	addr, err := c.anyLive()
	if err != nil {
		c.t.Fatal(err)
	}
	v, err := do(addr, "CLUSTER", "KEYSLOT", key)
	if err != nil {
		c.t.Fatalf("CLUSTER KEYSLOT %q on %s: %v", key, addr, err)
	}
	slot, _ := v.(int64)
	slots, err := c.slots()
	if err != nil {
		c.t.Fatalf("master of %q: %v", key, err)
	}
	for _, r := range slots {
		if r.from <= slot && slot <= r.to {
			return r.master
		}
	}
	c.t.Fatalf("master of %q: no node serves its slot %d", key, slot)
	return ""
}

// KeysPerMaster returns, for each master that serves slots now, how many of
// its keys match the glob pattern (SCAN MATCH pattern on it).
func (c *Cluster) KeysPerMaster(pattern string) map[string]int {
	c.t.Helper()
	counts := map[string]int{}
	for _, m := range c.Masters() {
		n, err := countKeys(m, pattern)
		if err != nil {
			c.t.Fatalf("SCAN MATCH %q on %s: %v", pattern, m, err)
		}
		counts[m] = n
	}
	return counts
}

// KillMaster kills the node at addr with SIGKILL, as a crash would, once it
// has noted which slots the node served. WaitFailover(t, addr) then waits
// until a replica of it serves them. It fails the test if addr is none of
// the cluster's nodes.
func (c *Cluster) KillMaster(addr string) {
	c.t.Helper()
	s := c.Node(addr)
	if s == nil {
		c.t.Fatalf("KillMaster(%s): not a node of the cluster %v", addr, c.Addrs())
	}
	slots, err := c.slots()
	if err != nil {
		c.t.Fatalf("KillMaster(%s): %v", addr, err)
	}
	var served []slotRange
	for _, r := range slots {
		if r.master == addr {
			served = append(served, r)
		}
	}
	c.mu.Lock()
	c.killed[addr] = served
	c.mu.Unlock()
	s.Kill()
}

// WaitFailover waits until the slots that the node at addr served when
// KillMaster killed it are served by another node, as every live node sees
// it, every live node says cluster_state:ok, and every live node maps the
// slots alike; it returns the address of the node that took over (empty
// if the killed node served no slot: a replica). It fails t if that takes
// longer than the wait timeout (30 s by default; see WithWaitTimeout), as
// it will when the killed master had no replica.
func (c *Cluster) WaitFailover(t testing.TB, addr string) string {
	t.Helper()
	c.mu.Lock()
	served, ok := c.killed[addr]
	c.mu.Unlock()
	if !ok {
		t.Fatalf("WaitFailover(%s): KillMaster did not kill it", addr)
	}
	var promoted string
	err := c.poll(c.timeout, func() error {
		promoted = ""
		if err := c.agreed(); err != nil {
			return err
		}
		slots, err := c.slots()
		if err != nil {
			return err
		}
		for _, want := range served {
			for _, r := range slots {
				if r.to < want.from || r.from > want.to {
					continue
				}
				if r.master == addr {
					return fmt.Errorf("slots %d-%d still served by %s", r.from, r.to, addr)
				}
				if promoted != "" && promoted != r.master {
					return fmt.Errorf("slots of %s served by %s and %s", addr, promoted, r.master)
				}
				promoted = r.master
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("no failover of %s in %v: %v", addr, c.timeout, err)
	}
	return promoted
}

// WaitStable waits until every live node says cluster_state:ok, every live
// node maps each slot to the same master, and every live replica is in
// sync with its master: after a node's Restart, say, which rejoins the
// cluster. It fails t if that takes longer than the wait timeout (30 s by
// default; see WithWaitTimeout).
func (c *Cluster) WaitStable(t testing.TB) {
	t.Helper()
	err := c.poll(c.timeout, func() error {
		if err := c.agreed(); err != nil {
			return err
		}
		return c.synced()
	})
	if err != nil {
		t.Fatalf("cluster not stable in %v: %v", c.timeout, err)
	}
}

// poll calls check until it returns nil, for at most d, and returns its
// last error otherwise.
func (c *Cluster) poll(d time.Duration, check func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// formed reports, as an error, what keeps the cluster from being formed:
// masters masters, each with replicas replicas in sync, and every node in
// agreement.
func (c *Cluster) formed(masters, replicas int) error {
	if err := c.agreed(); err != nil {
		return err
	}
	slots, err := c.slots()
	if err != nil {
		return err
	}
	perMaster := map[string]int{}
	for _, r := range slots {
		perMaster[r.master] = len(r.replicas)
	}
	if len(perMaster) != masters {
		return fmt.Errorf("%d masters serve slots, want %d", len(perMaster), masters)
	}
	for m, n := range perMaster {
		if n != replicas {
			return fmt.Errorf("master %s has %d replicas, want %d", m, n, replicas)
		}
	}
	return c.synced()
}

// synced reports, as an error, a live replica not in sync with its master.
func (c *Cluster) synced() error {
	for _, s := range c.live() {
		v, err := do(s.Addr(), "INFO", "replication")
		if err != nil {
			return fmt.Errorf("INFO replication on %s: %v", s.Addr(), err)
		}
		info, _ := v.(string)
		if strings.Contains(info, "role:slave") && !strings.Contains(info, "master_link_status:up") {
			return fmt.Errorf("replica %s not in sync with its master", s.Addr())
		}
	}
	return nil
}

// agreed reports, as an error, what keeps the live nodes from agreeing on
// a cluster that serves every slot: a node whose cluster_state is not ok,
// or whose map of slots to masters differs from the others'.
func (c *Cluster) agreed() error {
	var first []slotRange
	var firstAddr string
	for _, s := range c.live() {
		v, err := do(s.Addr(), "CLUSTER", "INFO")
		if err != nil {
			return fmt.Errorf("CLUSTER INFO on %s: %v", s.Addr(), err)
		}
		info, _ := v.(string)
		if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_assigned:16384") {
			return fmt.Errorf("%s: cluster not ok", s.Addr())
		}
		slots, err := slotsOf(s.Addr())
		if err != nil {
			return err
		}
		if first == nil {
			first, firstAddr = slots, s.Addr()
			continue
		}
		if !slices.EqualFunc(first, slots, func(a, b slotRange) bool {
			return a.from == b.from && a.to == b.to && a.master == b.master
		}) {
			return fmt.Errorf("%s and %s map the slots apart", firstAddr, s.Addr())
		}
	}
	if first == nil {
		return errors.New("no live node")
	}
	return nil
}

// live returns the nodes not killed.
func (c *Cluster) live() []*Server {
	var live []*Server
	for _, s := range c.nodes {
		s.mu.Lock()
		up := s.cmd != nil
		s.mu.Unlock()
		if up {
			live = append(live, s)
		}
	}
	return live
}

// anyLive returns the address of a live node.
func (c *Cluster) anyLive() (string, error) {
	live := c.live()
	if len(live) == 0 {
		return "", errors.New("every node of the cluster is killed")
	}
	return live[0].Addr(), nil
}

// slots returns the slot map of a live node.
func (c *Cluster) slots() ([]slotRange, error) {
	addr, err := c.anyLive()
	if err != nil {
		return nil, err
	}
	return slotsOf(addr)
}

// slotRange is one entry of CLUSTER SLOTS: the slots from..to (inclusive)
// and the nodes that serve them.
type slotRange struct {
	from, to int64
	master   string
	replicas []string
}

// slotsOf returns the node at addr's CLUSTER SLOTS, sorted by first slot.
func slotsOf(addr string) ([]slotRange, error) {
	v, err := do(addr, "CLUSTER", "SLOTS")
	if err != nil {
		return nil, fmt.Errorf("CLUSTER SLOTS on %s: %v", addr, err)
	}
	entries, _ := v.([]any)
	var ranges []slotRange
	for _, e := range entries {
		f, _ := e.([]any)
		if len(f) < 3 {
			return nil, fmt.Errorf("CLUSTER SLOTS on %s: entry %v", addr, e)
		}
		var r slotRange
		r.from, _ = f[0].(int64)
		r.to, _ = f[1].(int64)
		for i, n := range f[2:] {
			nf, _ := n.([]any)
			if len(nf) < 2 {
				return nil, fmt.Errorf("CLUSTER SLOTS on %s: node %v", addr, n)
			}
			host, _ := nf[0].(string)
			port, _ := nf[1].(int64)
			a := net.JoinHostPort(host, strconv.FormatInt(port, 10))
			if i == 0 {
				r.master = a
			} else {
				r.replicas = append(r.replicas, a)
			}
		}
		ranges = append(ranges, r)
	}
	slices.SortFunc(ranges, func(a, b slotRange) int { return int(a.from - b.from) })
	return ranges, nil
}

// countKeys counts the keys of the node at addr that match pattern.
func countKeys(addr, pattern string) (int, error) {
	cursor, n := "0", 0
	for {
		v, err := do(addr, "SCAN", cursor, "MATCH", pattern, "COUNT", "1000")
		if err != nil {
			return 0, err
		}
		f, _ := v.([]any)
		if len(f) != 2 {
			return 0, fmt.Errorf("SCAN reply %v", v)
		}
		cursor, _ = f[0].(string)
		keys, _ := f[1].([]any)
		n += len(keys)
		if cursor == "0" {
			return n, nil
		}
	}
}

// do sends one command to the Redis server at addr, on a connection of its
// own, and returns its reply: a string (simple or bulk), an int64, an
// []any, or nil; a Redis error reply is returned as an error.
func do(addr string, args ...string) (any, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c, b.String()); err != nil {
		return nil, err
	}
	v, err := readReply(bufio.NewReader(c))
	if e, ok := v.(redisError); ok {
		return nil, e
	}
	return v, err
}

// readReply reads one RESP2 reply from r. An error reply is a value of
// type redisError, so that one inside an array does not end the reading.
func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return nil, fmt.Errorf("malformed reply %q", line)
	}
	kind, rest := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return rest, nil
	case '-':
		return redisError(rest), nil
	case ':':
		return strconv.ParseInt(rest, 10, 64)
	case '$':
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 {
			return nil, err
		}
		body := make([]byte, n+2)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, err
		}
		return string(body[:n]), nil
	case '*':
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 {
			return nil, err
		}
		a := make([]any, n)
		for i := range a {
			if a[i], err = readReply(r); err != nil {
				return nil, err
			}
		}
		return a, nil
	}
	return nil, fmt.Errorf("malformed reply %q", line)
}

// redisError is an error reply of Redis.
type redisError string

func (e redisError) Error() string { return string(e) }

// ReplicasOf returns the addresses of the replicas the master at addr has
// now (INFO replication).
func (c *Cluster) ReplicasOf(addr string) []string {
	c.t.Helper()
	v, err := do(addr, "INFO", "replication")
	if err != nil {
		c.t.Fatalf("replicas of %s: %v", addr, err)
	}
	info, _ := v.(string)
	var out []string
	for _, line := range strings.Split(info, "\n") {
		// slave0:ip=127.0.0.1,port=30005,state=online,offset=...
		if !strings.HasPrefix(line, "slave") || !strings.Contains(line, ":ip=") {
			continue
		}
		var ip, port string
		for _, kv := range strings.Split(line[strings.IndexByte(line, ':')+1:], ",") {
			k, val, _ := strings.Cut(strings.TrimSpace(kv), "=")
			switch k {
			case "ip":
				ip = val
			case "port":
				port = val
			}
		}
		out = append(out, net.JoinHostPort(ip, port))
	}
	return out
}
