package runtime_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/keelgen/keel/internal/lockfile"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
	"github.com/keelgen/keel/runtime/keeltest"
)

// Every security option given a nil, empty, short or malformed value makes
// NewExecutor fail with an error that names the option; none panics and none
// quietly turns its check off.
func TestZeroValueOptionsAreRefused(t *testing.T) {
	set, _ := lockedSet(t)
	store := memstore.NewReplayStore()
	good := grant.HMACKey([]byte("a grant key of thirty-two bytes!"))
	cases := map[string]struct {
		opt  runtime.Option
		want string
	}{
		"signature: nil key":         {runtime.WithRequiredSignature(nil), `WithRequiredSignature: no PEM "PUBLIC KEY" block`},
		"signature: not PKIX":        {runtime.WithRequiredSignature(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1, 2, 3}})), "WithRequiredSignature: the PUBLIC KEY block is not a PKIX public key"},
		"pin: empty":                 {runtime.WithExpectedSetDigest(""), `WithExpectedSetDigest: "" is not a set digest`},
		"pin: not a digest":          {runtime.WithExpectedSetDigest("sha256:abc"), "is not a set digest"},
		"approvals: nil key":         {runtime.WithApprovals(nil, store), "WithApprovals: the grant key is nil"},
		"approvals: nil store":       {runtime.WithApprovals(good, nil), "WithApprovals: the replay store is nil"},
		"approvals: HMAC nil":        {runtime.WithApprovals(grant.HMACKey(nil), store), "the HMAC grant key is 0 bytes; at least 32 are required"},
		"approvals: HMAC short":      {runtime.WithApprovals(grant.HMACKey([]byte("secret")), store), "the HMAC grant key is 6 bytes"},
		"approvals: HMAC zeros":      {runtime.WithApprovals(grant.HMACKey(make([]byte, 32)), store), "the HMAC grant key is all zero bytes"},
		"approvals: ed25519 nil pub": {runtime.WithApprovals(grant.Ed25519PublicKey(nil), store), "the ed25519 grant key is 0 bytes"},
		"approvals: ed25519 nil key": {runtime.WithApprovals(grant.Ed25519Key(nil), store), "the ed25519 grant key is 0 bytes"},
		"policy: nil":                {runtime.WithPolicy(nil), "WithPolicy: the policy is nil"},
		"logger: nil":                {runtime.WithLogger(nil), "WithLogger: the logger is nil"},
		"observer: nil":              {runtime.WithObserver(nil), "WithObserver: the observer is nil"},
		"option: nil":                {nil, "an option is nil"},
	}
	for name, c := range cases {
		exec, err := runtime.NewExecutor(set, c.opt)
		if err == nil || exec != nil {
			t.Errorf("%s: NewExecutor accepted it", name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want it to contain %q", name, err, c.want)
		}
	}
	if _, err := runtime.NewExecutor(nil); err == nil {
		t.Error("NewExecutor accepted a nil tool set")
	}
}

// A bad key neither issues nor verifies a grant, and nothing panics.
func TestBadGrantKeysIssueAndVerifyNothing(t *testing.T) {
	g := grant.Grant{Tool: "echo", Expires: time.Now().Add(time.Minute)}
	for name, key := range map[string]grant.Key{
		"HMAC nil":        grant.HMACKey(nil),
		"HMAC empty":      grant.HMACKey([]byte{}),
		"ed25519 nil":     grant.Ed25519Key(nil),
		"ed25519 pub nil": grant.Ed25519PublicKey(nil),
		"nil":             nil,
	} {
		if tok, err := grant.Issue(key, g); err == nil {
			t.Errorf("%s issued %q", name, tok)
		}
		if _, err := grant.Parse(key, "e30.AAAA"); err == nil {
			t.Errorf("%s verified a grant", name)
		}
	}
	// A grant signed with an empty HMAC secret by someone else never verifies.
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	tok, err := grant.Issue(grant.Ed25519Key(priv), g)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := grant.Parse(grant.HMACKey(nil), tok); err == nil {
		t.Error("an empty HMAC key verified a grant")
	}
}

// handEditedSet is a generated switch edited by hand: it answers names the
// lock does not list, and binds a listed tool under an alias.
type handEditedSet struct {
	keeltest.Set
	hidden *runtime.Tool
}

func (s handEditedSet) Lookup(name string) *runtime.Tool {
	switch name {
	case "sync_to_prod":
		return s.hidden
	case "ECHO", "echo\x00":
		return s.Set.Lookup("echo")
	}
	return s.Set.Lookup(name)
}

// The executor runs only tools NewExecutor verified, under exactly their
// own names: a hidden case or an alias in the switch selects nothing, and
// the attempt is logged at error level.
func TestDispatchOnlyToVerifiedTools(t *testing.T) {
	set, _ := lockedSet(t)
	ran := 0
	hidden := runtime.NewTool(runtime.ToolInfo{Name: "sync_to_prod", Version: "1.0", Effect: runtime.EffectRead,
		InputSchema: json.RawMessage(echoIn), OutputSchema: json.RawMessage(echoOut)},
		runtime.Handle(func(ctx context.Context, a echoArgs) (echoResult, error) { ran++; return okEcho(ctx, a) }))
	var log bytes.Buffer
	exec, err := runtime.NewExecutor(handEditedSet{Set: set, hidden: hidden},
		runtime.WithLogger(slog.New(slog.NewJSONHandler(&log, nil))), runtime.WithExpectedSetDigest(mustParseLock(t, set.LockFile).SetDigest))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sync_to_prod", "ECHO", "echo\x00"} {
		r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "x", Name: name, Arguments: json.RawMessage(`{"text":"hi"}`)})
		if r.Code() != runtime.CodeUnknownTool || r.ToolVersion != nil {
			t.Errorf("%q: %s", name, marshal(t, r))
		}
	}
	if ran != 0 {
		t.Fatal("the hidden tool ran")
	}
	if n := strings.Count(log.String(), `"level":"ERROR","msg":"keel: the tool set's switch selected a tool that was not verified`); n != 3 {
		t.Errorf("%d error-level log lines for 3 refused dispatches:\n%s", n, log.String())
	}
	// The verified tool still runs under its own name.
	if r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "y", Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}); !r.OK {
		t.Fatalf("echo: %s", marshal(t, r))
	}
}

func mustParseLock(t *testing.T, b []byte) lockfile.Lock {
	t.Helper()
	l, err := lockfile.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A full store refuses the grant: the call stays approval_required.
func TestFullReplayStoreDeniesTheCall(t *testing.T) {
	key := grant.HMACKey([]byte("harness secret: 32 bytes or more"))
	store := memstore.NewReplayStoreSize(1)
	if ok, _ := store.Redeem(context.Background(), "someone else's", time.Now().Add(time.Hour)); !ok {
		t.Fatal("could not fill the store")
	}
	f := newFixture(t, runtime.EffectWrite, okEcho, runtime.WithApprovals(key, store))
	digest, _ := grant.ArgumentsDigest([]byte(writeArgs))
	r := f.exec.Execute(context.Background(), withGrant(alice, grantFor(t, key, digest, nil)), call(writeArgs))
	if r.Code() != runtime.CodeApprovalRequired || f.handlerCalls.Load() != 0 {
		t.Fatalf("a full store let the call run: %s", marshal(t, r))
	}
}
