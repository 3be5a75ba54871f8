// Package mcpserver serves a keel tool set over the Model Context Protocol,
// on stdio or Streamable HTTP, beside the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). keel's front reads every
// message once and answers each tools/call itself (internal/front, answer.go,
// sessioncall.go, stdiocall.go); the SDK's server, under keel's Server,
// keeps the session and answers the rest.
//
// tools/list shows each tool's inputSchema and outputSchema exactly as keel
// generated them (never the SDK's inference) and annotations set from the
// tool's effect. tools/call runs through keel's executor unchanged: success
// returns structuredContent and the same JSON as text (or, for a result
// type with an MCPText method, its author's text); every keel failure
// returns isError with keel's result JSON (its code included), except
// two that are JSON-RPC errors: unknown_tool, which the protocol makes
// -32602, and rate_limit_exceeded, -32029 as MCP servers answer it
// (CodeRateLimited; over HTTP, 429 with Retry-After). Every
// tools/call reaches the executor, whatever its name, so an unknown name is
// audited like any other call. The ExecutionContext of a call comes from the
// server owner's hook (over HTTP: from the verified bearer token, see
// TokenContext), never from the client. No protocol error the server sends
// carries a Go type name, a path or the rejected input: each says only its
// JSON-RPC code's fixed text (the detail goes to the protected log).
//
// Options.Approvals asks the client's person to approve a call the policy
// sent for approval, as an input request; Options.Tasks answers long calls
// as tasks (the io.modelcontextprotocol/tasks extension), kept in a store
// any replica reads, their calls run here or on a TaskRunner.
package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/internal/execinfo"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/report"
	"github.com/keelgen/keel/runtime/resultjson"
)

// ContextFunc decides the ExecutionContext of one call: per session (stdio:
// req.Session) or, over HTTP, from the verified bearer token
// (req.Extra.TokenInfo; see TokenContext). A call with no session (a
// Stateless server's, and every request of the 2026-07-28 revision) has
// req.Session nil: req.ClientInfo() and req.ClientCapabilities() read its
// client from the request. Never derive a principal, tenant or group from
// a request header: the client chooses those.
type ContextFunc func(ctx context.Context, req *mcp.CallToolRequest) runtime.ExecutionContext

// Options configure a server.
type Options struct {
	// Name and Version identify the server to clients (default "keel" and
	// the runtime version).
	Name, Version string
	// Context gives each call its ExecutionContext. Nil means the zero
	// ExecutionContext: read tools run, write tools need approval.
	Context ContextFunc
	// ProgressInterval is the least time between two progress
	// notifications of one call (default report.ProgressInterval); reports
	// in between are coalesced, the latest delivered when it ends.
	ProgressInterval time.Duration
	// Approvals, when set, asks the person at a client that takes
	// elicitation to approve a call the policy sent for approval, as an
	// input request (see Approvals). The executor needs
	// runtime.WithApprovals with the same grant key.
	Approvals *Approvals
	// StateSecret signs the request state of a handler's own input
	// requests (package ask): at least 32 random bytes, the same on every
	// replica. Without it, the Approvals' state secret signs them; without
	// either, a random secret of this process does, and a state reads only
	// on the replica that made it.
	StateSecret []byte
	// Tasks, when set, answers calls of its tools with tasks (SEP-2663)
	// to a client that declares the extension (see Tasks).
	Tasks *Tasks
	// RequestContext, when set, derives each call's context from its
	// request: the place to hand the handler values of this request (a
	// header the server chose, a claim of the verified token in
	// req.Extra.TokenInfo) with context.WithValue, under a key type of
	// your own. The handler reads them from its context; the executor's
	// checks read none of them, and neither the arguments nor the audit
	// hold them. A task's call keeps them (on a TaskRunner they stay
	// behind: give the worker what it needs).
	RequestContext func(ctx context.Context, req *mcp.CallToolRequest) context.Context
	// Unmigrated names tools not yet moved to keel, which you add to the
	// SDK's server (Server.SDK) with its AddTool during a move (docs/migrate.md):
	// their calls go to the SDK's handler, not through the executor, so
	// they have none of keel's checks and no keel audit record. A name in
	// the set is keel's and stays keel's.
	Unmigrated []string
	// Taint remembers, per conversation, that a result brought text from
	// outside (a tool whose output marks members x-keel-untrusted), so that
	// the calls after it carry ExecutionContext.Tainted with no code of
	// yours: a session, the stdio connection, or, without sessions, the
	// conversation a client names in _meta (MetaConversation), else its
	// caller. Default: this process's memory; replicas share one
	// (redisreplay.Store). A ContextFunc that sets Tainted itself keeps it.
	Taint TaintStore
	// TaintTTL is how long a mark lasts when its session does not close
	// first (default DefaultTaintTTL).
	TaintTTL time.Duration
	// MaxCalls caps the tools/call requests running at once, every
	// caller's together (default DefaultMaxCalls), and MaxCallsPerCaller
	// one caller's, by tenant and principal (default
	// DefaultMaxCallsPerCaller): a call past either is refused before it
	// runs, -32029 with a wait of a second (over HTTP, 429 with
	// Retry-After), and audited as a refused message (busy). A task's run counts
	// against the tasks' own bound instead.
	MaxCalls, MaxCallsPerCaller int
	// Logger is the protected log for the detail of protocol errors and of
	// refused messages (default slog.Default()).
	Logger *slog.Logger
}

