package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver/internal/front"
	"github.com/keelgen/keel/runtime"
)

// keel answers a sessionless tools/call over HTTP itself, from the front's
// one reading of its bytes (internal/front): the request the handler sees is
// built from the spans the front read, the executor runs the arguments as
// they came, and the answer is written here. The SDK never decodes the
// message, and runs no session for it. A call the SDK would refuse before
// running it (a header, a version or a member it does not accept) is not
// answered here: it goes to the SDK, which refuses it as before.

// directCall is a tools/call keel answers itself: the request its hooks
// and handler see, and how its answer is written.
type directCall struct {
	req      *mcp.CallToolRequest
	id       []byte // the request's id, as sent
	revision bool   // of the 2026-07-28 revision: a result names its type and the server
	logLevel mcp.LoggingLevel
	session  string // the session's id, for a call in one
}

// directCall reads m, a sessionless POST's tools/call, as the request keel
// answers; for one the SDK is to refuse, why (the audit's refusal).
func (c envelopeCheck) directCall(r *http.Request, m *front.Message) (directCall, string) {
	if len(r.Header.Values("Last-Event-ID")) > 0 || !front.PostHeadersOK(r.Header) {
		return directCall{}, runtime.RefusedProtocol
	}
	params, ok := m.CallParams()
	if !ok {
		return directCall{}, runtime.RefusedProtocol
	}
	header := r.Header.Get("Mcp-Protocol-Version")
	metaVersion, _ := params.Meta[mcp.MetaKeyProtocolVersion].(string)
	call := directCall{id: m.ID.Bytes(m.Raw), revision: header >= front.SessionlessRevision}
	switch {
	case call.revision || metaVersion != "":
		// The 2026-07-28 revision: its version in the header and the
		// _meta alike, its client's capabilities in the _meta.
		if header != metaVersion || !m.RevisionMeta(params.Meta) {
			return directCall{}, runtime.RefusedProtocol
		}
		call.revision, call.logLevel = true, front.MetaLogLevel(params.Meta)
		if r.Header.Get("Mcp-Method") != "tools/call" || (r.Header.Get("Mcp-Name") != params.Name && !m.NameCarried()) {
			return directCall{}, runtime.RefusedHeaderMismatch // SEP-2243's headers: the SDK answers -32020
		}
	case header != "" && !slices.Contains(mcp.SupportedProtocolVersions(), header):
		return directCall{}, runtime.RefusedProtocol
	default:
		call.logLevel = "info" // as the SDK's session of one POST has it
	}
	call.req = &mcp.CallToolRequest{Params: params, Extra: &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header}}
	return call, ""
}

// answer runs call and writes its answer to w.
func (c envelopeCheck) answer(w http.ResponseWriter, r *http.Request, call directCall) {
	h := c.h
	out := &postAnswer{w: w}
	ctx := r.Context()
	defer func() {
		// The server owner's hooks run here (Options.Context and
		// RequestContext, a task store): one that panics fails this call,
		// not the connection.
		if p := recover(); p != nil {
			c.log.LogAttrs(ctx, slog.LevelError, "keel: a panic while answering a call", slog.Any("panic", p))
			out.finish(errorAnswer(call.id, protocolError(jsonrpc.CodeInternalError)))
		}
	}()
	out.finish(h.answerOf(ctx, call, messagePeer{call.logLevel, out.request}, call.revision || call.session != "", c.log,
		func(ctx context.Context, p mcp.InputRequest) (mcp.InputResponse, error) {
			return c.calls.ask(ctx, call.session, p, out.request) // on the call's stream
		}))
}

