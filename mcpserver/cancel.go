package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// A Stateless server gives each POST a session of its own, so a client that
// cancels in a POST of its own (the TypeScript SDK does, keeping the call's
// POST open) reaches no session. inflight keeps, per verified principal and
// request id, the calls in flight on this replica, and a
// notifications/cancelled from the same principal ends them: their
// handlers' contexts end, and the executor records tool_cancelled. Without a
// Verifier no client is told apart, so none may cancel another's call by
// guessing its id: a POST's own end still cancels its call.
type inflight struct {
	mu    sync.Mutex
	calls map[inflightKey][]*context.CancelFunc
}

type inflightKey struct{ principal, id string }

// envelope is what a POST's body says of itself, for cancellation.
type envelope struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// track registers a tools/call POST and returns the request to pass on,
// whose scope ends with a cancellation too, and the function that forgets
// it; for any other body, r and a no-op.
func (f *inflight) track(r *http.Request, body []byte) (*http.Request, func()) {
	principal, env, ok := f.read(r, body)
	if !ok || env.Method != "tools/call" || len(env.ID) == 0 || string(env.ID) == "null" {
		return r, func() {}
	}
	ctx, cancel := context.WithCancel(r.Context())
	key := inflightKey{principal, compactID(env.ID)}
	f.mu.Lock()
	f.calls[key] = append(f.calls[key], &cancel)
	f.mu.Unlock()
	if token := r.Header.Get(scopeHeader); token != "" {
		scopes.Store(token, ctx) // the handler's context follows this one now
	}
	return r.WithContext(ctx), func() {
		f.mu.Lock()
		list := f.calls[key]
		for i, c := range list {
			if c == &cancel {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(f.calls, key)
		} else {
			f.calls[key] = list
		}
		f.mu.Unlock()
		cancel()
	}
}

// cancel ends the calls a notifications/cancelled body names, when its
// principal's; it reports whether the body was one.
func (f *inflight) cancel(r *http.Request, body []byte) bool {
	principal, env, ok := f.read(r, body)
	if !ok || env.Method != "notifications/cancelled" || len(env.Params.RequestID) == 0 {
		return false
	}
	f.mu.Lock()
	list := append([]*context.CancelFunc(nil), f.calls[inflightKey{principal, compactID(env.Params.RequestID)}]...)
	f.mu.Unlock()
	for _, c := range list {
		(*c)()
	}
	return true
}

// read decodes a single message's envelope and the verified principal; not
// ok without a principal or for a batch.
func (f *inflight) read(r *http.Request, body []byte) (string, envelope, bool) {
	tok := auth.TokenInfoFromContext(r.Context())
	if f == nil || tok == nil || tok.UserID == "" {
		return "", envelope{}, false
	}
	var env envelope
	if json.Unmarshal(body, &env) != nil {
		return "", envelope{}, false
	}
	return tok.UserID, env, true
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