// Members of a tools/call request's _meta that keel reads. A client that
// takes part in the approval loop names its call (the call_id an approval
// request and a grant are bound to) and, once a person approved it,
// presents the grant. A grant is signed and bound to the tenant, principal,
// call and arguments, so the client cannot forge or widen one.
const (
	MetaCallID = "keel/call_id"
	MetaGrant  = "keel/grant"
)

// maxCallIDBytes bounds a client-chosen call id.
const maxCallIDBytes = 128

// New returns an MCP server whose tools are exactly exec's, each call run
// by exec: the set comes from the executor, so no other can be listed.
func New(exec *runtime.Executor, opts Options) *Server {
	if opts.Name == "" {
		opts.Name = "keel"
	}
	if opts.Version == "" {
		opts.Version = runtime.Version
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Context == nil {
		opts.Context = func(context.Context, *mcp.CallToolRequest) runtime.ExecutionContext {
			return runtime.ExecutionContext{}
		}
	}
	// Tools, whose list never changes while the server runs (the set is
	// compiled in: no listChanged to subscribe to), and logging. Prompts and
	// resources are declared as the SDK serves them, empty lists, so a
	// client asking for them reads "none" rather than an error.
	caps := &mcp.ServerCapabilities{
		Logging:   &mcp.LoggingCapabilities{},
		Tools:     &mcp.ToolCapabilities{},
		Prompts:   &mcp.PromptCapabilities{},
		Resources: &mcp.ResourceCapabilities{},
	}
	h := &handler{exec: exec, context: opts.Context, progressEvery: opts.ProgressInterval, approvals: opts.Approvals, request: opts.RequestContext,
		inputs:     newInputs(opts.StateSecret, opts.Approvals, exec),
		unmigrated: map[string]bool{}, impl: &mcp.Implementation{Name: opts.Name, Version: opts.Version}, log: opts.Logger,
		taint: newTaint(exec, opts), running: newCalls(opts.MaxCalls, opts.MaxCallsPerCaller)}
	h.readTools(opts.Unmigrated)
	if opts.Tasks != nil {
		h.tasks = newTaskServer(*opts.Tasks, exec.ToolSet(), h.inputs.secret)
		caps.Extensions = map[string]any{TasksExtension: map[string]any{}}
	}
	s := mcp.NewServer(h.impl, &mcp.ServerOptions{
		Capabilities: caps,
		SetCacheable: func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
			// A list that varies by caller is this caller's: no shared
			// cache may serve it to another (SEP-2549's "private").
			if _, ok := req.(*mcp.ListToolsRequest); ok && execinfo.Varies(exec) {
				c.CacheScope = "private"
			}
		},
	})
	if h.tasks != nil {
		registerTasks(s)
	}
	for _, t := range exec.ToolSet().Tools() {
		if execinfo.Offered(exec, t) { // one the tool groups leave out is absent, and its call the executor's unknown_tool
			s.AddTool(Tool(t.Info()), refuseSDKCall) // listed by the SDK, answered by keel
		}
	}
	// keel answers each tools/call itself, from the front's reading of its
	// bytes (answer.go, stdiocall.go): one that reaches the SDK's decoder is
	// an Unmigrated tool's, or one the front did not answer, which is
	// refused here, whatever the SDK read.
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if call, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" {
				if call.Params != nil && h.unmigrated[call.Params.Name] {
					return next(ctx, method, req) // the SDK's tool, until it moves
				}
				h.log.LogAttrs(ctx, slog.LevelWarn, "keel: a tools/call the front did not answer reached the SDK; refused")
				return nil, protocolError(jsonrpc.CodeInvalidParams)
			}
			if set, ok := req.(*mcp.ServerRequest[*mcp.SetLoggingLevelParams]); ok && method == "logging/setLevel" {
				res, err := next(ctx, method, req)
				if err == nil && set.Params != nil && set.Session != nil && set.Session.ID() != "" {
					h.levels.Store(set.Session.ID(), set.Params.Level)
				}
				return res, err
			}
			if method == "initialize" && h.keepOpening.Load() {
				res, err := next(ctx, method, req)
				// Kept whether initialize succeeded or not: a session the
				// SDK holds gets keel's clock either way.
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() != "" {
					h.opening.Store(ss.ID(), ss)
				}
				return res, err
			}
			if list, ok := req.(*mcp.ListToolsRequest); ok && method == "tools/list" && execinfo.Varies(exec) {
				return h.visible(ctx, list, next)
			}
			if tr, ok := req.(*mcp.ServerRequest[*taskParams]); ok && h.tasks != nil {
				return h.serveTask(ctx, method, tr)
			}
			if notServed[method] {
				return nil, protocolError(jsonrpc.CodeMethodNotFound)
			}
			return next(ctx, method, req)
		}
	})
	return &Server{sdk: s, h: h, log: opts.Logger}
}

