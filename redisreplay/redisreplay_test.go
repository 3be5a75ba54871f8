package redisreplay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/redisreplay"
	"github.com/keelgen/keel/redistest"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
)

var (
	grantKey = grant.HMACKey([]byte("replicas share this key: 32+ bytes"))
	alice    = runtime.ExecutionContext{Tenant: "acme", Principal: "alice"}
	write    = runtime.ToolCall{ID: "call-write", Name: generated.ToolCreateTicket,
		Arguments: json.RawMessage(`{"incident_id":"INC-001","summary":"raise pool size"}`)}
)

// replica is one harness process: its own executor and its own client of
// the shared Redis.
func replica(t testing.TB, addr string, timeout time.Duration) *runtime.Executor {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { client.Close() })
	store, err := redisreplay.New(client, redisreplay.Options{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithApprovals(grantKey, store))
	if err != nil {
		t.Fatal(err)
	}
	return exec
}

// grant is a person's approval of the write call, as the executor asked for it.
func grantFor(t testing.TB, exec *runtime.Executor) string {
	t.Helper()
	r := exec.Execute(context.Background(), alice, write)
	if r.Code() != runtime.CodeApprovalRequired || r.Error.Approval == nil {
		t.Fatalf("no approval request: %+v", r)
	}
	tok, err := grant.Issue(grantKey, r.Error.Approval.Grant(alice.Tenant, alice.Principal, time.Now().Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Two replicas sharing one Redis run a grant exactly once under 64
// concurrent presentations, half on each.
func TestTwoReplicasRunAGrantOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a, b := replica(t, srv.Addr, time.Second), replica(t, srv.Addr, time.Second)
	for round := range 3 {
		ec := alice
		ec.Grant = grantFor(t, a)
		var ok, refused atomic.Int32
		var wg sync.WaitGroup
		for i := range 64 {
			exec := a
			if i%2 == 1 {
				exec = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				switch r := exec.Execute(context.Background(), ec, write); {
				case r.OK:
					ok.Add(1)
				case r.Code() == runtime.CodeApprovalRequired:
					refused.Add(1)
				default:
					t.Errorf("unexpected result %+v", r.Error)
				}
			}()
		}
		wg.Wait()
		if ok.Load() != 1 || refused.Load() != 63 {
			t.Fatalf("round %d: %d ran, %d refused; want 1 and 63", round, ok.Load(), refused.Load())
		}
	}
}

// A durable engine's retry of a call, on another replica, redeems the grant
// the first try redeemed; a replay of the first try, another call claiming
// a retry, and a retry of a grant redeemed without a call are refused.
func TestRetryOnAnotherReplicaRedeemsAgain(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a, b := replica(t, srv.Addr, time.Second), replica(t, srv.Addr, time.Second)
	ec := alice
	ec.Grant = grantFor(t, a)
	attempt := func(n int) runtime.ExecutionContext {
		c := ec
		c.Attempt = &runtime.Attempt{Engine: "temporal", WorkflowID: "wf", RunID: "r", ActivityID: "1", Number: n}
		return c
	}
	other := write
	other.ID = "call-other"
	for _, s := range []struct {
		what string
		exec *runtime.Executor
		ec   runtime.ExecutionContext
		call runtime.ToolCall
		ok   bool
	}{
		{"the first try, on a", a, attempt(1), write, true},
		{"the first try replayed, on b", b, attempt(1), write, false},
		{"the second try, on b", b, attempt(2), write, true},
		{"the third try, on a", a, attempt(3), write, true},
		{"another call claiming a retry", b, attempt(2), other, false},
	} {
		if r := s.exec.Execute(context.Background(), s.ec, s.call); r.OK != s.ok {
			t.Errorf("%s: %+v", s.what, r.Error)
		}
	}
	store, err := redisreplay.New(srv.Client(), redisreplay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, exp := context.Background(), time.Now().Add(time.Minute)
	if ok, err := store.Redeem(ctx, "plain", exp); !ok || err != nil {
		t.Fatalf("Redeem: %v, %v", ok, err)
	}
	for _, id := range []string{"", "1"} {
		if ok, err := store.RedeemCall(ctx, "plain", id, true, exp); ok || err != nil {
			t.Errorf("a retry of call %q rode on a grant Redeem redeemed: %v, %v", id, ok, err)
		}
	}
}

// A store that is down, or that never answers, refuses the grant: the call
// stays approval_required, within the store's timeout.
func TestStoreThatCannotDecideDenies(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	issuer := replica(t, srv.Addr, time.Second)

	down := replica(t, srv.Addr, time.Second)
	srv.Kill()
	ec := alice
	ec.Grant = grantFor(t, issuer)
	if r := down.Execute(context.Background(), ec, write); r.Code() != runtime.CodeApprovalRequired {
		t.Fatalf("Redis down: %+v", r)
	}

	// A listener that accepts and never answers.
	silent := replica(t, redistest.Impostor(t, nil), 200*time.Millisecond)
	start := time.Now()
	if r := silent.Execute(context.Background(), ec, write); r.Code() != runtime.CodeApprovalRequired {
		t.Fatalf("Redis silent: %+v", r)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a silent store held the call for %v", d)
	}
}

// With persistence on (append-only, fsync always), a killed and restarted
// Redis still knows every unexpired grant it recorded.
func TestRestartKeepsUnexpiredMarkers(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store, err := redisreplay.New(srv.Client(), redisreplay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 100 {
		if ok, err := store.Redeem(ctx, fmt.Sprintf("n%d", i), time.Now().Add(time.Hour)); !ok || err != nil {
			t.Fatalf("redeem n%d: %v %v", i, ok, err)
		}
	}
	srv.Kill()
	srv.Restart()
	after, err := redisreplay.New(srv.Client(), redisreplay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if ok, err := after.Redeem(ctx, fmt.Sprintf("n%d", i), time.Now().Add(time.Hour)); ok || err != nil {
			t.Fatalf("after a restart n%d was accepted again: %v %v", i, ok, err)
		}
	}
	// Markers expire with their grants, plus the skew margin.
	short, err := redisreplay.New(srv.Client(), redisreplay.Options{SkewMargin: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := short.Redeem(ctx, "short", time.Now().Add(50*time.Millisecond)); !ok {
		t.Fatal("redeem short")
	}
	time.Sleep(150 * time.Millisecond)
	if ok, _ := short.Redeem(ctx, "short", time.Now().Add(time.Minute)); !ok {
		t.Fatal("an expired marker was kept past its grant and the margin")
	}
}

// The store names its memory, the same on every replica and across a
// restart that kept its data; a Redis restarted empty gets a new name.
// A grant issued under the old name (Grant.Memory) is then refused on
// every replica, though its marker is gone: it could be used again. A
// grant issued under the new name runs once; one that names no memory
// is not bound by it.
func TestAGrantOfALostMemoryIsRefused(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a, b := replica(t, srv.Addr, time.Second), replica(t, srv.Addr, time.Second)
	store, err := redisreplay.New(srv.Client(), redisreplay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	memory, err := store.Memory(ctx)
	if err != nil || memory == "" {
		t.Fatalf("memory %q: %v", memory, err)
	}
	other, _ := redisreplay.New(redis.NewClient(&redis.Options{Addr: srv.Addr}), redisreplay.Options{})
	if m, err := other.Memory(ctx); m != memory || err != nil {
		t.Fatalf("another replica's store names %q (%v), want %q", m, err, memory)
	}
	srv.Kill()
	srv.Restart()
	if m, err := store.Memory(ctx); m != memory || err != nil {
		t.Fatalf("after a restart that kept the data: %q (%v), want %q", m, err, memory)
	}
	bound := func(exec *runtime.Executor, memory string) runtime.ExecutionContext {
		r := exec.Execute(ctx, alice, write)
		g := r.Error.Approval.Grant(alice.Tenant, alice.Principal, time.Now().Add(time.Minute))
		g.Memory = memory
		tok, err := grant.Issue(grantKey, g)
		if err != nil {
			t.Fatal(err)
		}
		ec := alice
		ec.Grant = tok
		return ec
	}
	used := bound(a, memory)
	if r := a.Execute(ctx, used, write); !r.OK {
		t.Fatalf("a grant of the store's memory: %+v", r.Error)
	}
	unused := bound(a, memory)
	srv.RestartEmpty()
	for _, ec := range []runtime.ExecutionContext{used, unused} {
		for _, exec := range []*runtime.Executor{a, b} {
			if r := exec.Execute(ctx, ec, write); r.OK || r.Code() != runtime.CodeApprovalRequired {
				t.Fatalf("a grant of the lost memory: %+v", r)
			}
		}
	}
	now, err := store.Memory(ctx)
	if err != nil || now == memory || now == "" {
		t.Fatalf("after an empty restart the store names %q (%v), was %q", now, err, memory)
	}
	fresh := bound(b, now)
	if r := a.Execute(ctx, fresh, write); !r.OK {
		t.Fatalf("a grant of the new memory: %+v", r.Error)
	}
	if r := b.Execute(ctx, fresh, write); r.OK {
		t.Fatal("a grant of the new memory ran twice")
	}
	if r := b.Execute(ctx, bound(b, ""), write); !r.OK {
		t.Fatalf("a grant that names no memory: %+v", r.Error)
	}
}

func TestNewRefusesNil(t *testing.T) {
	if _, err := redisreplay.New(nil, redisreplay.Options{}); err == nil {
		t.Fatal("a nil client was accepted")
	}
	var c *redis.Client
	if _, err := redisreplay.New(c, redisreplay.Options{Timeout: -1}); err == nil {
		t.Fatal("a negative timeout was accepted")
	}
}

var nonces atomic.Int64

// BenchmarkRedeem is one grant redeemed against a real loopback Redis
// (fsync on every write); the memory store is its peer.
func BenchmarkRedeem(b *testing.B) {
	srv := redistest.Start(b)
	redisStore, err := redisreplay.New(srv.Client(), redisreplay.Options{})
	if err != nil {
		b.Fatal(err)
	}
	stores := map[string]func() runtime.ReplayStore{
		"redis":  func() runtime.ReplayStore { return redisStore },
		"memory": func() runtime.ReplayStore { return memstore.NewReplayStore() },
	}
	for name, newStore := range stores {
		b.Run(name, func(b *testing.B) {
			store := newStore()
			ctx := context.Background()
			exp := time.Now().Add(time.Hour)
			for b.Loop() {
				if ok, err := store.RedeemCall(ctx, fmt.Sprintf("%s-%d", name, nonces.Add(1)), "call", false, exp); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

// A replica whose clock is behind still finds the marker another replica
// wrote: markers outlive the grant's expiry by the skew margin. Here the
// lagging replica believes the grant has 10 s left after it expired by the
// writer's clock.
func TestMarkersOutliveClockSkew(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store, err := redisreplay.New(srv.Client(), redisreplay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if ok, err := store.Redeem(ctx, "n-skew", time.Now().Add(200*time.Millisecond)); !ok || err != nil {
		t.Fatalf("first redeem: %v %v", ok, err)
	}
	time.Sleep(400 * time.Millisecond) // expired, on the writer's clock
	if ok, err := store.Redeem(ctx, "n-skew", time.Now().Add(10*time.Second)); ok || err != nil {
		t.Fatalf("a replica 10 s behind redeemed a used grant again: %v %v", ok, err)
	}
	if ttl := srv.Client().PTTL(ctx, redisreplay.DefaultPrefix+"n-skew").Val(); ttl < redisreplay.DefaultSkewMargin-time.Minute {
		t.Fatalf("the marker lives %v more, want about the margin %v", ttl, redisreplay.DefaultSkewMargin)
	}
	if _, err := redisreplay.New(srv.Client(), redisreplay.Options{SkewMargin: -time.Second}); err == nil {
		t.Fatal("a negative skew margin was taken")
	}
}

// A grant refused because Redis answered late is not spent: when the late
// answer says the marker was recorded, the store removes it, and the grant
// can still be used, once.
func TestLateAnswerDoesNotSpendTheGrant(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store, err := redisreplay.New(redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1}), redisreplay.Options{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	expires := time.Now().Add(time.Minute)
	srv.Pause()
	if ok, err := store.Redeem(ctx, "n-late", expires); ok || err == nil {
		srv.Resume()
		t.Fatalf("a paused Redis: %v %v", ok, err)
	}
	time.Sleep(300 * time.Millisecond)
	srv.Resume()
	time.Sleep(500 * time.Millisecond) // Redis runs the queued SET NX, and the store hears it
	key := redisreplay.DefaultPrefix + "n-late"
	deadline := time.Now().Add(5 * time.Second)
	for srv.Client().Exists(ctx, key).Val() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the marker of a refused grant stayed: the grant is spent")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The grant is used through a store with a patient timeout: under a
	// loaded machine's fsync, 200 ms is the refusal above, not the point here.
	patient, err := redisreplay.New(srv.Client(), redisreplay.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := patient.Redeem(ctx, "n-late", expires); !ok || err != nil {
		t.Fatalf("the refused grant could not be used: %v %v", ok, err)
	}
	if ok, _ := patient.Redeem(ctx, "n-late", expires); ok {
		t.Fatal("the grant was used twice")
	}
}
