package mcpserver

import (
	"context"
	"net/http"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// keel answers the tools/call of a session over HTTP itself too, on the
// call's POST: its notifications as events there, at the level the
// session's client set (handler.levels, kept by New's middleware), its
// answer last. The SDK keeps the session: keel finds it by its id
// (sessionCap), refuses nothing the SDK would not, and hands the SDK any
// call it cannot answer as the SDK would: one from a client whose session
// lets it approve a call by elicitation, a request the SDK sends on the
// call's own stream, which only the SDK can match to its answer.

// sessionCall reads m, a POST's tools/call in a session, as the request
// keel answers; false for one the SDK is to answer or refuse.
func (c envelopeCheck) sessionCall(r *http.Request, m *message) (directCall, bool) {
	id := r.Header.Get("Mcp-Session-Id")
	if c.sessions == nil || id == "" || len(r.Header.Values("Last-Event-ID")) > 0 || !postHeadersOK(r.Header) {
		return directCall{}, false
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v >= sessionlessRevision || (v != "" && !slices.Contains(mcp.SupportedProtocolVersions(), v)) {
		return directCall{}, false
	}
	a, principal := c.sessions.session(id)
	if a == nil || a.ss.InitializeParams() == nil {
		return directCall{}, false // unknown, expired or not initialized: the SDK's 404 or refusal
	}
	tok := auth.TokenInfoFromContext(r.Context())
	if principal != "" && (tok == nil || tok.UserID != principal) {
		return directCall{}, false // another user's session: the SDK's 403
	}
	params, ok := m.callParams()
	if !ok {
		return directCall{}, false
	}
	if _, has := params.Meta[mcp.MetaKeyProtocolVersion]; has {
		return directCall{}, false // a 2026-07-28 request in a session: the SDK refuses it
	}
	req := &mcp.CallToolRequest{Session: a.ss, Params: params, Extra: &mcp.RequestExtra{TokenInfo: tok, Header: r.Header}}
	if c.h.approvals != nil && canElicit(req) {
		return directCall{}, false // its question goes on the call's stream, as the SDK's request
	}
	level, _ := c.h.levels.Load(id)
	lv, _ := level.(mcp.LoggingLevel)
	return directCall{id: m.id.bytesOf(m.raw), req: req, logLevel: lv, session: id}, true
}

// sessionCalls are the calls of sessions keel answers, in flight, so that
// a client's notifications/cancelled ends the one it names.
type sessionCalls struct {
	mu    sync.Mutex
	calls map[sessionCallKey]*context.CancelFunc
}

type sessionCallKey struct{ session, id string }

// track registers a call, false when one of the session has its id in
// flight (the SDK refuses the second); forget ends it.
func (s *sessionCalls) track(ctx context.Context, session string, id []byte) (context.Context, func(), bool) {
	key := sessionCallKey{session, compactID(id)}
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.calls[key]; dup {
		cancel()
		return nil, nil, false
	}
	if s.calls == nil {
		s.calls = map[sessionCallKey]*context.CancelFunc{}
	}
	s.calls[key] = &cancel
	return ctx, func() {
		cancel()
		s.mu.Lock()
		delete(s.calls, key)
		s.mu.Unlock()
	}, true
}

// cancel ends the call of session a notifications/cancelled names.
func (s *sessionCalls) cancel(session string, m *message) {
	for _, p := range m.paramMembers {
		if p.name != "requestId" {
			continue
		}
		s.mu.Lock()
		cancel := s.calls[sessionCallKey{session, compactID(p.value.bytesOf(m.raw))}]
		s.mu.Unlock()
		if cancel != nil {
			(*cancel)()
		}
	}
}
