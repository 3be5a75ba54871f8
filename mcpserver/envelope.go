package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver/internal/front"
	"github.com/keelgen/keel/runtime"
)

// envelopeCheck refuses, over HTTP, a POST over the cap (413), and one that
// is a batch or whose envelope names a member twice (400); nothing runs.
type envelopeCheck struct {
	next        http.Handler
	max         int64
	readTimeout time.Duration // to read a POST's body whole
	log         *slog.Logger
	inflight    *inflight // with a Verifier: sessionless calls a POST of their own may cancel
	stepUp      *stepUp   // with a Verifier, for a set with scoped tools
	// sessionless, on a server with sessions, serves the requests of the
	// 2026-07-28 revision, which have none (nil on a Stateless server,
	// whose next serves every request so).
	sessionless http.Handler
	// mirrored are the tools with an argument a client mirrors into a
	// header (x-mcp-header), and those arguments (paramheaders.go).
	mirrored map[string][]front.ParamHeader
	// h answers the calls keel answers itself (answer.go).
	h *handler
	// sessions are a server's sessions (nil on a Stateless one), and calls
	// the calls of theirs keel answers (sessioncall.go).
	sessions *sessionCap
	calls    *sessionCalls
}

// isSessionless reports whether r, whose body the front read as m, is a
// request of the sessionless revision: it opens no session and names its
// version (in its header or its _meta), and carries no session id.
func isSessionless(r *http.Request, m *front.Message) bool {
	if r.Header.Get("Mcp-Session-Id") != "" {
		return false
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		return v >= front.SessionlessRevision
	}
	return m != nil && m.PerRequestRevision()
}

func (c envelopeCheck) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		// A GET stream's goroutine waits under this frame for the
		// session's life: the POST's large frame stays off its stack.
		c.next.ServeHTTP(w, r)
		return
	}
	c.post(w, r)
}

// post routes one POST.
func (c envelopeCheck) post(w http.ResponseWriter, r *http.Request) {
	body, m, ok := c.read(w, r)
	if !ok {
		return
	}
	next, noSession := c.next, c.sessionless == nil
	if c.sessionless != nil && isSessionless(r, &m) {
		next, noSession = c.sessionless, true
	}
	var call directCall
	answers, refusal, ok := c.route(w, r, &m, noSession, &call)
	if !ok {
		return
	}
	var direct *directCall
	if answers {
		direct = &call // keel answers it (answer.go)
	}
	if c.stepUp != nil && c.stepUp.refused(w, r, body) {
		return // audited as insufficient_scope
	}
	if refusal != "" {
		c.h.refused(r.Context(), postRequest(r), &m, refusal) // the SDK answers it
	}
	notePostMode(r.Context(), body, &m)
	if c.inflight != nil && noSession && !c.inflight.cancel(r, &m) {
		var forget func()
		r, forget = c.inflight.track(r, &m)
		defer forget()
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" && !noSession && c.sessions != nil && c.sessions.owns(r, id) {
		if c.calls.answered(id, &m) {
			w.WriteHeader(http.StatusAccepted) // the answer to a question keel asked
			return
		}
		if m.Method == "notifications/cancelled" && m.ParamsObject {
			c.calls.cancel(id, &m) // a call keel answers; the SDK reads the notice too
		}
		if direct != nil {
			end, _ := c.sessions.begin(id) // a session whose clock just ran out still answers this call: it passed its checks
			defer end()
			ctx, forget, ok := c.calls.track(r.Context(), id, direct.id)
			if !ok {
				direct = nil // an id in flight: the SDK refuses it
				c.h.refused(r.Context(), postRequest(r), &m, runtime.RefusedProtocol)
			} else {
				defer forget()
				r = r.WithContext(ctx)
			}
		}
	}
	if direct != nil {
		c.answer(w, r, *direct)
		return
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	next.ServeHTTP(w, r)
}

// read reads a POST's body as one message; false when it refused it (a
// body over the cap, not one JSON value, a batch, a member named twice,
// a task request whose Mcp-Name is not its taskId), answered and audited.
func (c envelopeCheck) read(w http.ResponseWriter, r *http.Request) ([]byte, front.Message, bool) {
	refuse := func(m *front.Message, reason string, why string) ([]byte, front.Message, bool) {
		c.log.LogAttrs(r.Context(), slog.LevelWarn, "keel: "+why+"; refused")
		c.h.refused(r.Context(), postRequest(r), m, reason)
		return nil, front.Message{}, false
	}
	// A body not sent whole in time (a slow-loris client) holds a
	// connection and a goroutine no longer: the read fails at the deadline.
	rc := http.NewResponseController(w)
	bounded := rc.SetReadDeadline(time.Now().Add(c.readTimeout)) == nil
	body, err := io.ReadAll(io.LimitReader(r.Body, c.max+1))
	if bounded && err == nil {
		rc.SetReadDeadline(time.Time{}) // the body is read: the call may take its time
	}
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) { // the deadline stays: the server closes the connection, reading no more of it
			http.Error(w, "Request Timeout", http.StatusRequestTimeout)
			return refuse(nil, runtime.RefusedTooSlow, "a POST body not read within ReadBodyTimeout")
		}
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return nil, front.Message{}, false
	}
	if int64(len(body)) > c.max {
		// keel's cap, the SDK's too: every message reaches it as sent.
		http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
		return refuse(nil, runtime.RefusedTooLarge, "a POST body over MaxBodyBytes")
	}
	m, err := front.Read(body)
	switch {
	case err != nil:
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return refuse(nil, runtime.RefusedNotJSON, "a POST body that is not one JSON value")
	case m.Kind != '{':
		// A batch (none in MCP since 2025-06-18, and none the front
		// reads), or a value that is no message: the SDK would read a
		// batch itself, past the front, whatever revision a session
		// opened at.
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return refuse(nil, notAMessage(&m), "a POST body that is no single JSON-RPC message")
	case m.Duplicate:
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return refuse(&m, runtime.RefusedDuplicate, "a JSON-RPC envelope that names a member twice")
	case !taskNameMatches(r, &m):
		headerMismatch(w, m.ID.Bytes(m.Raw))
		return refuse(&m, runtime.RefusedHeaderMismatch, "a task request whose Mcp-Name is not its taskId")
	}
	return body, m, true
}