// notServed are the methods of features a keel server does not declare
// (completion, resource subscriptions), which the SDK would answer as if it
// did: a method the server does not serve is -32601 (SEP-2575).
var notServed = map[string]bool{
	"completion/complete": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
}

// visible answers tools/list with the tools the caller may call
// (runtime.Executor.Visible: the token's scopes, the executor's
// ToolFilter), in one page: the SDK pages the whole set, and a cursor it
// hands out names the last tool of a page, which may be hidden. So the
// SDK's pages are read to the end here and filtered, and no cursor goes to
// the client; one a client sends anyway is refused, as the spec says of a
// cursor the server did not give. The caller is who Options.Context says
// it is for a call, asked with a request that names no tool.
func (h *handler) visible(ctx context.Context, req *mcp.ListToolsRequest, next mcp.MethodHandler) (mcp.Result, error) {
	if req.Params != nil && req.Params.Cursor != "" {
		return nil, protocolError(jsonrpc.CodeInvalidParams)
	}
	ec := h.context(ctx, &mcp.CallToolRequest{Session: req.Session, Extra: req.Extra, Params: &mcp.CallToolParamsRaw{}})
	var first *mcp.ListToolsResult
	kept := []*mcp.Tool{}
	for page := req; ; {
		res, err := next(ctx, "tools/list", page)
		if err != nil {
			return nil, err
		}
		list, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return res, nil
		}
		if first == nil {
			first = list
		}
		for _, t := range list.Tools {
			if h.unmigrated[t.Name] || h.exec.Visible(ctx, ec, h.exec.ToolSet().Lookup(t.Name)) {
				kept = append(kept, t)
			}
		}
		if list.NextCursor == "" {
			break
		}
		params := mcp.ListToolsParams{Cursor: list.NextCursor}
		if req.Params != nil {
			params.Meta = req.Params.Meta
		}
		page = &mcp.ListToolsRequest{Session: req.Session, Extra: req.Extra, Params: &params}
	}
	out := *first
	out.Tools, out.NextCursor = kept, ""
	return &out, nil
}

