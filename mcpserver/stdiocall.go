package mcpserver

import (
	"context"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver/internal/front"
	"github.com/keelgen/keel/runtime"
)

// On a connection that carries one session (stdio, and any transport
// Server.Run or Connect serves but HTTP), keel answers each tools/call
// itself, from the front's one reading of the message: the SDK never
// decodes it. The session stays the SDK's: a call of a client with a
// session logs at the level that client set, and its approval question
// goes to the client over the session.

// callFront answers the calls of one connection.
type callFront struct {
	h     *handler
	log   *slog.Logger
	write func(msg []byte) error // one message to the client

	bound chan struct{} // closed by bind
	ss    *mcp.ServerSession
	ctx   context.Context // the session's: keel's calls end with it
	stop  context.CancelFunc
	mu    sync.Mutex
	calls map[string][]*context.CancelFunc // keel's calls in flight, by their id's bytes
	// running counts keel's calls from answers to their answer's write:
	// at the end of input the connection waits for them (wait).
	running sync.WaitGroup

	// A client may write initialize and its first calls at once (a shell
	// pipe), and close its input after them. The front reads on while the
	// SDK answers, so it keeps what the SDK was handed and has not yet
	// answered: a call read before the session is ready waits for
	// initialize's answer, and the end of input waits for every answer.
	sdkMu      sync.Mutex
	initID     *jsonrpc.ID        // the first initialize request, once read
	ready      chan struct{}      // closed once initialize is answered
	sdkPending map[jsonrpc.ID]int // the SDK's requests not yet answered, by id
	sdkCount   int                // their number
	sdkIdle    chan struct{}      // closed when sdkCount falls to 0, while wait waits
}

func newCallFront(h *handler, log *slog.Logger, write func([]byte) error) *callFront {
	f := &callFront{h: h, log: log, write: write, bound: make(chan struct{}), calls: map[string][]*context.CancelFunc{}, ready: make(chan struct{}), sdkPending: map[jsonrpc.ID]int{}}
	f.ctx, f.stop = context.WithCancel(context.Background())
	return f
}

// handed notes a message handed to the SDK: a request it will answer;
// the first initialize is the one whose answer makes the session ready.
func (f *callFront) handed(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return
	}
	f.sdkMu.Lock()
	defer f.sdkMu.Unlock()
	f.sdkPending[req.ID]++
	f.sdkCount++
	if req.Method == "initialize" && f.initID == nil {
		id := req.ID
		f.initID = &id
	}
}

// written notes a message the SDK wrote: an answer to a request it was
// handed; initialize's makes the session ready (the SDK sets its state
// before it answers).
func (f *callFront) written(msg jsonrpc.Message) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return
	}
	f.sdkMu.Lock()
	defer f.sdkMu.Unlock()
	if f.initID != nil && resp.ID == *f.initID {
		select {
		case <-f.ready:
		default:
			close(f.ready)
		}
	}
	n, ok := f.sdkPending[resp.ID]
	if !ok {
		return
	}
	if n <= 1 {
		delete(f.sdkPending, resp.ID)
	} else {
		f.sdkPending[resp.ID] = n - 1
	}
	f.sdkCount--
	if f.sdkCount == 0 && f.sdkIdle != nil {
		close(f.sdkIdle)
		f.sdkIdle = nil
	}
}

// initializeRead reports whether an initialize request has been read.
func (f *callFront) initializeRead() bool {
	f.sdkMu.Lock()
	defer f.sdkMu.Unlock()
	return f.initID != nil
}

// wait returns once every request read has been answered (keel's calls
// and the SDK's requests), or once done is closed.
func (f *callFront) wait(done <-chan struct{}) {
	ended := make(chan struct{})
	go func() {
		f.running.Wait()
		close(ended)
	}()
	select {
	case <-ended:
	case <-done:
		return
	}
	f.sdkMu.Lock()
	if f.sdkCount == 0 {
		f.sdkMu.Unlock()
		return
	}
	idle := make(chan struct{})
	f.sdkIdle = idle
	f.sdkMu.Unlock()
	select {
	case <-idle:
	case <-done:
	}
}

// bind makes ss, the session the SDK runs on the connection, known: from
// here on keel answers its calls, each ending with ctx or close.
func (f *callFront) bind(ctx context.Context, ss *mcp.ServerSession) {
	f.ss = ss
	context.AfterFunc(ctx, f.stop)
	close(f.bound)
}

// close ends the calls in flight.
func (f *callFront) close() { f.stop() }

// answers reports whether keel answers m, and starts its answer: a
// tools/call of a keel tool that the SDK would run. m.raw must stay as it
// is until the call ends.
func (f *callFront) answers(m *front.Message) bool {
	if f.h == nil || m.Duplicate || !m.IsCall() || f.h.unmigrated[m.CalledName()] {
		return false
	}
	select {
	case <-f.bound:
	case <-f.ctx.Done():
		return false
	}
	params, ok := m.CallParams()
	if !ok {
		return false
	}
	call := directCall{id: m.ID.Bytes(m.Raw), req: &mcp.CallToolRequest{Session: f.ss, Params: params}}
	if _, has := params.Meta[mcp.MetaKeyProtocolVersion]; has {
		if !m.RevisionMeta(params.Meta) {
			return false // the SDK refuses it
		}
		call.revision, call.logLevel = true, front.MetaLogLevel(params.Meta)
	} else if f.ss.InitializeParams() == nil && !f.initializeRead() {
		f.refuseEarly(m, call.id)
		return true
	}
	ctx, cancel := context.WithCancel(f.ctx)
	key, mine := string(call.id), &cancel
	f.mu.Lock()
	f.calls[key] = append(f.calls[key], mine)
	f.mu.Unlock()
	f.running.Add(1)
	go func() {
		defer f.running.Done()
		defer f.forget(key, mine)
		if !call.revision && !f.sessionReady(ctx) {
			f.refuseEarly(m, call.id)
			return
		}
		f.answer(ctx, call)
	}()
	return true
}

