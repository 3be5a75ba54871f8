package mcpserver_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/redisreplay"
	"github.com/keelgen/keel/redistest"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// A write whose client named its call (_meta keel/call_id) runs once
// across two replicas on one Redis, though the client dropped its
// connection mid-call and sent the call again to the other replica: while
// it runs the copy is call_in_progress, and once it ended the copy gets
// its result. Nothing ran twice.
func TestAWriteSentAgainAfterADroppedConnectionRunsOnce(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t)
	var runs atomic.Int32
	started, gate := make(chan struct{}, 1), make(chan struct{})
	charge := runtime.NewTool(runtime.ToolInfo{Name: "charge", Version: "1", Effect: runtime.EffectWrite, Description: "Charges an account.", Timeout: 10 * time.Second,
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["cents"],"properties":{"cents":{"type":"integer"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["receipt"],"properties":{"receipt":{"type":"integer"}}}`)},
		runtime.Handle(func(context.Context, struct {
			Cents int `json:"cents"`
		}) (map[string]int32, error) {
			n := runs.Add(1)
			started <- struct{}{}
			<-gate // the charge is under way: it ends whatever the client does
			return map[string]int32{"receipt": n}, nil
		}))
	allow := runtime.PolicyFunc(func(context.Context, runtime.PolicyRequest) runtime.Decision { return runtime.Decision{Allow: true} })
	replica := func() string {
		store, err := redisreplay.New(rdb.Client(), redisreplay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		exec, err := runtime.NewExecutor(keeltest.Of(charge), runtime.WithLogger(slog.New(slog.DiscardHandler)),
			runtime.WithPolicy(allow), runtime.WithOutcomes(store, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return serve(t, mcpserver.New(exec, mcpserver.Options{}), mcpserver.HTTPOptions{Stateless: true}).URL
	}
	a, b := replica(), replica()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{},"keel/call_id":"pay-7"},"name":"charge","arguments":{"cents":500}}}`
	headers := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "charge"}
	call := func(url string) (reply struct {
		Result struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			Content           []struct{ Text string }
		}
	}) {
		t.Helper()
		r := post(t, url, body, headers)
		if err := json.Unmarshal([]byte(r.body), &reply); err != nil {
			t.Fatalf("%d %s", r.status, r.body)
		}
		return reply
	}

	ctx, drop := context.WithCancel(context.Background())
	dropped := make(chan struct{})
	go func() {
		defer close(dropped)
		resp, err := sendQuiet(ctx, a, body, headers)
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	drop() // the connection is gone; the charge goes on
	<-dropped
	if r := call(b); !r.Result.IsError || len(r.Result.Content) != 1 || !strings.Contains(r.Result.Content[0].Text, `"code":"call_in_progress"`) {
		t.Fatalf("the call sent again while it runs: %+v", r)
	}
	close(gate)
	var r = call(b)
	for deadline := time.Now().Add(10 * time.Second); r.Result.IsError && time.Now().Before(deadline); r = call(b) {
		time.Sleep(10 * time.Millisecond) // the first replica records the end as the handler returns
	}
	if r.Result.IsError || string(r.Result.StructuredContent) != `{"receipt":1}` || runs.Load() != 1 {
		t.Fatalf("the call sent again once the charge ended: %+v; the handler ran %d times", r, runs.Load())
	}
	if r := call(a); string(r.Result.StructuredContent) != `{"receipt":1}` || runs.Load() != 1 {
		t.Fatalf("the first replica: %+v; the handler ran %d times", r, runs.Load())
	}
}