// Tool is the MCP description of a keel tool: keel's own schemas (the
// input's lists of types as anyOf, which every client reads: mcpform.go), its
// title, and annotations from its effect and the hints its directive states,
// with the defaults a reviewer would want when it states none: a write is
// destructive, a read idempotent and a write not, and a tool open-world
// (it may reach beyond the process) unless its author says closed.
func Tool(info runtime.ToolInfo) *mcp.Tool {
	destructive, openWorld := info.Destructive(), info.OpenWorld()
	return &mcp.Tool{
		Name:         info.Name,
		Title:        info.Title,
		Description:  runtime.ModelTool{Description: info.Description, ErrorCodes: info.Errors, Untrusted: info.HasUntrustedOutput()}.DescriptionForModel(),
		InputSchema:  mcpInputSchema(info.InputSchema),
		OutputSchema: json.RawMessage(info.OutputSchema),
		Meta:         toolMeta(info),
		Icons:        icons(info.Icons),
		Annotations: &mcp.ToolAnnotations{
			Title:           info.Title,
			ReadOnlyHint:    info.Effect == runtime.EffectRead,
			DestructiveHint: &destructive,
			IdempotentHint:  info.Idempotent(),
			OpenWorldHint:   &openWorld,
		},
	}
}

// registered reports whether the SDK holds the tool name names: one of
// the set that the executor's tool groups offer.
func (h *handler) registered(name string) bool {
	t := h.exec.ToolSet().Lookup(name)
	return t != nil && execinfo.Offered(h.exec, t)
}

// UntrustedMetaKey names, in a result's _meta, the JSON pointers into its
// structuredContent of text from outside the system (members the output
// schema marks x-keel-untrusted); the text block sets that text between
// marks, and the tool's description tells the model it is data.
const UntrustedMetaKey = "io.keelgen/untrusted"

// GroupsMetaKey names a listed tool's groups (//keel:tool groups=) in its
// _meta, for a client or directory that shows them.
const GroupsMetaKey = "io.keelgen/groups"

// toolMeta is a listed tool's _meta: the author's static entries
// (//keel:meta, keelgen refuses keel's and MCP's own prefixes) and its
// groups.
func toolMeta(info runtime.ToolInfo) mcp.Meta {
	if len(info.Groups) == 0 && len(info.Meta) == 0 {
		return nil
	}
	m := mcp.Meta{}
	for k, v := range info.Meta {
		m[k] = v
	}
	if len(info.Groups) > 0 {
		m[GroupsMetaKey] = slices.Clone(info.Groups)
	}
	return m
}

// icons are a tool's icons as MCP lists them.
func icons(in []runtime.Icon) []mcp.Icon {
	var out []mcp.Icon
	for _, i := range in {
		out = append(out, mcp.Icon{Source: i.Src, MIMEType: i.MIMEType, Sizes: slices.Clone(i.Sizes), Theme: mcp.IconTheme(i.Theme)})
	}
	return out
}

type handler struct {
	exec          *runtime.Executor
	context       ContextFunc
	progressEvery time.Duration // 0: the runtime's default
	approvals     *Approvals
	inputs        *inputs     // handlers' own input requests (package ask)
	tasks         *taskServer // nil: no call is a task
	request       func(context.Context, *mcp.CallToolRequest) context.Context
	unmigrated    map[string]bool // the SDK's tools, served until they move
	noTextCopy    map[string]bool // the tools whose data a 2026-07-28 client gets once (text=none)
	impl          *mcp.Implementation
	log           *slog.Logger
	taint         *taint // nil: no tool of the set returns text from outside
	running       *calls // the calls running, capped
	drain         drain  // Shutdown's
	// levels are the log levels the clients of HTTP sessions set
	// (logging/setLevel), by session id: the SDK keeps its own, and
	// exposes none, and keel answers those sessions' calls.
	levels sync.Map // session id → mcp.LoggingLevel
	// opening are the sessions whose initialize was answered, by id, until
	// the HTTP door that opened each records it (sessionRecorder.attach):
	// kept only once an HTTP handler with sessions exists (keepOpening).
	opening     sync.Map // session id → *mcp.ServerSession
	keepOpening atomic.Bool
	metaCache   metaCache // the _meta naming the server, written once (resultbytes.go)
}