// route decides a tools/call of a keel tool: true when keel answers it
// (as call), or why the SDK is to refuse it; ok false when it refused the
// call itself (an Mcp-Param header that does not match its argument),
// answered and audited. Any other message goes on as it is.
func (c envelopeCheck) route(w http.ResponseWriter, r *http.Request, m *front.Message, noSession bool, call *directCall) (answers bool, refusal string, ok bool) {
	if !m.IsCall() || c.h.unmigrated[m.CalledName()] { // an Unmigrated tool's call goes to the SDK as sent, its headers checked by the SDK
		return false, "", true
	}
	// A client's SDK that cannot read the arguments cannot write the
	// name's header either (front.Message.NameCarried).
	m.CarryName = r.Header.Get("Mcp-Method") != "" && r.Header.Get("Mcp-Name") == "" && !front.SDKReadable(m.Arguments.Bytes(m.Raw))
	mirrored := c.mirrored[m.CalledName()]
	if len(mirrored) > 0 && r.Header.Get("Mcp-Protocol-Version") >= front.SessionlessRevision && !front.ParamHeadersMatch(r.Header, mirrored, m.Arguments.Bytes(m.Raw)) {
		c.log.LogAttrs(r.Context(), slog.LevelWarn, "keel: a call's Mcp-Param header does not match its arguments; refused")
		c.h.refused(r.Context(), postRequest(r), m, runtime.RefusedHeaderMismatch)
		headerMismatch(w, m.ID.Bytes(m.Raw))
		return false, "", false
	}
	if noSession {
		*call, refusal = c.directCall(r, m)
	} else {
		*call, refusal = c.sessionCall(r, m)
	}
	return refusal == "", refusal, true
}

// postRequest is what a refused POST's audit record asks Options.Context
// about: its token and headers, no session, no params.
func postRequest(r *http.Request) *mcp.CallToolRequest {
	return &mcp.CallToolRequest{Extra: &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header}}
}

// notAMessage is why a value the front read as no single message is
// refused.
func notAMessage(m *front.Message) string {
	if m.Kind == '[' {
		return runtime.RefusedBatch
	}
	return runtime.RefusedNotAMessage
}

// decoded is the front for a transport whose frames the SDK decoded (not
// stdio, not HTTP): a request whose params or their _meta name a member
// twice is made unreadable to the SDK, which answers it "Invalid params.",
// and recorded for the audit.
func (f *callFront) decoded(ctx context.Context, msg jsonrpc.Message) jsonrpc.Message {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || len(req.Params) == 0 {
		return msg
	}
	m, err := front.ReadParams(req.Method, req.Params)
	if err != nil || !m.Duplicate {
		return msg
	}
	f.log.LogAttrs(ctx, slog.LevelWarn, "keel: a request's params name a member twice; refused", slog.String("method", req.Method))
	f.refused(&m, runtime.RefusedDuplicate)
	out := *req
	out.Params = json.RawMessage(`"params named a member twice"`)
	return &out
}

// taskNameMatches reports whether a tasks/get, tasks/update or
// tasks/cancel of the 2026-07-28 revision names its task in Mcp-Name, as
// the tasks extension asks of a client so that a load balancer can route
// it (SEP-2663); any other request passes.
func taskNameMatches(r *http.Request, m *front.Message) bool {
	switch m.Method {
	case methodTaskGet, methodTaskUpdate, methodTaskCancel:
	default:
		return true
	}
	if r.Header.Get("Mcp-Protocol-Version") < front.SessionlessRevision || !m.HasParams || !m.ParamsObject {
		return true // an older revision's, or one the SDK refuses itself
	}
	// The member exactly as the method reads it: a member whose name is
	// "taskId" but for case ("TASKID", which encoding/json would take)
	// matches nothing, so the header is checked against the bytes that run.
	var id []byte
	for _, p := range m.ParamMembers {
		switch {
		case p.Name == "taskId":
			id = p.Value.Bytes(m.Raw)
		case strings.EqualFold(p.Name, "taskId"):
			return false
		}
	}
	var taskID string
	if id == nil || json.Unmarshal(id, &taskID) != nil {
		return true // the method answers Invalid params
	}
	return r.Header.Get("Mcp-Name") == taskID
}

// headerMismatch answers a request whose headers do not match its body:
// 400 and -32020, as SEP-2243 says.
func headerMismatch(w http.ResponseWriter, id []byte) {
	if len(id) == 0 {
		id = []byte("null")
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", json.RawMessage(id), *protocolError(mcp.CodeHeaderMismatch)})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write(body)
}

// mirroredTools are the tools of h whose arguments declare a header, with
// their mirrored arguments.
func mirroredTools(h *handler) map[string][]front.ParamHeader {
	out := map[string][]front.ParamHeader{}
	for _, t := range h.exec.ToolSet().Tools() {
		if mirrored := front.ParamHeaders(t.Info().InputSchema); len(mirrored) > 0 {
			out[t.Info().Name] = mirrored
		}
	}
	return out
}
