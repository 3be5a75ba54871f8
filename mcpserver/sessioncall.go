package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver/internal/front"
	"github.com/keelgen/keel/runtime"
)

// keel answers the tools/call of a session over HTTP itself too, on the
// call's POST: its notifications as events there, at the level the
// session's client set (handler.levels, kept by New's middleware), a
// question to its client's person (an approval, by elicitation) as a
// request there whose answer, the client's next POST, keel takes, and the
// call's answer last. The SDK keeps the session: keel finds it by its id
// (sessionCap) and refuses nothing the SDK would not.

// sessionCall reads m, a POST's tools/call in a session, as the request
// keel answers; for one the SDK is to refuse, why (the audit's refusal).
func (c envelopeCheck) sessionCall(r *http.Request, m *front.Message) (directCall, string) {
	id := r.Header.Get("Mcp-Session-Id")
	if c.sessions == nil || id == "" || len(r.Header.Values("Last-Event-ID")) > 0 || !front.PostHeadersOK(r.Header) {
		return directCall{}, runtime.RefusedProtocol
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v >= front.SessionlessRevision || (v != "" && !slices.Contains(mcp.SupportedProtocolVersions(), v)) {
		return directCall{}, runtime.RefusedProtocol
	}
	a, _ := c.sessions.session(id)
	if a == nil || a.ss.InitializeParams() == nil || !c.sessions.owns(r, id) {
		return directCall{}, runtime.RefusedProtocol // unknown, expired, not initialized, another user's: the SDK's 404, refusal or 403
	}
	tok := auth.TokenInfoFromContext(r.Context())
	params, ok := m.CallParams()
	if !ok {
		return directCall{}, runtime.RefusedProtocol
	}
	if _, has := params.Meta[mcp.MetaKeyProtocolVersion]; has {
		return directCall{}, runtime.RefusedProtocol // a 2026-07-28 request in a session: the SDK refuses it
	}
	req := &mcp.CallToolRequest{Session: a.ss, Params: params, Extra: &mcp.RequestExtra{TokenInfo: tok, Header: r.Header}}
	level, _ := c.h.levels.Load(id)
	lv, _ := level.(mcp.LoggingLevel)
	return directCall{id: m.ID.Bytes(m.Raw), req: req, logLevel: lv, session: id}, ""
}

// sessionCalls are the calls of sessions keel answers, in flight, so that
// a client's notifications/cancelled ends the one it names, and the
// questions they asked their clients, so that an answer reaches its call.
type sessionCalls struct {
	mu        sync.Mutex
	calls     map[sessionCallKey]*context.CancelFunc
	questions map[sessionCallKey]chan []byte // a question's id → where its answer goes
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
func (s *sessionCalls) cancel(session string, m *front.Message) {
	for _, p := range m.ParamMembers {
		if p.Name != "requestId" {
			continue
		}
		s.mu.Lock()
		cancel := s.calls[sessionCallKey{session, compactID(p.Value.Bytes(m.Raw))}]
		s.mu.Unlock()
		if cancel != nil {
			(*cancel)()
		}
	}
}

// ask writes a question (an elicitation/create request) for the client of
// session with write, and waits for its answer.
func (s *sessionCalls) ask(ctx context.Context, session string, p mcp.InputRequest, write func([]byte)) (mcp.InputResponse, error) {
	method, res := inputMethod(p)
	if method == "" {
		return nil, errInputRequest
	}
	id := `"` + newCallID() + `"`
	key := sessionCallKey{session, id}
	answer := make(chan []byte, 1)
	s.mu.Lock()
	if s.questions == nil {
		s.questions = map[sessionCallKey]chan []byte{}
	}
	s.questions[key] = answer
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.questions, key)
		s.mu.Unlock()
	}()
	params, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	write(append(append([]byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":`), params...), '}'))
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case raw := <-answer:
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  *jsonrpc.Error  `json:"error"`
		}
		if err := json.Unmarshal(raw, &resp); err != nil {
			return nil, err
		}
		if resp.Error != nil || resp.Result == nil || json.Unmarshal(resp.Result, res) != nil {
			return nil, errors.New("mcpserver: the client did not answer the question")
		}
		return res, nil
	}
}

// inputMethod is the method of an input request, and a value its answer
// reads into; "" for a request MCP does not define.
func inputMethod(p mcp.InputRequest) (string, mcp.InputResponse) {
	switch p.(type) {
	case *mcp.ElicitParams:
		return "elicitation/create", new(mcp.ElicitResult)
	case *mcp.CreateMessageParams:
		return "sampling/createMessage", new(mcp.CreateMessageResult)
	case *mcp.ListRootsParams:
		return "roots/list", new(mcp.ListRootsResult)
	}
	return "", nil
}

// answered takes m, a response a client of session sent, to the question
// it answers; false when keel asked none by its id.
func (s *sessionCalls) answered(session string, m *front.Message) bool {
	if m.HasMethod || m.IDs != 1 || m.Answers != 1 {
		return false
	}
	s.mu.Lock()
	answer := s.questions[sessionCallKey{session, compactID(m.ID.Bytes(m.Raw))}]
	s.mu.Unlock()
	if answer == nil {
		return false
	}
	select {
	case answer <- m.Raw:
	default: // answered already
	}
	return true
}

// owns reports whether r's caller is the user that opened session id: the
// verified token's UserID, when the session was opened with one.
func (c *sessionCap) owns(r *http.Request, id string) bool {
	a, principal := c.session(id)
	if a == nil {
		return false
	}
	tok := auth.TokenInfoFromContext(r.Context())
	return principal == "" || (tok != nil && tok.UserID == principal)
}
