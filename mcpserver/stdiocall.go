package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// keel answers a tools/call on stdio itself, from the front's one reading
// of its line: the SDK never decodes it. The session stays the SDK's: a
// call of a client with a session logs at the level that client set, and
// its approval question goes to the client over the session.

// bind makes ss, the session the SDK runs on c, known: from here on keel
// answers c's calls, each ending with ctx or the connection.
func (c *stdioConn) bind(ctx context.Context, ss *mcp.ServerSession) {
	c.ss = ss
	stop := context.AfterFunc(ctx, c.stop)
	go func() { <-c.closed; stop() }()
	close(c.bound)
}

// answers reports whether keel answers m, and starts its answer: a
// tools/call of a keel tool that the SDK would run.
func (c *stdioConn) answers(m *message) bool {
	if c.h == nil || m.duplicate || !m.isCall() || c.h.unmigrated[m.calledName()] {
		return false
	}
	select {
	case <-c.bound:
	case <-c.closed:
		return false
	}
	m.raw = bytes.Clone(m.raw) // the line's buffer is read into again; the call keeps its bytes
	params, ok := m.callParams()
	if !ok {
		return false
	}
	call := directCall{id: m.id.bytesOf(m.raw), req: &mcp.CallToolRequest{Session: c.ss, Params: params}}
	if _, has := params.Meta[mcp.MetaKeyProtocolVersion]; has {
		if !revisionMeta(params.Meta) {
			return false // the SDK refuses it
		}
		call.revision, call.logLevel = true, metaLogLevel(params.Meta)
	} else if c.ss.InitializeParams() == nil {
		return false // before initialize: the SDK refuses it
	}
	ctx, cancel := context.WithCancel(c.ctx)
	key, mine := string(call.id), &cancel
	c.mu.Lock()
	c.calls[key] = append(c.calls[key], mine)
	c.mu.Unlock()
	go func() {
		defer c.forget(key, mine)
		c.answer(ctx, call)
	}()
	return true
}

// forget drops a call that ended from those a cancel may end.
func (c *stdioConn) forget(key string, cancel *context.CancelFunc) {
	(*cancel)()
	c.mu.Lock()
	defer c.mu.Unlock()
	list := c.calls[key]
	for i := range list {
		if list[i] == cancel {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(c.calls, key)
	} else {
		c.calls[key] = list
	}
}

// cancelCall ends the call of keel's a notifications/cancelled names, when
// only one in flight has that id.
func (c *stdioConn) cancelCall(m *message) {
	if !m.paramsObject {
		return
	}
	for _, p := range m.paramMembers {
		if p.name != "requestId" {
			continue
		}
		key := string(p.value.bytesOf(m.raw))
		c.mu.Lock()
		list := c.calls[key]
		c.mu.Unlock()
		if len(list) == 1 {
			(*list[0])()
		}
	}
}

// answer runs one call and writes its answer.
func (c *stdioConn) answer(ctx context.Context, call directCall) {
	h := c.h
	defer func() {
		if p := recover(); p != nil {
			c.log.LogAttrs(ctx, slog.LevelError, "keel: a panic while answering a call", slog.Any("panic", p))
			c.writeRaw(append(errorAnswer(call.id, protocolError(jsonrpc.CodeInternalError)), '\n'))
		}
	}()
	var peer callPeer = sessionPeer{c.ss}
	if call.revision {
		peer = &framePeer{c: c, level: call.logLevel}
	}
	res, err, ok := h.taskCall(ctx, call.req)
	if !ok {
		var r *mcp.CallToolResult
		r, err = h.run(ctx, call.req, runOptions{peer: peer, mayAsk: true})
		if err == nil && r.InputRequests != nil && !call.revision {
			// A client of an older revision is asked over its session, and
			// the call runs once more with its answers, as the SDK does.
			r, err = c.askAndRerun(ctx, call.req, r, peer)
		}
		res = r
	}
	var body []byte
	if err != nil {
		body = errorAnswer(call.id, sanitizeError(err, c.log))
	} else {
		body = h.resultAnswer(call.id, res, call.revision)
	}
	c.writeRaw(append(body, '\n'))
}

// askAndRerun asks the client the input requests of r over the session and
// runs the call again with the answers and r's request state.
func (c *stdioConn) askAndRerun(ctx context.Context, req *mcp.CallToolRequest, r *mcp.CallToolResult, peer callPeer) (*mcp.CallToolResult, error) {
	answers := make(mcp.InputResponseMap, len(r.InputRequests))
	for id, ir := range r.InputRequests {
		p, ok := ir.(*mcp.ElicitParams)
		if !ok {
			return nil, protocolError(jsonrpc.CodeInternalError) // keel asks nothing else
		}
		res, err := c.ss.Elicit(ctx, p)
		if err != nil {
			return nil, err
		}
		answers[id] = res
	}
	params := *req.Params
	params.InputResponses, params.RequestState = answers, r.RequestState
	again := *req
	again.Params = &params
	return c.h.run(ctx, &again, runOptions{peer: peer, mayAsk: true})
}

// framePeer writes the notifications of a call of the 2026-07-28 revision
// on stdio, at the level its request's _meta names.
type framePeer struct {
	c     *stdioConn
	level mcp.LoggingLevel
}

func (f *framePeer) notifyProgress(_ context.Context, p *mcp.ProgressNotificationParams) {
	f.write("notifications/progress", p)
}

func (f *framePeer) log(_ context.Context, p *mcp.LoggingMessageParams) {
	if f.level == "" || logRank(p.Level) < logRank(f.level) {
		return
	}
	f.write("notifications/message", p)
}

func (f *framePeer) write(method string, params any) {
	b, err := json.Marshal(params)
	if err != nil {
		return
	}
	f.c.writeRaw(append(append([]byte(`{"jsonrpc":"2.0","method":"`+method+`","params":`), b...), "}\n"...))
}
