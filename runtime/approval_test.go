package runtime_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
	"github.com/keelgen/keel/runtime/keeltest"
)

const writeArgs = `{"text":"hi","count":2}`

// approvalFixture: the echo tool as a write tool, the default policy, grants
// signed with key.
func approvalFixture(t *testing.T, key grant.Key) (*fixture, string) {
	t.Helper()
	f := newFixture(t, runtime.EffectWrite, okEcho, runtime.WithApprovals(key, memstore.NewReplayStore()))
	digest, err := grant.ArgumentsDigest([]byte(writeArgs))
	if err != nil {
		t.Fatal(err)
	}
	return f, digest
}

func grantFor(t *testing.T, key grant.Key, digest string, change func(*grant.Grant)) string {
	t.Helper()
	g := grant.Grant{Tenant: "acme", Principal: "alice", CallID: "c1", Tool: "echo", Version: "2.1", ArgumentsDigest: digest, Expires: time.Now().Add(time.Minute)}
	if change != nil {
		change(&g)
	}
	tok, err := grant.Issue(key, g)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

var alice = runtime.ExecutionContext{Tenant: "acme", Principal: "alice"}

func withGrant(ec runtime.ExecutionContext, tok string) runtime.ExecutionContext {
	ec.Grant = tok
	return ec
}

func TestApprovalLoop(t *testing.T) {
	key := grant.HMACKey([]byte("harness secret: 32 bytes or more"))
	f, digest := approvalFixture(t, key)
	ctx := context.Background()

	// Refused, with the request a person approves.
	r := f.exec.Execute(ctx, alice, call(writeArgs))
	if r.Code() != runtime.CodeApprovalRequired || r.Error.Approval == nil {
		t.Fatalf("no approval request: %s", marshal(t, r))
	}
	if a := r.Error.Approval; a.Tool != "echo" || a.Version != "2.1" || a.CallID != "c1" || a.ArgumentsDigest != digest {
		t.Fatalf("approval request %+v", a)
	}
	// The same call with a grant for exactly it runs, once.
	tok := grantFor(t, key, digest, nil)
	if r := f.exec.Execute(ctx, withGrant(alice, tok), call(writeArgs)); !r.OK || f.handlerCalls.Load() != 1 {
		t.Fatalf("granted call: %s", marshal(t, r))
	}
	if r := f.exec.Execute(ctx, withGrant(alice, tok), call(writeArgs)); r.Code() != runtime.CodeApprovalRequired || f.handlerCalls.Load() != 1 {
		t.Fatalf("replayed grant: %s", marshal(t, r))
	}
	// Formatting does not change what was approved: same arguments, other bytes.
	tok = grantFor(t, key, digest, nil)
	if r := f.exec.Execute(ctx, withGrant(alice, tok), call(`{ "count": 2, "text": "hi" }`)); !r.OK {
		t.Fatalf("same arguments reformatted: %s", marshal(t, r))
	}
}

func TestGrantMismatches(t *testing.T) {
	key := grant.HMACKey([]byte("harness secret: 32 bytes or more"))
	other := grant.HMACKey([]byte("another secret, 32 bytes or more"))
	f, digest := approvalFixture(t, key)
	otherDigest, _ := grant.ArgumentsDigest([]byte(`{"text":"hi","count":3}`))
	cases := map[string]struct {
		tok string
		ec  runtime.ExecutionContext
	}{
		"other arguments": {grantFor(t, key, otherDigest, nil), alice},
		"other tool":      {grantFor(t, key, digest, func(g *grant.Grant) { g.Tool = "shout" }), alice},
		"other version":   {grantFor(t, key, digest, func(g *grant.Grant) { g.Version = "2.0" }), alice},
		"other call id":   {grantFor(t, key, digest, func(g *grant.Grant) { g.CallID = "c0" }), alice},
		"other tool set":  {grantFor(t, key, digest, func(g *grant.Grant) { g.SetDigest = "sha256:" + strings.Repeat("0", 64) }), alice},
		"other tenant":    {grantFor(t, key, digest, nil), runtime.ExecutionContext{Tenant: "globex", Principal: "alice"}},
		"other principal": {grantFor(t, key, digest, nil), runtime.ExecutionContext{Tenant: "acme", Principal: "mallory"}},
		"expired":         {grantFor(t, key, digest, func(g *grant.Grant) { g.Expires = time.Now().Add(-time.Second) }), alice},
		"wrong key":       {grantFor(t, other, digest, nil), alice},
		"garbage":         {"not-a-grant", alice},
	}
	altered := grantFor(t, key, digest, nil)
	payload, sig, _ := strings.Cut(altered, ".")
	b := []byte(payload)
	b[len(b)/2] ^= 1
	cases["altered"] = struct {
		tok string
		ec  runtime.ExecutionContext
	}{string(b) + "." + sig, alice}
	for name, c := range cases {
		r := f.exec.Execute(context.Background(), withGrant(c.ec, c.tok), call(writeArgs))
		if r.Code() != runtime.CodeApprovalRequired {
			t.Errorf("%s: %s", name, marshal(t, r))
		}
	}
	if n := f.handlerCalls.Load(); n != 0 {
		t.Fatalf("mismatched grants ran the handler %d times", n)
	}
}

// A grant cannot override a plain deny: only calls the policy sent for
// approval can be approved.
func TestGrantCannotOverrideDeny(t *testing.T) {
	key := grant.HMACKey([]byte("test grant key, 32 bytes or more"))
	deny := runtime.PolicyFunc(func(context.Context, runtime.PolicyRequest) runtime.Decision {
		return runtime.Decision{Reason: "never"}
	})
	f := newFixture(t, runtime.EffectWrite, okEcho, runtime.WithApprovals(key, memstore.NewReplayStore()), runtime.WithPolicy(deny))
	digest, _ := grant.ArgumentsDigest([]byte(writeArgs))
	r := f.exec.Execute(context.Background(), withGrant(alice, grantFor(t, key, digest, nil)), call(writeArgs))
	if r.Code() != runtime.CodeApprovalRequired || r.Error.Approval != nil || f.handlerCalls.Load() != 0 {
		t.Fatalf("deny with a grant: %s", marshal(t, r))
	}
}

func TestConcurrentRedemptionHasOneWinner(t *testing.T) {
	key := grant.HMACKey([]byte("test grant key, 32 bytes or more"))
	f, digest := approvalFixture(t, key)
	tok := grantFor(t, key, digest, nil)
	var ok atomic.Int32
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if f.exec.Execute(context.Background(), withGrant(alice, tok), call(writeArgs)).OK {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 || f.handlerCalls.Load() != 1 {
		t.Fatalf("%d calls ran on one grant", ok.Load())
	}
}

func TestEd25519Grants(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	approver := grant.Ed25519Key(priv)
	f, digest := approvalFixture(t, grant.Ed25519PublicKey(pub)) // the executor can verify, not issue
	if _, err := grant.Issue(grant.Ed25519PublicKey(pub), grant.Grant{}); err == nil {
		t.Fatal("a public key issued a grant")
	}
	if r := f.exec.Execute(context.Background(), withGrant(alice, grantFor(t, approver, digest, nil)), call(writeArgs)); !r.OK {
		t.Fatalf("ed25519 grant: %s", marshal(t, r))
	}
}

func TestAuditLogRecordsEveryCall(t *testing.T) {
	var audit bytes.Buffer
	key := grant.HMACKey([]byte("test grant key, 32 bytes or more"))
	f := newFixture(t, runtime.EffectWrite, okEcho, runtime.WithApprovals(key, memstore.NewReplayStore()),
		runtime.WithObserver(runtime.AuditLog(slog.New(slog.NewJSONHandler(&audit, nil)))))
	digest, _ := grant.ArgumentsDigest([]byte(writeArgs))
	ctx := context.Background()
	f.exec.Execute(ctx, alice, call(writeArgs))
	f.exec.Execute(ctx, withGrant(alice, grantFor(t, key, digest, nil)), call(writeArgs))
	f.exec.Execute(ctx, alice, call(`{"text":"HI"}`))
	f.exec.Execute(ctx, alice, runtime.ToolCall{ID: "u", Name: strings.Repeat("x", 5000)})
	f.exec.Refused(ctx, alice, runtime.ToolCall{ID: "r", Name: "echo"}, runtime.RefusedDuplicate)
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(audit.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, m)
	}
	if len(recs) != 5 {
		t.Fatalf("%d audit records for 4 calls and a refused message", len(recs))
	}
	want := []map[string]any{
		{"decision": "approval_required", "code": "approval_required", "arguments_digest": digest, "tenant": "acme", "principal": "alice", "version": "2.1"},
		{"decision": "approved", "code": "ok", "arguments_digest": digest},
		{"decision": "", "code": "invalid_arguments", "arguments_digest": ""},
		{"decision": "", "code": "unknown_tool", "version": ""},
		{"call_id": "r", "code": "refused_message", "refusal": "duplicate_member", "principal": "alice", "arguments_digest": ""},
	}
	for i, w := range want {
		for k, v := range w {
			if recs[i][k] != v {
				t.Errorf("record %d: %s = %v, want %v", i, k, recs[i][k], v)
			}
		}
		if strings.Contains(audit.String(), `"text":"hi"`) {
			t.Error("the audit log holds the arguments")
		}
	}
	if tool := recs[3]["tool"].(string); len(tool) > 132 {
		t.Errorf("unknown tool name logged at %d bytes", len(tool))
	}
}

// Every code the executor can return appears in the audit record of its call.
func TestAuditRecordForEachCode(t *testing.T) {
	t.Parallel() // waits on timers
	behaviours := map[runtime.Code]func(context.Context, echoArgs) (echoResult, error){
		"": okEcho,
		"text_not_found": func(context.Context, echoArgs) (echoResult, error) {
			return echoResult{}, runtime.Fail("text_not_found", "No.")
		},
		runtime.CodeToolInternalError: func(context.Context, echoArgs) (echoResult, error) { panic("boom") },
		runtime.CodeInvalidToolOutput: func(context.Context, echoArgs) (echoResult, error) { return echoResult{Level: "bad"}, nil },
		runtime.CodeToolTimeout: func(ctx context.Context, _ echoArgs) (echoResult, error) {
			<-ctx.Done()
			return echoResult{}, ctx.Err()
		},
	}
	for want, behave := range behaviours {
		var audit bytes.Buffer
		f := newFixture(t, runtime.EffectRead, behave, runtime.WithObserver(runtime.AuditLog(slog.New(slog.NewJSONHandler(&audit, nil)))))
		r := f.exec.Execute(context.Background(), alice, call(`{"text":"hi"}`))
		var rec map[string]any
		if err := json.Unmarshal(audit.Bytes(), &rec); err != nil {
			t.Fatalf("%q: %v\n%s", want, err, audit.String())
		}
		wantCode := string(want)
		if want == "" {
			wantCode = "ok"
		}
		if r.Code() != want || rec["code"] != wantCode || rec["decision"] != "allow" || rec["call_id"] != "c1" {
			t.Errorf("%q: result %q, audit %v", want, r.Code(), rec)
		}
	}
}

type rawArgs struct {
	Extra json.RawMessage `json:"extra"`
}

// A grant binds the arguments as the handler gets them: a json.RawMessage
// member hands the handler its bytes, so two number spellings that one
// float64 holds (RFC 8785 would give them one digest) need two approvals.
func TestGrantBindsNumbersAsWritten(t *testing.T) {
	key := grant.HMACKey([]byte("harness secret: 32 bytes or more"))
	var got []string
	tool := runtime.NewTool(runtime.ToolInfo{Name: "pay", Version: "1", Effect: runtime.EffectWrite, Description: "Pay.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"extra":{}},"required":["extra"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, a rawArgs) (struct{}, error) {
			got = append(got, string(a.Extra))
			return struct{}{}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithApprovals(key, memstore.NewReplayStore()),
		runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{
		{`{"amount":9007199254740992}`, `{"amount":9007199254740993.0}`},
		{`{"amount":0.1}`, `{"amount":0.1000000000000000055511151231257827}`},
		{`{"amount":0}`, `{"amount":1e-400}`},
		{`{"amount":1e400}`, `{"amount":1e999}`},
	} {
		approved, swapped := `{"extra":`+pair[0]+`}`, `{"extra":`+pair[1]+`}`
		r := exec.Execute(context.Background(), alice, runtime.ToolCall{ID: "c1", Name: "pay", Arguments: json.RawMessage(approved)})
		if r.Error == nil || r.Error.Approval == nil {
			t.Fatalf("%s: %+v", approved, r.Error)
		}
		tok, err := grant.Issue(key, r.Error.Approval.Grant("acme", "alice", time.Now().Add(time.Minute)))
		if err != nil {
			t.Fatal(err)
		}
		got = nil
		if r := exec.Execute(context.Background(), withGrant(alice, tok), runtime.ToolCall{ID: "c1", Name: "pay", Arguments: json.RawMessage(swapped)}); r.OK || len(got) != 0 {
			t.Errorf("a grant for %s ran %s: handler got %v", approved, swapped, got)
		}
		// Member order and whitespace are not the handler's to tell apart
		// in a typed value, and keep the digest: the approved call runs.
		if r := exec.Execute(context.Background(), withGrant(alice, tok), runtime.ToolCall{ID: "c1", Name: "pay", Arguments: json.RawMessage(" " + approved)}); !r.OK {
			t.Errorf("the approved %s with a leading space: %+v", approved, r.Error)
		}
	}
}

// A tool's approval wording is in the question, filled from the call, and
// a wording whose placeholder names no member stops the executor at start.
func TestApprovalWording(t *testing.T) {
	info := runtime.ToolInfo{Name: "echo", Version: "2.1", Effect: runtime.EffectWrite, Description: "Echo text.",
		InputSchema: json.RawMessage(echoIn), OutputSchema: json.RawMessage(echoOut), Approve: "Echo {text}?"}
	handle := runtime.Handle(okEcho)
	key := grant.HMACKey([]byte("test grant key, 32 bytes or more"))
	exec, err := runtime.NewExecutor(keeltest.Of(runtime.NewTool(info, handle)), runtime.WithApprovals(key, memstore.NewReplayStore()))
	if err != nil {
		t.Fatal(err)
	}
	r := exec.Execute(context.Background(), alice, call(`{"text":"hi","count":2}`))
	if r.Error == nil || r.Error.Approval == nil || !strings.HasPrefix(r.Error.Approval.Question, "Approve this call?\n\nEcho hi?\n\nTool: echo") {
		t.Fatalf("the question: %+v", r.Error)
	}
	info.Approve = "Echo {txt}?"
	if _, err := runtime.NewExecutor(keeltest.Of(runtime.NewTool(info, handle))); err == nil || !strings.Contains(err.Error(), "names {txt}, which is not a member of the arguments") {
		t.Errorf("a wording naming no member: %v", err)
	}
}

// A tool with a writeOnly member never has its arguments' values quoted in
// the protected log: a refused call logs where it failed and why, not the
// validator's text, which quotes the value (it did before this test).
func TestSensitiveArgumentsStayOutOfTheLog(t *testing.T) {
	const in = `{"type":"object","properties":{"password":{"type":"string","pattern":"^[a-z]+$","writeOnly":true}},"required":["password"],"additionalProperties":false}`
	var log bytes.Buffer
	tool := runtime.NewTool(runtime.ToolInfo{Name: "log_in", Version: "1.0", Effect: runtime.EffectRead, Description: "Log in.",
		InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(echoOut)},
		runtime.Handle(func(context.Context, struct {
			Password string `json:"password"`
		}) (echoResult, error) {
			return echoResult{Tags: []string{}, Level: "low"}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.NewJSONHandler(&log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	r := exec.Execute(context.Background(), alice, runtime.ToolCall{ID: "p", Name: "log_in", Arguments: json.RawMessage(`{"password":"HUNTER2-SECRET"}`)})
	if r.Code() != runtime.CodeInvalidArguments {
		t.Fatalf("%+v", r)
	}
	if strings.Contains(log.String(), "HUNTER2") || !strings.Contains(log.String(), "/password") {
		t.Errorf("the log:\n%s", log.String())
	}
}

// The question read from a real input schema hides every writeOnly member:
// at the root, nested behind a $ref to a type, in a list's items, and on a
// $ref's use.
func TestApprovalQuestionHidesWriteOnlyMembers(t *testing.T) {
	const in = `{"type":"object","properties":{
		"user":{"type":"string"},
		"password":{"type":"string","writeOnly":true},
		"card":{"$ref":"#/$defs/Card"},
		"keys":{"type":"array","items":{"type":"string","writeOnly":true}},
		"token":{"$ref":"#/$defs/Plain","writeOnly":true}},
		"required":["user"],"additionalProperties":false,
		"$defs":{"Card":{"type":"object","properties":{"number":{"type":"string","writeOnly":true},"holder":{"type":"string"}},"additionalProperties":false},
		"Plain":{"type":"string"}}}`
	type card struct {
		Number string `json:"number"`
		Holder string `json:"holder"`
	}
	tool := runtime.NewTool(runtime.ToolInfo{Name: "log_in", Version: "1.0", Effect: runtime.EffectWrite, Description: "Log in.",
		InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(echoOut), Approve: "Log in as {user} with {password}?"},
		runtime.Handle(func(context.Context, struct {
			User     string   `json:"user"`
			Password string   `json:"password"`
			Card     card     `json:"card"`
			Keys     []string `json:"keys"`
			Token    string   `json:"token"`
		}) (echoResult, error) {
			return echoResult{Tags: []string{}, Level: "low"}, nil
		}))
	key := grant.HMACKey([]byte("test grant key, 32 bytes or more"))
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithApprovals(key, memstore.NewReplayStore()))
	if err != nil {
		t.Fatal(err)
	}
	r := exec.Execute(context.Background(), alice, runtime.ToolCall{ID: "l", Name: "log_in",
		Arguments: json.RawMessage(`{"user":"ana","password":"hunter2hunter2","card":{"number":"4111111111111111","holder":"Ana"},"keys":["k-one"],"token":"tok-secret"}`)})
	if r.Error == nil || r.Error.Approval == nil {
		t.Fatalf("%+v", r)
	}
	q := r.Error.Approval.Question
	for _, want := range []string{"Log in as ana with (sensitive: set, 14 characters)?", "number: (sensitive: set, 16 characters)", `holder: "Ana"`, "- (sensitive: set, 5 characters)", "token: (sensitive: set, 10 characters)"} {
		if !strings.Contains(q, want) {
			t.Errorf("%q not in\n%s", want, q)
		}
	}
	for _, leaked := range []string{"hunter2", "4111", "k-one", "tok-secret"} {
		if strings.Contains(q, leaked) {
			t.Errorf("the question shows %q:\n%s", leaked, q)
		}
	}
}