// refuseEarly refuses a call read before the session is ready: no
// initialize came before it, or initialize failed.
func (f *callFront) refuseEarly(m *front.Message, id []byte) {
	f.log.LogAttrs(f.ctx, slog.LevelWarn, "keel: a tools/call before initialize was answered; refused", slog.String("id", string(id)))
	f.refused(m, runtime.RefusedProtocol)
	f.write(errorAnswer(id, protocolError(jsonrpc.CodeInvalidRequest)))
}

// sessionReady waits for the SDK's answer to initialize and reports
// whether the session it made is ready for calls.
func (f *callFront) sessionReady(ctx context.Context) bool {
	if f.ss.InitializeParams() != nil {
		return true
	}
	select {
	case <-f.ready:
	case <-ctx.Done():
		return false
	}
	return f.ss.InitializeParams() != nil
}

// refused records a message of the connection the front refused (m nil:
// none was read), with the session once the SDK runs it.
func (f *callFront) refused(m *front.Message, reason string) {
	if f.h == nil {
		return
	}
	req := &mcp.CallToolRequest{}
	select {
	case <-f.bound:
		req.Session = f.ss
	default:
	}
	f.h.refused(f.ctx, req, m, reason)
}

// keelCall reports whether m is a tools/call of a keel tool: one keel
// answers, or refuses.
func (f *callFront) keelCall(m *front.Message) bool {
	return f.h != nil && m.IsCall() && !f.h.unmigrated[m.CalledName()]
}

// forget drops a call that ended from those a cancel may end.
func (f *callFront) forget(key string, cancel *context.CancelFunc) {
	(*cancel)()
	f.mu.Lock()
	defer f.mu.Unlock()
	dropCall(f.calls, key, cancel)
}

// cancelCall ends the call of keel's a notifications/cancelled names,
// when only one in flight has that id; the SDK reads the notice too.
func (f *callFront) cancelCall(m *front.Message) {
	if m.Method != "notifications/cancelled" || !m.ParamsObject {
		return
	}
	for _, p := range m.ParamMembers {
		if p.Name != "requestId" {
			continue
		}
		f.mu.Lock()
		list := f.calls[string(p.Value.Bytes(m.Raw))]
		f.mu.Unlock()
		if len(list) == 1 {
			(*list[0])()
		}
	}
}

// answer runs one call and writes its answer.
func (f *callFront) answer(ctx context.Context, call directCall) {
	h := f.h
	defer func() {
		if p := recover(); p != nil {
			f.log.LogAttrs(ctx, slog.LevelError, "keel: a panic while answering a call", slog.Any("panic", p))
			f.write(errorAnswer(call.id, protocolError(jsonrpc.CodeInternalError)))
		}
	}()
	var peer callPeer = sessionPeer{f.ss}
	if call.revision {
		peer = messagePeer{call.logLevel, func(msg []byte) { f.write(msg) }} // its level is its request's
	}
	f.write(h.answerOf(ctx, call, peer, true, f.log, f.askClient)) // a question goes over the session
}

// frontedConnection is a connection whose messages the SDK's transport
// decodes (not stdio, not HTTP): each request is read by the front as its
// params' bytes, a request whose params name a member twice refused, and
// keel answers each tools/call.
type frontedConnection struct {
	mcp.Connection
	front *callFront
}

func (c frontedConnection) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		c.front.handed(msg)
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !(req.Method == "tools/call" || req.Method == "notifications/cancelled") {
			return c.front.decoded(ctx, msg), nil
		}
		raw, err := jsonrpc.EncodeMessage(req)
		if err != nil {
			return c.front.decoded(ctx, msg), nil
		}
		m, err := front.Read(raw)
		if err != nil {
			return c.front.decoded(ctx, msg), nil
		}
		c.front.cancelCall(&m)
		if !c.front.answers(&m) {
			if c.front.keelCall(&m) && !m.Duplicate {
				c.front.refused(&m, runtime.RefusedProtocol) // the SDK answers its refusal
			}
			return c.front.decoded(ctx, msg), nil
		}
	}
}

func (c frontedConnection) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	c.front.written(msg)
	return err
}

func (c frontedConnection) Close() error {
	c.front.close()
	return c.Connection.Close()
}

// writeDecoded writes one message keel made to a connection of the SDK's.
func writeDecoded(conn mcp.Connection, log *slog.Logger) func([]byte) error {
	return func(b []byte) error {
		msg, err := jsonrpc.DecodeMessage(b)
		if err != nil {
			log.LogAttrs(context.Background(), slog.LevelError, "keel: an answer keel wrote is not JSON-RPC", slog.Any("error", err))
			return err
		}
		return conn.Write(context.Background(), msg)
	}
}

// stdioFront is the callFront of keel's stdio framing.
func stdioFront(c *stdioConn, h *handler, log *slog.Logger) *callFront {
	return newCallFront(h, log, func(b []byte) error { return c.writeRaw(append(b, '\n')) })
}

// askClient puts one input request to the client over the session.
func (f *callFront) askClient(ctx context.Context, p mcp.InputRequest) (mcp.InputResponse, error) {
	switch p := p.(type) {
	case *mcp.ElicitParams:
		return f.ss.Elicit(ctx, p)
	case *mcp.CreateMessageParams:
		return f.ss.CreateMessage(ctx, p)
	case *mcp.ListRootsParams:
		return f.ss.ListRoots(ctx, p)
	}
	return nil, errInputRequest
}
