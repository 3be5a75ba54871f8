package approvecall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/approvecall"
	"github.com/keelgen/keel/runtime/grant"
	"github.com/keelgen/keel/runtime/keeltest"
)

// A write waits while a person is asked: the Approver reads the
// executor's question, and a yes is a grant of exactly that call, which
// runs it once.
func ExampleRun() {
	key := grant.HMACKey([]byte("an example secret of at least 32 bytes!"))
	refund := runtime.NewTool(runtime.ToolInfo{Name: "refund", Version: "1", Effect: runtime.EffectWrite, Description: "Refunds an order.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["order_id"],"properties":{"order_id":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, in struct {
			OrderID string `json:"order_id"`
		}) (map[string]string, error) {
			return map[string]string{"refunded": in.OrderID}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(refund), runtime.WithApprovals(key, memstore.NewReplayStore()),
		runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	ec := runtime.ExecutionContext{Tenant: "acme", Principal: "alice"}
	person := func(_ context.Context, req runtime.ApprovalRequest) (string, error) {
		fmt.Println(strings.Split(req.Question, "\n")[0]) // the whole call, as a person reads it
		return grant.Issue(key, req.Grant(ec.Tenant, ec.Principal, time.Now().Add(time.Minute)))
	}
	call := runtime.ToolCall{ID: "call-9", Name: "refund", Arguments: json.RawMessage(`{"order_id":"ORD-9"}`)}
	r := approvecall.Run(context.Background(), exec, ec, call, person)
	fmt.Println(r.OK, string(r.Data))
	// Output:
	// Approve this call?
	// true {"refunded":"ORD-9"}
}
