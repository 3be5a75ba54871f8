package approvalstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/keelgen/keel/mcpserver/approvalstore"
	"github.com/keelgen/keel/runtime"
)

// The approval page's life of one call: it waits (sent twice, it waits
// once), an approver decides it once, and the approved call takes its
// grant once (this store serves one process; redisapprovals serves
// several).
func ExampleMemory() {
	store := approvalstore.NewMemory()
	ctx := context.Background()
	req := runtime.ApprovalRequest{CallID: "call-1", Tool: "refund", Version: "1", ArgumentsDigest: "sha256:…"}
	key := approvalstore.Key("acme", "alice", req)
	now := time.Now()
	waiting := approvalstore.Approval{ID: "a1", Key: key, Request: req, Tenant: "acme", Principal: "alice", Created: now, Expires: now.Add(10 * time.Minute)}
	first, _ := store.Pending(ctx, waiting)
	waiting.ID = "a2"
	again, _ := store.Pending(ctx, waiting)
	fmt.Println(first.ID, again.ID)

	_, decided, _ := store.Decide(ctx, "a1", "approved", "lead", "grant-token")
	_, twice, _ := store.Decide(ctx, "a1", "denied", "lead", "")
	fmt.Println(decided, twice)

	taken, ok, _ := store.TakeApproved(ctx, key)
	_, more, _ := store.TakeApproved(ctx, key)
	fmt.Println(ok, taken.Grant, more)
	// Output:
	// a1 a1
	// true false
	// true grant-token false
}
