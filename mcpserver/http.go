package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/keelgen/keel/internal/execinfo"
	"github.com/keelgen/keel/runtime"
)

// Defaults of HTTPOptions.
const (
	DefaultSessionTimeout = 5 * time.Minute
	DefaultMaxSessions    = 1000
	// DefaultMaxSessionsPerPrincipal caps one principal's live sessions, so
	// one client cannot take every slot from the others.
	DefaultMaxSessionsPerPrincipal = 16
	// DefaultMaxSessionLifetime closes a session this long after it opened,
	// however busy: no one keeps a slot for ever.
	DefaultMaxSessionLifetime = time.Hour
	DefaultMaxBodyBytes       = mcp.DefaultMaxRequestBodyBytes // 4 MiB
	// DefaultReadBodyTimeout bounds the time to read a POST's body: a
	// client that sends it slower (a slow-loris) is answered 408 and
	// dropped, its connection and goroutine freed.
	DefaultReadBodyTimeout = 30 * time.Second
	// DefaultWriteEventTimeout bounds each write of an answer: a client
	// that does not read its event stream is dropped, its call cancelled.
	DefaultWriteEventTimeout = 30 * time.Second
)

// HTTPOptions configure HTTPHandler. A zero field takes its default; no
// zero value turns a protection off.
type HTTPOptions struct {
	// TrustedOrigins are the browser origins ("https://app.example.com")
	// allowed besides the server's own. A request whose Origin is another
	// site, or that a browser marks cross-site (Sec-Fetch-Site), gets 403
	// before it can open a session or run a tool.
	TrustedOrigins []string

	// Stateless serves every request on its own short-lived session (no
	// Mcp-Session-Id), so any replica behind a load balancer can answer any
	// request. Use it with several replicas; use the default (sessions) for
	// one process, where the server may keep per-session state.
	Stateless bool
	// SessionTimeout closes a session that receives no request for that long
	// (default DefaultSessionTimeout).
	SessionTimeout time.Duration
	// MaxSessions caps live sessions (default DefaultMaxSessions); a request
	// that would open one more gets 503 and opens nothing.
	MaxSessions int
	// MaxSessionsPerPrincipal caps the live sessions of one principal (the
	// verified token's UserID), default DefaultMaxSessionsPerPrincipal; past
	// it, 503. Without a Verifier no client is told apart, and only
	// MaxSessions applies.
	MaxSessionsPerPrincipal int
	// MaxSessionLifetime closes a session this long after it opened, however
	// busy (default DefaultMaxSessionLifetime); its next request gets 404,
	// and the client opens a new session, which counts against the caps.
	MaxSessionLifetime time.Duration

	// MaxBodyBytes refuses a larger request body with 413 before it is read
	// whole (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// ReadBodyTimeout bounds the time to read a POST's body once its
	// headers are read (default DefaultReadBodyTimeout), through
	// http.ResponseController: past it, 408 and the connection closes. Bound
	// the headers with your http.Server's ReadHeaderTimeout.
	ReadBodyTimeout time.Duration

	// Verifier, when set, requires every request to carry a bearer token
	// that it accepts: otherwise 401 with WWW-Authenticate, and nothing runs.
	// Its TokenInfo reaches each call as req.Extra.TokenInfo (TokenContext).
	// Set TokenInfo.UserID: the SDK then refuses a session to any other user.
	Verifier auth.TokenVerifier
	// CancelSignals, with a Verifier, carries a client's
	// notifications/cancelled to the replica where its call runs, when
	// replicas share a load balancer (redistasks' store, on Redis). Without
	// it a cancel ends the calls of the replica it reaches.
	CancelSignals CancelSignals
	// Bearer are the SDK's bearer options (scopes, resource metadata URL,
	// clock skew); nil takes the SDK's defaults (every token must expire).
	Bearer *auth.RequireBearerTokenOptions
	// ResourceMetadata, when set, is published as the server's OAuth 2.0
	// Protected Resource Metadata (RFC 9728) at its well-known URL (for
	// resource https://mcp.example.com/mcp,
	// https://mcp.example.com/.well-known/oauth-protected-resource/mcp), so
	// a client discovers where to get a token for this resource; every 401
	// names it (resource_metadata), with error="invalid_token" for a token
	// refused. It needs a Verifier, an https Resource (http only on
	// loopback) and at least one authorization server. Serve the handler
	// at the root of the resource's host, or route the well-known path to
	// it.
	ResourceMetadata *oauthex.ProtectedResourceMetadata

	// Heartbeat is how often an open event stream (a call that asked for
	// progress, a session's GET stream) carries a comment line when nothing
	// else was written (default DefaultHeartbeat), so a proxy that drops
	// idle connections keeps it.
	Heartbeat time.Duration
	// WriteEventTimeout bounds each write of an answer: every event of an
	// open stream, heartbeats among them, and a JSON answer, must be taken
	// by the connection within it (default DefaultWriteEventTimeout), or
	// the stream is dropped: its call is cancelled and its connection
	// closed. A client that stops reading holds no goroutine or buffer
	// past it. Where the http.Server has a WriteTimeout, that bounds the
	// whole response instead, and keel sets no deadline of its own.
	WriteEventTimeout time.Duration

	// Logger is the protected log for refused requests and for the detail of
	// protocol errors (default slog.Default()).
	Logger *slog.Logger
}

