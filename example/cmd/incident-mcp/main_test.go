package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/redistest"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
)

// The test binary runs itself as the command (stringer's trick): no build.
func TestMain(m *testing.M) {
	if os.Getenv("INCIDENT_MCP_AS_COMMAND") == "1" {
		os.Exit(run(os.Args[1:], os.Stderr))
	}
	os.Exit(m.Run())
}

// startServer runs the command with args and returns the URL it serves.
func startServer(t testing.TB, args ...string) string {
	t.Helper()
	url, _ := startServerProcess(t, args...)
	return url
}

// startServerProcess also returns the server's process id.
func startServerProcess(t testing.TB, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "INCIDENT_MCP_AS_COMMAND=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, url, ok := strings.Cut(sc.Text(), "Streamable HTTP on "); ok {
				found <- url
			}
		}
	}()
	select {
	case url := <-found:
		return url, cmd.Process.Pid
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not start")
		return "", 0
	}
}

func writeFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	aliceToken = "alice-token-0123456789"
	grantKey   = "replicas share this grant key: 32+ bytes"
)

// balancer sends each request to the next replica in turn, as a load
// balancer would, with the client's bearer token; it remembers who served
// the last request.
type balancer struct {
	mu       sync.Mutex
	replicas []string
	next     int
	last     string
}

func (b *balancer) RoundTrip(req *http.Request) (*http.Response, error) {
	b.mu.Lock()
	target := b.replicas[b.next%len(b.replicas)]
	b.next++
	b.last = target
	b.mu.Unlock()
	req = req.Clone(req.Context())
	req.URL.Host = strings.TrimSuffix(strings.TrimPrefix(target, "http://"), "/")
	req.Host = ""
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	return http.DefaultTransport.RoundTrip(req)
}

func (b *balancer) lastReplica() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

// Two stateless replicas behind one (simulated) load balancer, sharing one
// Redis for grants and writes' outcomes: one client's calls alternate
// between them and each gets its right result; a write approved and run
// on one replica, sent again with its grant, runs on neither and gets its
// first result; the grant runs no other call.
func TestTwoReplicasBehindALoadBalancer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Redis and two servers")
	}
	rdb := redistest.Start(t)
	tokens := writeFile(t, "tokens.txt", aliceToken+" alice acme oncall\n")
	key := writeFile(t, "grant.key", grantKey)
	args := []string{"-http", "127.0.0.1:0", "-stateless", "-tokens", tokens, "-grant-key", key, "-redis", rdb.Addr}
	lb := &balancer{replicas: []string{startServer(t, args...), startServer(t, args...)}}

	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "scale-out", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: "http://balancer.invalid/", HTTPClient: &http.Client{Transport: lb}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	served := map[string]int{}
	for i := range 6 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup_incident", Arguments: map[string]any{"incident_id": "INC-001"}})
		if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"auth-api"`) {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
		served[lb.lastReplica()]++
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup_incident", Arguments: map[string]any{"incident_id": "nope"}})
		if err != nil || resultOf(t, res).Code() != runtime.CodeInvalidArguments {
			t.Fatalf("invalid call %d: %v %+v", i, err, res)
		}
		served[lb.lastReplica()]++
	}
	if len(served) != 2 || served[lb.replicas[0]] != served[lb.replicas[1]] {
		t.Fatalf("calls per replica: %v", served)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "delete_prod", Arguments: map[string]any{}})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("unknown tool: %v", err)
	}

	// The approval loop across replicas.
	write := func(meta mcp.Meta) (runtime.ToolResult, string) {
		params := &mcp.CallToolParams{Name: "create_ticket", Arguments: map[string]any{"incident_id": "INC-001", "summary": "raise pool size"}, Meta: meta}
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			data, _ := json.Marshal(res.StructuredContent)
			return runtime.ToolResult{OK: true, Data: data}, lb.lastReplica()
		}
		return resultOf(t, res), lb.lastReplica()
	}
	r, _ := write(mcp.Meta{"keel/call_id": "ticket-1"})
	if r.Code() != runtime.CodeApprovalRequired || r.Error.Approval == nil || r.Error.Approval.CallID != "ticket-1" {
		t.Fatalf("write without a grant: %+v", r.Error)
	}
	grant, err := grant.Issue(grant.HMACKey([]byte(grantKey)), r.Error.Approval.Grant("acme", "alice", time.Now().Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	meta := mcp.Meta{"keel/call_id": "ticket-1", "keel/grant": grant}
	ran, on := write(meta)
	if !ran.OK {
		t.Fatalf("write with its grant: %+v", ran.Error)
	}
	// Sent again (its answer lost, say) to the other replica, where its used
	// grant runs nothing: the first call's result, recorded under its
	// keel/call_id. On the replica that ran it, the same: no second ticket.
	for range 2 {
		replay, replayedOn := write(meta)
		if !replay.OK || string(replay.Data) != string(ran.Data) || !strings.Contains(string(ran.Data), `"TCK-`) {
			t.Fatalf("the write sent again on %s after it ran on %s: %+v, want its first result %s", replayedOn, on, replay, ran.Data)
		}
	}
	// A grant for ticket-1 does not run another call of the same arguments.
	other, _ := write(mcp.Meta{"keel/call_id": "ticket-2", "keel/grant": grant})
	if other.Code() != runtime.CodeApprovalRequired {
		t.Fatalf("a grant ran another call: %+v", other)
	}
}

func resultOf(t *testing.T, res *mcp.CallToolResult) runtime.ToolResult {
	t.Helper()
	var r runtime.ToolResult
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A non-loopback address without tokens is refused at start, unless the
// owner says it is unsafe.
func TestNonLoopbackNeedsAuth(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:80"} {
		if code := run([]string{"-http", addr}, io.Discard); code != 2 {
			t.Errorf("-http %s without -tokens: exit %d, want 2", addr, code)
		}
	}
	if _, err := parse([]string{"-http", "0.0.0.0:0", "-insecure-no-auth"}, io.Discard); err != nil {
		t.Errorf("-insecure-no-auth: %v", err)
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		if _, err := parse([]string{"-http", addr}, io.Discard); err != nil {
			t.Errorf("-http %s: %v", addr, err)
		}
	}
}
