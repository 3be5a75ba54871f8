package approvalstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/keelgen/keel/mcpserver/approvalstore"
	"github.com/keelgen/keel/runtime"
)

// A call waits once, however often it is sent; an approver decides it
// once; the approved call is handed out once.
func ExampleMemory() {
	ctx := context.Background()
	store := approvalstore.NewMemory()
	req := runtime.ApprovalRequest{Tool: "create_ticket", Version: "1.0", CallID: "call-1", ArgumentsDigest: "sha256:…"}
	key := approvalstore.Key("acme", "alice", req)
	now := time.Now()
	first, _ := store.Pending(ctx, approvalstore.Approval{ID: "a1", Key: key, Request: req, Tenant: "acme", Principal: "alice", Created: now, Expires: now.Add(time.Hour)})
	again, _ := store.Pending(ctx, approvalstore.Approval{ID: "a2", Key: key, Request: req, Tenant: "acme", Principal: "alice", Created: now, Expires: now.Add(time.Hour)})
	fmt.Println(first.ID, again.ID)
	_, decided, _ := store.Decide(ctx, "a1", "approved", "lead", "grant-token")
	_, twice, _ := store.Decide(ctx, "a1", "denied", "lead", "")
	fmt.Println(decided, twice)
	_, taken, _ := store.TakeApproved(ctx, key)
	_, takenAgain, _ := store.TakeApproved(ctx, key)
	fmt.Println(taken, takenAgain)
	// Output:
	// a1 a1
	// true false
	// true false
}