// HTTPHandler serves s over Streamable HTTP. In front of the SDK's handler
// (which keeps its DNS-rebinding check of the Host header), it refuses
// cross-origin requests, unauthenticated ones when a Verifier is set, and
// new sessions past the cap; and no error it sends carries the SDK's text.
// A tools/call whose request carries a progressToken is answered as an
// event stream (its progress notifications, then its result, each event
// sanitized, with heartbeats); every other POST is answered as
// application/json.
func HTTPHandler(s *Server, opts HTTPOptions) (http.Handler, error) {
	if s == nil {
		return nil, errors.New("mcpserver: HTTPHandler: the server is nil")
	}
	if opts.SessionTimeout < 0 || opts.MaxSessions < 0 || opts.MaxBodyBytes < 0 || opts.MaxSessionsPerPrincipal < 0 || opts.MaxSessionLifetime < 0 || opts.Heartbeat < 0 || opts.ReadBodyTimeout < 0 || opts.WriteEventTimeout < 0 {
		return nil, errors.New("mcpserver: HTTPHandler: SessionTimeout, MaxSessions, MaxSessionsPerPrincipal, MaxSessionLifetime, MaxBodyBytes, ReadBodyTimeout, WriteEventTimeout and Heartbeat may not be negative")
	}
	if opts.ReadBodyTimeout == 0 {
		opts.ReadBodyTimeout = DefaultReadBodyTimeout
	}
	if opts.WriteEventTimeout == 0 {
		opts.WriteEventTimeout = DefaultWriteEventTimeout
	}
	if opts.Heartbeat == 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.SessionTimeout == 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxSessionsPerPrincipal == 0 {
		opts.MaxSessionsPerPrincipal = min(DefaultMaxSessionsPerPrincipal, opts.MaxSessions)
	}
	if opts.MaxSessionLifetime == 0 {
		opts.MaxSessionLifetime = DefaultMaxSessionLifetime
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	var metadataURL string
	if opts.CancelSignals != nil && opts.Verifier == nil {
		return nil, errors.New("mcpserver: HTTPHandler: CancelSignals without a Verifier: a cancel names a principal's call, and no principal is known")
	}
	if md := opts.ResourceMetadata; md != nil {
		if opts.Verifier == nil {
			return nil, errors.New("mcpserver: HTTPHandler: ResourceMetadata without a Verifier would tell clients to get tokens nothing checks")
		}
		var err error
		if metadataURL, err = resourceMetadata(md); err != nil {
			return nil, fmt.Errorf("mcpserver: HTTPHandler: %w", err)
		}
		bearer := auth.RequireBearerTokenOptions{}
		if opts.Bearer != nil {
			bearer = *opts.Bearer
		}
		if bearer.ResourceMetadataURL == "" {
			bearer.ResourceMetadataURL = metadataURL
		}
		opts.Bearer = &bearer
	}
	origins := http.NewCrossOriginProtection()
	for _, o := range opts.TrustedOrigins {
		if err := origins.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("mcpserver: HTTPHandler: trusted origin: %w", err)
		}
	}
	sdk := func(stateless bool) http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.sdk }, &mcp.StreamableHTTPOptions{
			Stateless:           stateless,
			JSONResponse:        false, // every POST an event stream; the firewall keeps it only where progress was asked for
			SessionTimeout:      0,     // keel closes idle sessions (sessionCap): the SDK does not see the calls keel answers
			MaxRequestBodyBytes: opts.MaxBodyBytes,
			Logger:              opts.Logger,
		})
	}
	h := sdk(opts.Stateless)
	var sessionless http.Handler
	var sessions *sessionCap
	if !opts.Stateless {
		sessions = &sessionCap{next: h, h: s.h, max: opts.MaxSessions, perUser: opts.MaxSessionsPerPrincipal,
			lifetime: opts.MaxSessionLifetime, idle: opts.SessionTimeout, log: opts.Logger}
		h = sessions
		sessionless = sdk(true)
		s.h.keepOpening.Store(true)
	}
	var calls *inflight
	if opts.Verifier != nil {
		calls = &inflight{calls: map[inflightKey][]*context.CancelFunc{}, signals: opts.CancelSignals, log: opts.Logger}
	}
	var up *stepUp
	if opts.Verifier != nil && execinfo.Varies(s.h.exec) {
		up = &stepUp{h: s.h, log: opts.Logger}
	}
	h = envelopeCheck{next: h, sessionless: sessionless, max: opts.MaxBodyBytes, readTimeout: opts.ReadBodyTimeout, log: opts.Logger, inflight: calls, stepUp: up, mirrored: mirroredTools(s.h), h: s.h, sessions: sessions, calls: &sessionCalls{}} // after auth: no body is read for a stranger
	if opts.Verifier != nil {
		h = auth.RequireBearerToken(opaqueVerifier(opts.Verifier, opts.Bearer, opts.Logger), opts.Bearer)(h)
		h = challenges{next: h, metadataURL: metadataURL}
	}
	h = originCheck{next: h, cop: origins, log: opts.Logger}
	h = firewall{next: h, heartbeat: opts.Heartbeat, writeTimeout: opts.WriteEventTimeout, log: opts.Logger}
	if opts.ResourceMetadata != nil {
		h = newMetadataRoute(h, opts.ResourceMetadata, metadataURL)
	}
	return h, nil
}

