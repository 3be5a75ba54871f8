package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/keelgen/keel/mcpserver/internal/front"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// A Stateless server gives each POST a session of its own, so a client that
// cancels in a POST of its own (the TypeScript SDK does, keeping the call's
// POST open) reaches no session. inflight keeps, per client and request id,
// the calls in flight on this replica, and a notifications/cancelled from
// the same client ends the one it names: its handler's context ends, and
// the executor records tool_cancelled. A client is a verified principal
// with the credentials it presented: two clients of one principal (each
// numbering its first call 1) hold tokens of their own, and so does a
// same-named principal of another tenant, so neither can end the other's
// call. Where two calls in flight here have one client and one id, keel
// cannot tell which the cancel means and ends neither (their POSTs' ends
// still cancel them). Without a Verifier no client is told apart, so none
// may cancel another's call by guessing its id: a POST's own end still
// cancels its call.
//
// With replicas behind one load balancer, the cancel may reach another
// replica than the call: with CancelSignals set, every cancel is also
// recorded there, and each call this replica runs looks for one made after
// it started, every cancelPoll while it runs (a call that ends sooner
// never looks).
type inflight struct {
	mu      sync.Mutex
	calls   map[inflightKey][]*context.CancelFunc
	signals CancelSignals // nil: this replica's calls only
	log     *slog.Logger
}

// CancelSignals carries a client's notifications/cancelled to the replica
// where its call runs (HTTPOptions.CancelSignals): redistasks' store is
// one on Redis. A key names a principal's request id.
type CancelSignals interface {
	// SignalCancel records that the calls named key were cancelled at at.
	SignalCancel(ctx context.Context, key string, at time.Time) error
	// CancelSignalled returns when the calls named key were last
	// cancelled; zero when never, or not lately.
	CancelSignalled(ctx context.Context, key string) (time.Time, error)
}

// cancelPoll is how often a running call looks for a cancel signalled on
// another replica.
const cancelPoll = 250 * time.Millisecond

// inflightKey names a call by its client (clientOf) and request id.
type inflightKey struct{ client, id string }

// track registers a tools/call POST and returns the request to pass on,
// whose scope (the handler's context) ends with a cancellation too, and the
// function that forgets it; for any other body, r and a no-op.
func (f *inflight) track(r *http.Request, m *front.Message) (*http.Request, func()) {
	client, ok := f.client(r)
	id := m.ID.Bytes(m.Raw)
	if !ok || m.Method != "tools/call" || m.IDs != 1 || len(id) == 0 || string(id) == "null" {
		return r, func() {}
	}
	ctx, cancel := context.WithCancel(r.Context())
	key := inflightKey{client, compactID(id)}
	f.mu.Lock()
	f.calls[key] = append(f.calls[key], &cancel)
	f.mu.Unlock()
	// A cancel ends the handler's context, which follows this one now
	// (scope.go); the POST's own context goes on, so the SDK writes the
	// call's answer (tool_cancelled), as it does for a session's cancel,
	// instead of failing the POST with a 500.
	out := r
	if token := r.Header.Get(scopeHeader); token != "" {
		scopes.Store(token, ctx)
	} else {
		out = r.WithContext(ctx) // no scope to reach the handler by: the POST itself ends
	}
	stopWatch := f.watch(ctx, key, cancel)
	return out, func() {
		stopWatch()
		f.mu.Lock()
		dropCall(f.calls, key, &cancel)
		f.mu.Unlock()
		cancel()
	}
}

// dropCall removes cancel from the calls in flight under key, and the key
// with the last of them.
func dropCall[K comparable](calls map[K][]*context.CancelFunc, key K, cancel *context.CancelFunc) {
	list := calls[key]
	if i := slices.Index(list, cancel); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(calls, key)
	} else {
		calls[key] = list
	}
}

// cancel ends the call a notifications/cancelled, m, names, when its
// client's and the only one so named; it reports whether m was one.
func (f *inflight) cancel(r *http.Request, m *front.Message) bool {
	client, ok := f.client(r)
	if !ok || m.Method != "notifications/cancelled" {
		return false
	}
	var requestID []byte
	for _, p := range m.ParamMembers { // the member exactly as the front read it
		if p.Name == "requestId" {
			requestID = p.Value.Bytes(m.Raw)
		}
	}
	if len(requestID) == 0 {
		return false
	}
	key := inflightKey{client, compactID(requestID)}
	f.mu.Lock()
	var only *context.CancelFunc
	named := len(f.calls[key])
	if named == 1 {
		only = f.calls[key][0]
	}
	f.mu.Unlock()
	switch {
	case only != nil:
		(*only)()
		return true
	case named > 1:
		f.log.LogAttrs(r.Context(), slog.LevelWarn, "keel: a cancel names calls of one client that share a request id; none is cancelled",
			slog.Int("calls", named))
		return true
	}
	if f.signals != nil { // none here: the call may run on another replica
		if err := f.signals.SignalCancel(r.Context(), key.signal(), time.Now()); err != nil {
			f.log.LogAttrs(r.Context(), slog.LevelWarn, "keel: a cancel could not be signalled to the other replicas", slog.Any("error", err))
		}
	}
	return true
}

// signal is the key's name among replicas: client and id, told apart.
func (k inflightKey) signal() string {
	return strconv.Itoa(len(k.client)) + ":" + k.client + "|" + k.id
}

// watch looks for a cancel of key signalled after now on another replica,
// every cancelPoll until ctx ends; stop ends the watch.
func (f *inflight) watch(ctx context.Context, key inflightKey, cancel context.CancelFunc) (stop func()) {
	if f.signals == nil {
		return func() {}
	}
	started := time.Now()
	var mu sync.Mutex
	var timer *time.Timer
	stopped := false
	var look func()
	look = func() {
		at, err := f.signals.CancelSignalled(ctx, key.signal())
		if err == nil && at.After(started) {
			cancel()
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !stopped && ctx.Err() == nil {
			timer = time.AfterFunc(cancelPoll, look)
		}
	}
	timer = time.AfterFunc(cancelPoll, look)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		timer.Stop()
	}
}

// client is who sent r (clientOf); not ok without a verified principal.
func (f *inflight) client(r *http.Request) (string, bool) {
	tok := auth.TokenInfoFromContext(r.Context())
	if f == nil || tok == nil || tok.UserID == "" {
		return "", false
	}
	return clientOf(r, tok), true
}

// clientOf is who sent r: the verified principal, length-prefixed, and a
// digest of the credentials it presented (the Authorization header the
// Verifier accepted), which the same client sends with its call and with
// its cancel.
func clientOf(r *http.Request, tok *auth.TokenInfo) string {
	sum := sha256.Sum256([]byte(r.Header.Get("Authorization")))
	return strconv.Itoa(len(tok.UserID)) + ":" + tok.UserID + hex.EncodeToString(sum[:])
}

// compactID is a request id as one spelling: 7 and 7.0 are not the same
// id to JSON-RPC, but " 7" and "7" are.
func compactID(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
