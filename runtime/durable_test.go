package runtime_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
)

func try(n int) *runtime.Attempt {
	if n == 0 {
		return nil
	}
	return &runtime.Attempt{Engine: "temporal", WorkflowID: "wf", RunID: "run", ActivityID: "7", Number: n}
}

// A durable engine's retry of a call redeems the grant its first try
// redeemed; nothing else does: the first try again, another call, a retry
// whose grant was redeemed by Redeem alone, or a retry with a store that
// cannot tell which call redeemed it.
func TestGrantIsRedeemedOnceAcrossRetries(t *testing.T) {
	key := grant.HMACKey([]byte("harness secret: 32 bytes or more"))
	f, digest := approvalFixture(t, key)
	ctx := context.Background()
	tok := grantFor(t, key, digest, nil)
	steps := []struct {
		what    string
		attempt int
		call    runtime.ToolCall
		ok      bool
	}{
		{"the first try", 1, call(writeArgs), true},
		{"the first try replayed", 1, call(writeArgs), false},
		{"no attempt at all", 0, call(writeArgs), false},
		{"the second try", 2, call(writeArgs), true},
		{"the third try", 3, call(writeArgs), true},
		{"another call claiming a retry", 2, runtime.ToolCall{ID: "c2", Name: "echo", Arguments: json.RawMessage(writeArgs)}, false},
	}
	ran := int32(0)
	for _, s := range steps {
		ec := withGrant(alice, tok)
		ec.Attempt = try(s.attempt)
		r := f.exec.Execute(ctx, ec, s.call)
		if r.OK != s.ok || (!s.ok && r.Code() != runtime.CodeApprovalRequired) {
			t.Errorf("%s: %s", s.what, marshal(t, r))
		}
		if s.ok {
			ran++
		}
		if got := f.handlerCalls.Load(); got != ran {
			t.Errorf("%s: the handler has run %d times, want %d", s.what, got, ran)
		}
	}

	// A grant whose call id another call shares its nonce with: the retry of
	// that other call does not ride on the first one's redemption.
	store := memstore.NewReplayStore()
	exp := time.Now().Add(time.Minute)
	if ok, _ := store.RedeemCall(ctx, "n", "c1", false, exp); !ok {
		t.Fatal("a first redemption was refused")
	}
	for _, c := range []struct {
		call  string
		retry bool
		want  bool
	}{{"c1", true, true}, {"c1", false, false}, {"c2", true, false}} {
		if ok, err := store.RedeemCall(ctx, "n", c.call, c.retry, exp); ok != c.want || err != nil {
			t.Errorf("RedeemCall(%s, retry %v) = %v, %v", c.call, c.retry, ok, err)
		}
	}
	if ok, _ := store.Redeem(ctx, "m", exp); !ok {
		t.Fatal("Redeem refused a new nonce")
	}
	if ok, _ := store.RedeemCall(ctx, "m", "", true, exp); ok {
		t.Error("a retry rode on a grant Redeem redeemed for no call")
	}
}

// A handler's idempotency key is the same on every try of one call and
// differs for another call, principal or tenant; the audit log records the
// durable execution and the try beside the call id.
func TestIdempotencyKeyAndAttemptInTheAudit(t *testing.T) {
	var keys []string
	var audit strings.Builder
	f := newFixture(t, runtime.EffectRead, func(ctx context.Context, a echoArgs) (echoResult, error) {
		keys = append(keys, runtime.IdempotencyKey(ctx))
		return okEcho(ctx, a)
	}, runtime.WithObserver(runtime.AuditLog(slog.New(slog.NewJSONHandler(&audit, nil)))))
	ctx := context.Background()
	if k := runtime.IdempotencyKey(ctx); k != "" {
		t.Errorf("a key outside a handler: %q", k)
	}
	bob := runtime.ExecutionContext{Tenant: "acme", Principal: "bob"}
	other := runtime.ExecutionContext{Tenant: "globex", Principal: "alice"}
	for _, c := range []struct {
		ec   runtime.ExecutionContext
		call runtime.ToolCall
		try  int
	}{
		{alice, call(writeArgs), 1}, {alice, call(writeArgs), 2}, {alice, call(writeArgs), 0},
		{alice, runtime.ToolCall{ID: "c2", Name: "echo", Arguments: json.RawMessage(writeArgs)}, 1},
		{bob, call(writeArgs), 1}, {other, call(writeArgs), 1},
	} {
		c.ec.Attempt = try(c.try)
		if r := f.exec.Execute(ctx, c.ec, c.call); !r.OK {
			t.Fatal(marshal(t, r))
		}
	}
	if len(keys) != 6 || len(keys[0]) != 64 || keys[0] != keys[1] || keys[1] != keys[2] {
		t.Fatalf("the tries of one call have keys %q", keys)
	}
	seen := map[string]bool{}
	for _, k := range keys[2:] {
		if seen[k] {
			t.Errorf("two calls share the key %s: %q", k, keys)
		}
		seen[k] = true
	}
	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d audit records", len(lines))
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["call_id"] != "c1" || rec["engine"] != "temporal" || rec["workflow_id"] != "wf" || rec["run_id"] != "run" ||
		rec["activity_id"] != "7" || rec["attempt"] != float64(2) {
		t.Errorf("the audit record of a retry: %s", lines[1])
	}
	if strings.Contains(lines[2], "workflow_id") {
		t.Errorf("a call outside a durable engine records one: %s", lines[2])
	}
}

// Ended gives a call that ended outside the executor the executor's own
// code and fixed message; any other code is an internal error.
func TestEndedCarriesFixedMessages(t *testing.T) {
	c := call(writeArgs)
	for code, msg := range map[runtime.Code]string{
		runtime.CodeToolTimeout:       "The tool did not finish in time.",
		runtime.CodeToolCancelled:     "The call was cancelled before the tool finished.",
		runtime.CodeInvalidToolOutput: "The tool produced a result that does not match its output schema.",
		runtime.CodeToolInternalError: "The tool failed with an internal error.",
		"not_found":                   "The tool failed with an internal error.",
	} {
		r := c.Ended("2.1", code)
		want := code
		if code == "not_found" {
			want = runtime.CodeToolInternalError
		}
		if r.OK || r.Code() != want || r.Error.Message != msg || r.CallID != "c1" || r.ToolName != "echo" || r.ToolVersion == nil || *r.ToolVersion != "2.1" {
			t.Errorf("Ended(%s) = %s", code, marshal(t, r))
		}
	}
	if r := c.Ended("", runtime.CodeToolTimeout); r.ToolVersion != nil {
		t.Errorf("an unknown version is not null: %s", marshal(t, r))
	}
}