// answerOf runs call, a tools/call keel answers, and is its answer: the
// task it became, or its result. A question for the person at a client of
// a revision before 2026-07-28 goes by elicit, and the call runs once more
// with the answer, as the SDK does; mayAsk says whether one may be asked.
func (h *handler) answerOf(ctx context.Context, call directCall, peer callPeer, mayAsk bool, log *slog.Logger,
	elicit clientAsker) []byte {
	res, err, ok := h.taskCall(ctx, call.req)
	if !ok {
		var r *mcp.CallToolResult
		r, err = h.run(ctx, call.req, runOptions{peer: peer, mayAsk: mayAsk})
		if err == nil && r.InputRequests != nil && !call.revision {
			r, err = h.askAndRerun(ctx, call.req, r, peer, elicit)
		}
		res = r
	}
	if err != nil {
		return errorAnswer(call.id, sanitizeError(err, log))
	}
	return h.resultAnswer(call.id, res, call.revision)
}

// clientAsker puts one request to a client over its session (an
// elicitation, a sampling request, a roots request) and returns its answer.
type clientAsker func(ctx context.Context, p mcp.InputRequest) (mcp.InputResponse, error)

// askAndRerun asks the client the input requests of r (keel's approval, a
// handler's own) over its session and runs the call again with the
// answers and r's request state, as the SDK does for a client of a
// revision before 2026-07-28, round after round while the handler asks
// (an answer that does not read is asked again). Such a client cannot
// read an input request in a result: after askRounds runs the call ends
// with the tool result input_required.
func (h *handler) askAndRerun(ctx context.Context, req *mcp.CallToolRequest, r *mcp.CallToolResult, peer callPeer, ask clientAsker) (*mcp.CallToolResult, error) {
	for round := 1; r.InputRequests != nil; round++ {
		answers := make(mcp.InputResponseMap, len(r.InputRequests))
		for id, ir := range r.InputRequests {
			res, err := ask(ctx, ir)
			if err != nil {
				return nil, err
			}
			answers[id] = res
		}
		params := *req.Params
		params.InputResponses, params.RequestState = answers, r.RequestState
		again := *req
		again.Params = &params
		var err error
		r, err = h.run(ctx, &again, runOptions{peer: peer, mayAsk: true, lastRound: round+1 >= askRounds})
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

// askRounds bounds the runs of one call whose handler asks a client of a
// revision before 2026-07-28, as runtime/answercall's MaxRounds bounds a
// harness's (a test holds them equal); not imported, since that package's
// tests would bring their providers into every server's go.sum.
const askRounds = 8

// errorAnswer is a JSON-RPC error response under id.
func errorAnswer(id []byte, e *jsonrpc.Error) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, e})
	return b
}

// sanitizeError is err as the client reads it (protocol.go's sanitize).
func sanitizeError(err error, log *slog.Logger) *jsonrpc.Error {
	clean, _ := sanitize(&jsonrpc.Response{Error: err}, log).(*jsonrpc.Response)
	if e, ok := clean.Error.(*jsonrpc.Error); ok {
		return e
	}
	return protocolError(jsonrpc.CodeInternalError)
}

