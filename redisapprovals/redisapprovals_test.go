package redisapprovals_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keelgen/keel/mcpserver/approvalstore"
	"github.com/keelgen/keel/redisapprovals"
	"github.com/keelgen/keel/redistest"
	"github.com/keelgen/keel/runtime"
)

func approval(id, key string, ttl time.Duration) approvalstore.Approval {
	now := time.Now()
	return approvalstore.Approval{ID: id, Key: key, Tenant: "acme", Principal: "alice", Created: now, Expires: now.Add(ttl),
		Request: runtime.ApprovalRequest{Tool: "create_ticket", Version: "1.0", CallID: "call-" + id, ArgumentsDigest: "sha256:" + key, Question: "Approve this call?"}}
}

// Two replicas on one Redis: a call waits once whichever sends it; one
// decision of many racing on both replicas wins, and a second is refused;
// the approved call is handed out once of many racing takes; an expired
// approval is gone.
func TestReplicasShareApprovals(t *testing.T) {
	rdb := redistest.Start(t)
	var replicas [2]*redisapprovals.Store
	for i := range replicas {
		s, err := redisapprovals.New(rdb.Client(), redisapprovals.Options{})
		if err != nil {
			t.Fatal(err)
		}
		replicas[i] = s
	}
	a, b := replicas[0], replicas[1]
	ctx := context.Background()
	first, err := a.Pending(ctx, approval("p1", "k1", time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	again, err := b.Pending(ctx, approval("p2", "k1", time.Minute))
	if err != nil || again.ID != first.ID || again.Request.Question != "Approve this call?" {
		t.Fatalf("the same call sent to the other replica: %+v %v", again, err)
	}
	if waiting, err := b.Waiting(ctx, 10); err != nil || len(waiting) != 1 || waiting[0].ID != "p1" {
		t.Fatalf("waiting: %+v %v", waiting, err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if _, ok, err := replicas[i%2].Decide(ctx, "p1", "approved", "lead", "grant-p1"); err == nil && ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d decisions won", wins.Load())
	}
	if got, err := a.Approval(ctx, "p1"); err != nil || got.Decision != "approved" || got.Approver != "lead" || got.Grant != "grant-p1" {
		t.Fatalf("the decided approval: %+v %v", got, err)
	}
	if waiting, _ := a.Waiting(ctx, 10); len(waiting) != 0 {
		t.Errorf("a decided approval still waits: %+v", waiting)
	}
	var taken atomic.Int32
	for i := range 20 {
		wg.Go(func() {
			if p, ok, err := replicas[i%2].TakeApproved(ctx, "k1"); err == nil && ok && p.Grant == "grant-p1" {
				taken.Add(1)
			}
		})
	}
	wg.Wait()
	if taken.Load() != 1 {
		t.Fatalf("the approved call was handed out %d times", taken.Load())
	}
	next, err := b.Pending(ctx, approval("p3", "k1", time.Minute))
	if err != nil || next.ID != "p3" {
		t.Fatalf("the call sent once more waits anew: %+v %v", next, err)
	}
	if _, ok, err := a.Decide(ctx, "nope", "denied", "lead", ""); ok || err != approvalstore.ErrNoApproval {
		t.Errorf("deciding no approval: %v %v", ok, err)
	}
	short, _ := a.Pending(ctx, approval("p4", "k4", 50*time.Millisecond))
	time.Sleep(200 * time.Millisecond)
	if _, err := b.Approval(ctx, short.ID); err != approvalstore.ErrNoApproval {
		t.Errorf("an expired approval: %v", err)
	}
}

// Past MaxWaiting, a new approval is refused, and the others are served.
func TestWaitingIsBounded(t *testing.T) {
	rdb := redistest.Start(t)
	s, err := redisapprovals.New(rdb.Client(), redisapprovals.Options{MaxWaiting: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range []string{"w1", "w2"} {
		if _, err := s.Pending(ctx, approval(id, "key-"+id, time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Pending(ctx, approval("w3", "key-w3", time.Minute)); err == nil {
		t.Fatal("a third approval past a bound of two")
	}
	if got, err := s.Pending(ctx, approval("w4", "key-w1", time.Minute)); err != nil || got.ID != "w1" {
		t.Errorf("a call that waits already: %+v %v", got, err)
	}
	if _, err := redisapprovals.New(rdb.Client(), redisapprovals.Options{Prefix: "no-tag:"}); err == nil {
		t.Error("a prefix without a hash tag")
	}
}