// refuseDraining refuses a call, task or answer a draining server takes
// no more (Shutdown): a wait of a second, for the client to send it again
// elsewhere.
func (h *handler) refuseDraining(ctx context.Context, ec runtime.ExecutionContext, req *mcp.CallToolRequest) error {
	call := runtime.ToolCall{ID: callIDOf(req.Params), Name: req.Params.Name, Arguments: req.Params.Arguments}
	h.log.LogAttrs(ctx, slog.LevelInfo, "keel: the server drains (Shutdown); the call is refused", slog.String("call_id", call.ID), slog.String("principal", ec.Principal))
	h.exec.Refused(ctx, ec, call, runtime.RefusedDraining)
	return rateLimited(rateLimit{RetryAfterSeconds: busyRetry})
}

// refuseSDKCall is the SDK's handler of a keel tool, which no call
// reaches (New's middleware refuses one first): keel answers each.
func refuseSDKCall(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, protocolError(jsonrpc.CodeInvalidParams)
}

// runOptions say how a call runs.
type runOptions struct {
	// task: a task's call, which outlives the request that started it and
	// sends no notifications.
	task bool
	// peer takes the call's notifications; nil for none.
	peer callPeer
	// mayAsk: an approval may be asked of a client that takes elicitation.
	mayAsk bool
	// progress takes a task's progress reports (its status message).
	progress func(report.ProgressEntry)
	// lastRound: the client is asked no more; a handler that asks again
	// ends the call input_required, as a tool result.
	lastRound bool
}

// callPeer is where a call's notifications go: the SDK's session of a
// call the SDK read, or the POST of one keel answers (answer.go).
type callPeer interface {
	notifyProgress(ctx context.Context, p *mcp.ProgressNotificationParams)
	log(ctx context.Context, p *mcp.LoggingMessageParams)
}

// sessionPeer sends a call's notifications over the SDK's session, which
// knows the level its client listens at.
type sessionPeer struct{ ss *mcp.ServerSession }

func (s sessionPeer) notifyProgress(ctx context.Context, p *mcp.ProgressNotificationParams) {
	s.ss.NotifyProgress(ctx, p)
}

func (s sessionPeer) log(ctx context.Context, p *mcp.LoggingMessageParams) { s.ss.Log(ctx, p) }

