package redisfrontier

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// TestAnsweringByCall: the server hangs when one call in flight has
// waited silenceLimit with no reply, whatever the other calls hear (in a
// cluster, the masters that answer must not hide the one that hangs); a
// reply to that call, an error or not, starts its wait anew; and a call
// done no longer counts. The clock is moved by hand: no sleep.
func TestAnsweringByCall(t *testing.T) {
	f := New(nil, &Options{Name: "answering"})
	if !f.answering() {
		t.Fatal("no call in flight: answering false, want true")
	}
	hung, fresh := f.waiting(), f.waiting()
	f.wmu.Lock()
	f.waits[hung] = time.Now().Add(-silenceLimit - time.Second).UnixNano()
	f.wmu.Unlock()
	f.heard(fresh)
	if f.answering() {
		t.Error("one call waited past silenceLimit while another had a reply: answering true, want false")
	}
	f.heard(hung)
	if !f.answering() {
		t.Error("the call that waited had a reply: answering false, want true")
	}
	f.wmu.Lock()
	f.waits[hung] = time.Now().Add(-silenceLimit - time.Second).UnixNano()
	f.wmu.Unlock()
	f.waited(hung)
	f.heard(hung) // a late reply to a call done changes nothing
	if !f.answering() {
		t.Error("the call that waited is done: answering false, want true")
	}
	f.waited(fresh)
}

// TestAnsweringByNode: a node (a cluster's master) whose last call failed
// on the network, or waited silenceLimit and was cut by its ctx, does not
// answer until a call to it has a reply: the replies of other masters do
// not say it is back (a Ctrl-C with a master stopped waited for it again
// at Close, 5 s, after a read from another had succeeded). A call cut
// short by its ctx says nothing; a reply of every node (allNodes) says
// that each answers; a node asked nothing for muteMemory is forgotten.
func TestAnsweringByNode(t *testing.T) {
	f := New(nil, &Options{Name: "answering"})
	ctx := context.Background()
	cut, cancel := context.WithCancel(ctx)
	cancel()
	reply := replyError("ERR no such thing")
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	steps := []struct {
		node    string
		ctx     context.Context
		err     error
		waited  time.Duration
		want    bool
		comment string
	}{
		{"a", ctx, refused, 0, false, "a refused a connection"},
		{"b", ctx, nil, 0, false, "b answers: a still does not"},
		{"b", ctx, reply, 0, false, "b replies an error: a still does not"},
		{"a", ctx, reply, 0, true, "a replies an error: it answers"},
		{"a", cut, timeout, time.Second, true, "a call to a cut by its ctx after 1 s: nothing said"},
		{"a", cut, timeout, silenceLimit, false, "a call to a cut by its ctx after silenceLimit: a hangs"},
		{"a", cut, context.Canceled, 0, false, "a call to a cut at once: a still hangs"},
		{"b", ctx, refused, 0, false, "b refused too"},
		{"a", ctx, nil, 0, false, "a answers: b still does not"},
		{allNodes, ctx, nil, 0, true, "every node answered one call"},
		{allNodes, ctx, refused, 0, false, "a call of every node failed"},
		{"a", ctx, nil, 0, false, "a answers: not known of the others"},
		{allNodes, ctx, nil, 0, true, "every node answered one call"},
	}
	for _, s := range steps {
		f.noteReach(s.ctx, s.node, s.err, s.waited)
		if got := f.answering(); got != s.want {
			t.Errorf("%s: answering %v, want %v", s.comment, got, s.want)
		}
	}
	// A master that failed over is asked nothing more: forgotten after
	// muteMemory.
	f.noteReach(ctx, "a", refused, 0)
	f.wmu.Lock()
	f.mute["a"] = time.Now().Add(-muteMemory + time.Second)
	f.wmu.Unlock()
	if f.answering() {
		t.Error("a refused a call muteMemory less 1 s ago: answering true, want false")
	}
	f.wmu.Lock()
	f.mute["a"] = time.Now().Add(-muteMemory)
	f.wmu.Unlock()
	if !f.answering() {
		t.Error("a refused a call muteMemory ago, and was asked nothing since: answering false, want true")
	}
}

// replyError is an error the server replied (a redis.Error).
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}