// opaqueVerifier makes every refusal of the owner's verifier an invalid
// token (401) whose text says nothing of why; the reason is logged. A token
// the verifier accepts may still be refused by the SDK's own checks of its
// TokenInfo (no Expiration, expired, a scope missing); those reasons are
// logged here too, since the SDK logs nothing.
func opaqueVerifier(v auth.TokenVerifier, bearer *auth.RequireBearerTokenOptions, log *slog.Logger) auth.TokenVerifier {
	return func(ctx context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
		info, err := v(ctx, token, req)
		if err == nil && info != nil {
			if reason := sdkRefusal(info, bearer); reason != "" {
				log.LogAttrs(ctx, slog.LevelWarn, "keel: bearer token refused", slog.String("reason", reason))
			}
			return info, nil
		}
		log.LogAttrs(ctx, slog.LevelWarn, "keel: bearer token refused", slog.Any("reason", err))
		return nil, fmt.Errorf("%w", auth.ErrInvalidToken)
	}
}

// sdkRefusal says why auth.RequireBearerToken will refuse a token the
// verifier accepted, or "": the checks it makes after the verifier.
func sdkRefusal(info *auth.TokenInfo, bearer *auth.RequireBearerTokenOptions) string {
	if bearer == nil {
		bearer = &auth.RequireBearerTokenOptions{}
	}
	for _, s := range bearer.Scopes {
		if !slices.Contains(info.Scopes, s) {
			return fmt.Sprintf("the verifier's TokenInfo lacks the required scope %q (403)", s)
		}
	}
	switch {
	case info.Expiration.IsZero() && !bearer.AllowMissingExpiration:
		return "the verifier's TokenInfo has no Expiration, which the MCP SDK refuses (401); set one, or HTTPOptions.Bearer.AllowMissingExpiration"
	case !info.Expiration.IsZero() && info.Expiration.Add(bearer.ClockSkew).Before(time.Now()):
		return "the token expired (401)"
	}
	return ""
}