// run runs one tools/call through the executor.
func (h *handler) run(ctx context.Context, req *mcp.CallToolRequest, opts runOptions) (*mcp.CallToolResult, error) {
	task := opts.task
	if !task {
		var release func()
		ctx, release = withScope(ctx, req)
		defer release()
	}
	if req.Params == nil {
		return nil, protocolError(jsonrpc.CodeInvalidParams)
	}
	ec := h.context(ctx, req)
	if !task { // the caps before anything is read or spent (a person's answer, a question's state)
		if !h.drain.enter() {
			return nil, h.refuseDraining(ctx, ec, req)
		}
		defer h.drain.leave()
		release, ok := h.running.take(ec)
		if !ok {
			call := runtime.ToolCall{ID: callIDOf(req.Params), Name: req.Params.Name, Arguments: req.Params.Arguments}
			h.log.LogAttrs(ctx, slog.LevelWarn, "keel: as many calls run as the server allows (MaxCalls, MaxCallsPerCaller); the call is refused",
				slog.String("call_id", call.ID), slog.String("principal", ec.Principal))
			h.exec.Refused(ctx, ec, call, runtime.RefusedBusy)
			return nil, rateLimited(rateLimit{RetryAfterSeconds: busyRetry})
		}
		defer release()
	}
	ec, call, answered, err := h.callOf(ctx, req, ec)
	if err != nil {
		return nil, err
	}
	ec.RateTaken = task // taken when the task was created (taskCall)
	conversation, wasTainted := h.taint.read(ctx, req, &ec)
	if h.request != nil {
		ctx = h.request(ctx, req)
	}
	if opts.progress != nil { // a task's: its latest report is its status message
		var stop func()
		ctx, stop = report.WithProgress(ctx, opts.progress, h.progressEvery)
		defer stop()
	} else if token := req.Params.GetProgressToken(); token != nil && opts.peer != nil {
		// The client asked to hear: a handler's report.Progress becomes
		// notifications/progress, bounded and rate-limited by the runtime.
		var stop func()
		ctx, stop = report.WithProgress(ctx, func(p report.ProgressEntry) {
			opts.peer.notifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p.Done, Total: p.Total, Message: p.Message})
		}, h.progressEvery)
		defer stop()
	}
	// A handler's report.Log becomes notifications/message, sent at or
	// above the level the client set (none before it sets one).
	if opts.peer != nil {
		var stopLog func()
		ctx, stopLog = report.WithLog(ctx, func(e report.LogEntry) {
			opts.peer.log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(e.Level), Logger: call.Name, Data: e.Message})
		})
		defer stopLog()
	}
	r := h.exec.Execute(ctx, ec, call)
	h.taint.note(ctx, conversation, wasTainted, ec)
	if r.Code() == runtime.CodeInputRequired && !opts.lastRound { // the handler asked: its questions go to the client (a task's wait for them)
		return h.inputs.required(ctx, ec, call, r)
	}
	if r.Code() == runtime.CodeInputUnavailable && len(r.Error.Input) > 0 {
		if _, perRequest := req.Params.Meta[mcp.MetaKeyProtocolVersion]; perRequest {
			return nil, unavailable(r) // the revision's own error names what the client lacks
		}
	}
	// Whether the client's person may be asked is read only for a call the
	// policy sent for approval: the client's capabilities are a decode of
	// the request's _meta, which no other call pays for.
	ask := opts.mayAsk && !answered && h.approvals != nil && r.Code() == runtime.CodeApprovalRequired && canElicit(req)
	if ask {
		spent, _ := execinfo.Replay(h.exec).(runtime.ReplayStore)
		if q := h.approvals.ask(ctx, ec, r, call.Arguments, call.Answers, spent); q != nil {
			return q, nil
		}
	}
	if h.approvals != nil && r.Code() == runtime.CodeApprovalRequired && !answered {
		r = h.approvals.viaPage(ctx, h.exec, ec, call, r) // not asked: an approver decides at the page
		if r.Error != nil && r.Error.Approval != nil && r.Error.Approval.URL != "" && !opts.task && opensURLs(req) {
			return nil, h.approvals.urlRequired(r.Error.Approval)
		}
	}
	_, revision := req.Params.Meta[mcp.MetaKeyProtocolVersion]
	return h.reply(ctx, ec, r, call.Arguments, false, revision)
}

// callOf is the call a tools/call asks for and who makes it: its id (the
// client's, or the one the person was asked about), its name and
// arguments, and the caller with a grant the call presents or a person's
// yes became; answered when the call carries a person's answer. ec is the
// caller as the server owner's hook says (h.context), which the caller
// asked once.
func (h *handler) callOf(ctx context.Context, req *mcp.CallToolRequest, ec runtime.ExecutionContext) (runtime.ExecutionContext, runtime.ToolCall, bool, error) {
	if req.Params == nil {
		return runtime.ExecutionContext{}, runtime.ToolCall{}, false, protocolError(jsonrpc.CodeInvalidParams)
	}
	call := runtime.ToolCall{ID: callIDOf(req.Params), Name: req.Params.Name, Arguments: req.Params.Arguments}
	if grant, ok := req.Params.Meta[MetaGrant].(string); ok {
		ec.Grant = grant
	}
	call.Accepts = clientKinds{req}
	if isInputState(req.Params.RequestState) { // a round of the handler's own questions
		st, err := h.inputs.resume(ctx, req.Params.RequestState, ec, call, h.inputs.spent)
		if err != nil {
			return ec, call, false, invalidState(err)
		}
		call.ID, call.Answers = st.CallID, answersOf(req.Params, st.Answers)
		return ec, call, false, nil
	}
	call.Answers = answersOf(req.Params, nil)
	answered := false
	if h.approvals != nil {
		spent, _ := execinfo.Replay(h.exec).(runtime.ReplayStore)
		a, err := h.approvals.answer(ctx, req, ec, spent)
		if err != nil {
			return ec, call, false, invalidState(err)
		}
		if a.callID != "" {
			call.ID = a.callID // the call the person was asked about
		}
		if a.grant != "" {
			ec.Grant = a.grant
		}
		if a.answers != nil {
			call.Answers = answersOf(req.Params, a.answers)
		}
		answered = a.asked
	}
	return ec, call, answered, nil
}