// resultAnswer is a JSON-RPC result response under id. A result of the
// 2026-07-28 revision names its type (an input request's, else complete)
// and the server in its _meta, as the SDK marks those it answers.
func (h *handler) resultAnswer(id []byte, res mcp.Result, revision bool) []byte {
	if cr, ok := res.(*mcp.CallToolResult); ok && cr.InputRequests == nil {
		out := make([]byte, 0, resultSize(cr)+len(id))
		out = append(out, `{"jsonrpc":"2.0","id":`...)
		out = append(out, id...)
		out = append(out, `,"result":`...)
		if out, ok := h.appendCallResult(out, cr, revision); ok {
			return append(out, '}')
		}
	}
	resultType := ""
	if revision {
		m := res.GetMeta()
		if m == nil {
			m = map[string]any{}
		}
		if _, ok := m[mcp.MetaKeyServerInfo]; !ok {
			m[mcp.MetaKeyServerInfo] = h.impl
		}
		res.SetMeta(m)
		if cr, ok := res.(*mcp.CallToolResult); ok {
			resultType = "complete"
			if cr.InputRequests != nil {
				resultType = "input_required"
			}
		}
	}
	b, err := json.Marshal(res)
	if err != nil || len(b) < 2 || b[0] != '{' {
		return errorAnswer(id, protocolError(jsonrpc.CodeInternalError))
	}
	out := make([]byte, 0, len(b)+len(id)+64)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"result":`...)
	if resultType != "" {
		out = append(out, `{"resultType":"`+resultType+`"`...)
		if len(b) > 2 {
			out = append(out, ',')
		}
		out = append(out, b[1:]...)
	} else {
		out = append(out, b...)
	}
	return append(out, '}')
}

// postAnswer writes one call's answer to its POST: its notifications as
// events while it runs, then its answer, as the last event when it wrote
// any and else as application/json.
type postAnswer struct {
	w http.ResponseWriter

	mu     sync.Mutex
	events int
	done   bool // the answer is written: nothing more is
}

// messagePeer sends a call's notifications as messages keel writes (send),
// its log at the level its client listens at ("" for none).
type messagePeer struct {
	level mcp.LoggingLevel
	send  func(msg []byte)
}

func (p messagePeer) notifyProgress(_ context.Context, params *mcp.ProgressNotificationParams) {
	p.notify("notifications/progress", params)
}

func (p messagePeer) log(_ context.Context, params *mcp.LoggingMessageParams) {
	if p.level == "" || logRank(params.Level) < logRank(p.level) {
		return // the client listens to none, or not at this level
	}
	p.notify("notifications/message", params)
}

func (p messagePeer) notify(method string, params any) {
	if b, err := json.Marshal(params); err == nil {
		p.send(append(append([]byte(`{"jsonrpc":"2.0","method":"`+method+`","params":`), b...), '}'))
	}
}

// request writes a message to the client (a notification, a question)
// as an event, unless the answer was written.
func (p *postAnswer) request(msg []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.event(msg)
		p.events++
	}
}

// event writes one message as an event of the POST's stream.
func (p *postAnswer) event(msg []byte) {
	if p.events == 0 {
		h := p.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache, no-transform")
	}
	var b bytes.Buffer
	b.Grow(len(msg) + 32)
	b.WriteString("event: message\ndata: ")
	b.Write(msg)
	b.WriteString("\n\n")
	p.w.Write(b.Bytes())
	http.NewResponseController(p.w).Flush()
}

// finish writes the answer; no notification follows it.
func (p *postAnswer) finish(body []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	if p.events > 0 {
		p.event(body)
		return
	}
	status := answerStatus(body)
	if pw, ok := p.w.(*postWriter); ok {
		pw.answer(body, status)
		return
	}
	p.w.Header().Set("Content-Type", "application/json")
	p.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	p.w.WriteHeader(status)
	p.w.Write(body)
}

// answerStatus is the HTTP status of an answer written whole: 400 for the
// errors the 2026-07-28 revision says must be (a header that disagrees, a
// capability the client did not declare, a version it does not serve),
// 200 for everything else.
func answerStatus(body []byte) int {
	if !bytes.Contains(body, []byte(`"error":{"code":-3202`)) {
		return http.StatusOK
	}
	var a struct {
		Error *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &a) == nil && a.Error != nil {
		switch a.Error.Code {
		case mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapabilities, mcp.CodeUnsupportedProtocolVersion:
			return http.StatusBadRequest
		}
	}
	return http.StatusOK
}

// logRank orders the protocol's log levels; one it does not name is
// the lowest, as the SDK ranks it.
func logRank(l mcp.LoggingLevel) int {
	switch l {
	case "info":
		return 1
	case "notice":
		return 2
	case "warning":
		return 3
	case "error":
		return 4
	case "critical":
		return 5
	case "alert":
		return 6
	case "emergency":
		return 7
	}
	return 0
}