// TokenContext derives each call's ExecutionContext from the bearer token
// the HTTPHandler verified, and from nothing the client chooses; its Scopes
// are always the token's. A call
// without a verified token gets the zero ExecutionContext.
func TokenContext(f func(ctx context.Context, token *auth.TokenInfo) runtime.ExecutionContext) ContextFunc {
	return func(ctx context.Context, req *mcp.CallToolRequest) runtime.ExecutionContext {
		if req.Extra == nil || req.Extra.TokenInfo == nil {
			return runtime.ExecutionContext{}
		}
		ec := f(ctx, req.Extra.TokenInfo)
		// The scopes are the token's: f cannot widen them.
		ec.Scopes = slices.Clone(req.Extra.TokenInfo.Scopes)
		return ec
	}
}

// originCheck refuses a request from another origin: http.CrossOriginProtection
// for unsafe methods (Sec-Fetch-Site, then Origin against Host), and for any
// method an Origin header that is neither this host nor trusted.
type originCheck struct {
	next http.Handler
	cop  *http.CrossOriginProtection
	log  *slog.Logger
}

func (o originCheck) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if o.refused(w, r) {
		return
	}
	// A GET stream's goroutine waits under this frame for the session's
	// life: the checks' frame stays off its stack.
	o.next.ServeHTTP(w, r)
}

// refused reports whether r is refused, having answered it.
func (o originCheck) refused(w http.ResponseWriter, r *http.Request) bool {
	err := o.cop.Check(r)
	if origin := r.Header.Get("Origin"); err == nil && origin != "" && !sameHost(origin, r.Host) {
		// Safe methods pass Check; a foreign Origin is refused on them too,
		// unless trusted (Check on a POST copy asks the trusted list).
		probe := r.Clone(r.Context())
		probe.Method = http.MethodPost
		probe.Header.Del("Sec-Fetch-Site")
		err = o.cop.Check(probe)
	}
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil && isLoopback(local.String()) && !isLoopback(r.Host) {
		// DNS rebinding: a page of another site whose name now resolves
		// to this loopback server. keel refuses it for every request, as
		// the SDK's handler does for those it serves.
		o.log.LogAttrs(r.Context(), slog.LevelWarn, "keel: a loopback server's request for another host refused (DNS rebinding?)")
		http.Error(w, "Forbidden", http.StatusForbidden)
		return true
	}
	if err != nil {
		o.log.LogAttrs(r.Context(), slog.LevelWarn, "keel: cross-origin request refused",
			slog.String("origin", r.Header.Get("Origin")), slog.String("sec_fetch_site", r.Header.Get("Sec-Fetch-Site")))
		http.Error(w, "Forbidden", http.StatusForbidden)
		return true
	}
	return false
}

// isLoopback reports whether addr (a host, with or without a port) is a
// loopback one.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// sameHost reports whether origin names host ("http://127.0.0.1:8080" and
// "127.0.0.1:8080").
func sameHost(origin, host string) bool {
	_, rest, ok := strings.Cut(origin, "://")
	return ok && strings.EqualFold(rest, host)
}

// firewall is the outermost layer: an error status carries only its status
// text, a 401 always says WWW-Authenticate: Bearer, and a JSON-RPC error,
// in a JSON body or in an event, says only its code's fixed text.
type firewall struct {
	next         http.Handler
	heartbeat    time.Duration
	writeTimeout time.Duration // of each write on an open stream
	log          *slog.Logger
}

func (f firewall) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		f.stream(w, r)
		return
	}
	f.post(w, r)
}