// callIDOf is the call id a client named in p's _meta, or a new one.
func callIDOf(p *mcp.CallToolParamsRaw) string {
	id, _ := p.Meta[MetaCallID].(string)
	if id == "" || len(id) > maxCallIDBytes {
		id = newCallID()
	}
	return id
}

// readTools notes, once, the unmigrated tools keel's set does not have, and
// the tools whose data a 2026-07-28 client gets once (text=none).
func (h *handler) readTools(unmigrated []string) {
	for _, name := range unmigrated {
		if h.exec.ToolSet().Lookup(name) == nil {
			h.unmigrated[name] = true
		}
	}
	for _, t := range h.exec.ToolSet().Tools() {
		if info := t.Info(); info.NoTextCopy {
			if h.noTextCopy == nil {
				h.noTextCopy = map[string]bool{}
			}
			h.noTextCopy[info.Name] = true
		}
	}
}

// reply is the executor's result as the protocol carries it; a call the
// policy sent for approval asks the client's person when ask (the client
// takes elicitation, and no person answered yet). revision: the request is
// of the 2026-07-28 revision, whose client reads structuredContent, so a
// tool that says text=none gets no JSON copy as text.
func (h *handler) reply(ctx context.Context, ec runtime.ExecutionContext, r runtime.ToolResult, args json.RawMessage, ask, revision bool) (*mcp.CallToolResult, error) {
	if h.approvals != nil && ask {
		spent, _ := execinfo.Replay(h.exec).(runtime.ReplayStore)
		if q := h.approvals.ask(ctx, ec, r, args, nil, spent); q != nil {
			return q, nil
		}
	}
	switch {
	case r.Code() == runtime.CodeUnknownTool:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: r.Error.Message}
	case r.Code() == runtime.CodeRateLimitExceeded:
		return nil, rateLimited(rateLimit{r.Error.RetryAfterSeconds, r.Error.LimitUnchecked})
	case !r.OK:
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: resultjson.Content(r)}}}, nil
	default:
		res := &mcp.CallToolResult{StructuredContent: json.RawMessage(r.Data), Content: contentBlocks(r.Content)}
		if !revision || !h.noTextCopy[r.ToolName] {
			text := r.Text // the author's words for the result (MCPText), else its JSON
			if text == "" {
				text = string(resultjson.Data(r))
			}
			res.Content = append([]mcp.Content{&mcp.TextContent{Text: text}}, res.Content...)
		}
		if len(r.Untrusted) > 0 { // where the text from outside is, for a client that shows or filters it
			res.Meta = mcp.Meta{UntrustedMetaKey: r.Untrusted}
		}
		return res, nil
	}
}

// contentBlocks writes a result's checked content blocks as MCP's, in order
// after the text of its data.
func contentBlocks(blocks []runtime.Content) []mcp.Content {
	out := make([]mcp.Content, 0, len(blocks))
	for _, b := range blocks {
		switch b.Kind {
		case runtime.ContentImage:
			out = append(out, &mcp.ImageContent{Data: b.Data, MIMEType: b.MIMEType})
		case runtime.ContentAudio:
			out = append(out, &mcp.AudioContent{Data: b.Data, MIMEType: b.MIMEType})
		case runtime.ContentResource:
			out = append(out, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: b.URI, MIMEType: b.MIMEType, Text: b.Text, Blob: b.Data}})
		case runtime.ContentResourceLink:
			out = append(out, &mcp.ResourceLink{URI: b.URI, Name: b.Name, Description: b.Description, MIMEType: b.MIMEType})
		}
	}
	return out
}

// newCallID is a call id unique across processes, so that replicas behind
// one load balancer never hand out the same one.
func newCallID() string {
	var b [12]byte
	rand.Read(b[:])
	return "mcp-" + hex.EncodeToString(b[:])
}
