package redisfrontier

import (
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
	f.unreachable.Store(true)
	if f.answering() {
		t.Error("last call failed on the network: answering true, want false")
	}
	f.waited(fresh)
}