// stream serves a GET event stream, which passes through, its errors
// guarded. Its goroutine waits under this frame for the session's life,
// so it is kept small.
func (f firewall) stream(w http.ResponseWriter, r *http.Request) {
	ctx, drop := context.WithCancel(r.Context())
	defer drop()
	g := &guardedWriter{ResponseWriter: w, heartbeat: f.heartbeat}
	g.limit = writeLimit{timeout: f.writeTimeoutOf(r), drop: drop}
	defer g.stopBeat()
	f.next.ServeHTTP(g, r.WithContext(ctx))
}

// post serves a POST.
func (f firewall) post(w http.ResponseWriter, r *http.Request) {
	ctx, drop := context.WithCancel(r.Context()) // a stream its client does not read ends its call
	defer drop()
	mode := &postMode{}
	p := &postWriter{w: w, mode: mode, fw: f, header: http.Header{}}
	p.limit = writeLimit{timeout: f.writeTimeoutOf(r), drop: drop}
	defer p.stopBeat() // no heartbeat outlives the handler, even one that panicked
	r, forget := openScope(r.WithContext(withPostMode(ctx, mode)))
	defer forget()
	f.next.ServeHTTP(p, r)
	p.finish()
}

// writeTimeoutOf is the bound on each write of r's answer: none of keel's
// where the http.Server bounds the whole response (its WriteTimeout), which
// a later deadline would extend.
func (f firewall) writeTimeoutOf(r *http.Request) time.Duration {
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.WriteTimeout > 0 {
		return 0
	}
	return f.writeTimeout
}

// sanitizeBody rewrites the JSON-RPC error responses in a body (one
// message, or a batch); other messages are kept. A JSON body that is
// neither is replaced by an internal error.
func (f firewall) sanitizeBody(body []byte) []byte {
	trimmed := bytes.TrimSpace(body)
	if bytes.HasPrefix(trimmed, []byte("[")) {
		var batch []json.RawMessage
		if err := json.Unmarshal(trimmed, &batch); err == nil {
			for i, m := range batch {
				batch[i] = f.sanitizeMessage(m)
			}
			if out, err := json.Marshal(batch); err == nil {
				return out
			}
		}
	}
	return f.sanitizeMessage(trimmed)
}

func (f firewall) sanitizeMessage(raw []byte) []byte {
	msg, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		f.log.LogAttrs(context.Background(), slog.LevelWarn, "keel: a JSON body that is not JSON-RPC; replaced", slog.Any("error", err))
		msg = &jsonrpc.Response{Error: errors.New("not JSON-RPC")}
	}
	return f.sanitizeDecoded(raw, msg)
}

// sanitizeDecoded is sanitizeMessage for a message already decoded from raw.
func (f firewall) sanitizeDecoded(raw []byte, msg jsonrpc.Message) []byte {
	clean := sanitize(msg, f.log)
	if clean == msg {
		return raw
	}
	out, err := jsonrpc.EncodeMessage(clean)
	if err != nil {
		return []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error."}}`)
	}
	return out
}

// guardedWriter streams, but replaces the text of an error status; an
// event stream gets heartbeats.
type guardedWriter struct {
	http.ResponseWriter
	heartbeat time.Duration
	beating
	wrote  bool // the status
	failed bool
}

func (g *guardedWriter) WriteHeader(status int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writeHeader(status)
}

func (g *guardedWriter) writeHeader(status int) {
	if g.wrote {
		return
	}
	g.wrote = true
	if status == http.StatusUnauthorized && g.Header().Get("WWW-Authenticate") == "" {
		g.Header().Set("WWW-Authenticate", "Bearer")
	}
	g.ResponseWriter.WriteHeader(status)
	if status >= 400 && !g.failed {
		g.failed = true
		g.ResponseWriter.Write([]byte(http.StatusText(status) + "\n"))
	}
	if status == http.StatusOK && isEventStream(g.Header()) {
		g.startBeat(g.ResponseWriter, g.heartbeat)
	}
}

func (g *guardedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writeHeader(http.StatusOK)
	if g.failed {
		return len(p), nil // the SDK's error text stays here
	}
	g.beat.wrote()
	if err := g.limit.write(g.ResponseWriter, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (g *guardedWriter) Flush() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.limit.flush(g.ResponseWriter)
}

func (g *guardedWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }
