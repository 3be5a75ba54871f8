package redisapprovals_test

import (
	"context"
	"errors"
	"fmt"
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
	if waiting, err := b.Waiting(ctx, "acme", 10); err != nil || len(waiting) != 1 || waiting[0].ID != "p1" {
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
	if waiting, _ := a.Waiting(ctx, "acme", 10); len(waiting) != 0 {
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

// Every store keel ships bounds each caller and lists by tenant: one
// caller's flood is refused at approvalstore.MaxPerCaller while another
// caller of its tenant still gets an address; another tenant's waiting
// call is listed for its tenant whatever the flood, and never for the
// flooding tenant; a decided approval frees its caller's place.
func TestEachCallerIsBoundedAndEachTenantListed(t *testing.T) {
	rdb := redistest.Start(t)
	onRedis, err := redisapprovals.New(rdb.Client(), redisapprovals.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]approvalstore.Store{"memory": approvalstore.NewMemory(), "redis": onRedis} {
		ctx := context.Background()
		as := func(id, tenant, principal string) approvalstore.Approval {
			a := approval(id, "key-"+id, time.Minute)
			a.Tenant, a.Principal = tenant, principal
			return a
		}
		if _, err := s.Pending(ctx, as("other", "globex", "bob")); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range approvalstore.MaxPerCaller {
			if _, err := s.Pending(ctx, as(fmt.Sprint("flood-", i), "acme", "mallory")); err != nil {
				t.Fatalf("%s: approval %d of one caller: %v", name, i, err)
			}
		}
		if _, err := s.Pending(ctx, as("flood-over", "acme", "mallory")); !errors.Is(err, approvalstore.ErrCallerFull) {
			t.Errorf("%s: one more of the flooding caller: %v", name, err)
		}
		// A principal whose name ends as another's tenant begins is another caller.
		if _, err := s.Pending(ctx, as("neighbour", "acmem", "allory")); err != nil {
			t.Errorf("%s: another caller: %v", name, err)
		}
		if _, err := s.Pending(ctx, as("colleague", "acme", "alice")); err != nil {
			t.Errorf("%s: another caller of the tenant: %v", name, err)
		}
		globex, err := s.Waiting(ctx, "globex", 400)
		if err != nil || len(globex) != 1 || globex[0].ID != "other" {
			t.Errorf("%s: globex's list: %d %v", name, len(globex), err)
		}
		acme, err := s.Waiting(ctx, "acme", 1000)
		if err != nil || len(acme) != approvalstore.MaxPerCaller+1 {
			t.Errorf("%s: acme's list: %d %v", name, len(acme), err)
		}
		for _, a := range acme {
			if a.Tenant != "acme" {
				t.Errorf("%s: acme's list holds %s of %s", name, a.ID, a.Tenant)
			}
		}
		if _, ok, err := s.Decide(ctx, "flood-0", "denied", "lead", ""); !ok || err != nil {
			t.Fatalf("%s: decide: %v %v", name, ok, err)
		}
		if _, err := s.Pending(ctx, as("flood-again", "acme", "mallory")); err != nil {
			t.Errorf("%s: a place freed by a decision: %v", name, err)
		}
	}
}
