package mcpserver

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call over HTTP ends when the POST that carried it ends: a client that
// hangs up (its timeout, a crash, a stateless client whose
// notifications/cancelled reaches no session) takes its handler's context
// with it, since nothing could deliver the result. The SDK runs the handler
// on the session's context, so the firewall registers each POST's context
// under a token in a header of its own, which the handler reads back from
// the request the SDK hands it. The token is a counter: it must be unique
// in this process, not secret, since a client's own value of that header
// is removed first.

const scopeHeader = "Keel-Internal-Request-Scope"

var (
	scopes    sync.Map // token → the POST's context.Context
	lastScope atomic.Uint64
)

// openScope registers r's context and returns the request to pass on, and
// the function that forgets it.
func openScope(r *http.Request) (*http.Request, func()) {
	token := strconv.FormatUint(lastScope.Add(1), 36)
	r.Header.Del(scopeHeader)
	r.Header.Set(scopeHeader, token)
	scopes.Store(token, r.Context())
	return r, func() { scopes.Delete(token) }
}

// withScope ends ctx when the POST that carried req ends; stop releases.
func withScope(ctx context.Context, req *mcp.CallToolRequest) (context.Context, func()) {
	if req.Extra == nil || req.Extra.Header == nil {
		return ctx, func() {}
	}
	token := req.Extra.Header.Get(scopeHeader)
	if token == "" {
		return ctx, func() {}
	}
	v, ok := scopes.Load(token)
	if !ok {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(v.(context.Context), func() { cancel(context.Canceled) })
	return ctx, func() { stop(); cancel(nil) }
}
