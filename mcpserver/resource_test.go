package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// The server publishes its Protected Resource Metadata (RFC 9728) at the
// well-known URL of its resource, which the Go SDK's own discovery reads
// and accepts; every 401 names it, with error="invalid_token" once a token
// came and was refused, so a client can find where to get a token.
func TestProtectedResourceMetadataIsDiscovered(t *testing.T) {
	exec := quietExecutor(t, generated.ToolSet())
	s := mcpserver.New(exec, mcpserver.Options{})
	verifier := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token != "good" {
			return nil, errors.New("unknown token")
		}
		return &auth.TokenInfo{UserID: "alice", Expiration: time.Now().Add(time.Hour)}, nil
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	resource := srv.URL + "/mcp"
	md := &oauthex.ProtectedResourceMetadata{Resource: resource, AuthorizationServers: []string{"http://127.0.0.1:9/issuer"},
		ScopesSupported: []string{"ops:read", "ops:write"}, ResourceDocumentation: "https://docs.example.com/incident-tools"}
	h, err := mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Verifier: verifier, ResourceMetadata: md, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/", h)
	metadataURL := srv.URL + "/.well-known/oauth-protected-resource/mcp"

	// No token: 401 naming the metadata, no error (RFC 6750, 3.1).
	resp, err := http.Post(resource, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode != http.StatusUnauthorized || err != nil || len(challenges) != 1 || challenges[0].Params["resource_metadata"] != metadataURL || challenges[0].Params["error"] != "" {
		t.Fatalf("without a token: %d %q (%v)", resp.StatusCode, resp.Header.Values("WWW-Authenticate"), err)
	}
	// The SDK's client discovery reads the metadata at that URL and checks it.
	got, err := oauthex.GetProtectedResourceMetadata(context.Background(), challenges[0].Params["resource_metadata"], resource, srv.Client())
	if err != nil || got.AuthorizationServers[0] != md.AuthorizationServers[0] || len(got.ScopesSupported) != 2 {
		t.Fatalf("discovery: %+v, %v", got, err)
	}
	// The bare well-known path (clients try it next) answers too, cross-origin.
	resp, err = http.Get(srv.URL + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(string(body), `"resource":"`+resource+`"`) {
		t.Fatalf("bare well-known path: %d %s", resp.StatusCode, body)
	}
	// A refused token: 401 with error="invalid_token", nothing of why.
	req, _ := http.NewRequest(http.MethodPost, resource, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer stolen")
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	challenges, _ = oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode != http.StatusUnauthorized || len(challenges) != 1 || challenges[0].Params["error"] != "invalid_token" ||
		challenges[0].Params["resource_metadata"] != metadataURL || strings.Contains(string(body), "unknown token") {
		t.Fatalf("a refused token: %d %q %s", resp.StatusCode, resp.Header.Values("WWW-Authenticate"), body)
	}
	// The good token's client connects and calls, over the same handler.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: resource, HTTPClient: &http.Client{Transport: bearer{"good"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// Metadata that would mislead a client is refused when the handler is made:
// without a Verifier, an http resource off loopback, no authorization
// server, a resource with a fragment.
func TestProtectedResourceMetadataRefusesWeakSettings(t *testing.T) {
	s := mcpserver.New(quietExecutor(t, generated.ToolSet()), mcpserver.Options{})
	verifier := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) { return nil, errors.New("no") }
	as := []string{"https://id.example.com"}
	for name, c := range map[string]struct {
		opts mcpserver.HTTPOptions
		want string
	}{
		"no verifier":          {mcpserver.HTTPOptions{ResourceMetadata: &oauthex.ProtectedResourceMetadata{Resource: "https://mcp.example.com/mcp", AuthorizationServers: as}}, "without a Verifier"},
		"http off loopback":    {mcpserver.HTTPOptions{Verifier: verifier, ResourceMetadata: &oauthex.ProtectedResourceMetadata{Resource: "http://mcp.example.com/mcp", AuthorizationServers: as}}, "not https"},
		"no server":            {mcpserver.HTTPOptions{Verifier: verifier, ResourceMetadata: &oauthex.ProtectedResourceMetadata{Resource: "https://mcp.example.com/mcp"}}, "AuthorizationServers is empty"},
		"fragment":             {mcpserver.HTTPOptions{Verifier: verifier, ResourceMetadata: &oauthex.ProtectedResourceMetadata{Resource: "https://mcp.example.com/mcp#x", AuthorizationServers: as}}, "without a query or fragment"},
		"javascript as server": {mcpserver.HTTPOptions{Verifier: verifier, ResourceMetadata: &oauthex.ProtectedResourceMetadata{Resource: "https://mcp.example.com/mcp", AuthorizationServers: []string{"javascript:alert(1)"}}}, "not an https URL"},
	} {
		if _, err := mcpserver.HTTPHandler(s, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// A token without a scope the server requires is refused with 403
// error="insufficient_scope" and the scope to ask for, so a client can step
// up (go-sdk #1134: the SDK's own challenge leaves the error out).
func TestInsufficientScopeNamesTheScope(t *testing.T) {
	s := mcpserver.New(quietExecutor(t, generated.ToolSet()), mcpserver.Options{})
	verifier := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: "alice", Scopes: []string{"ops:read"}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	srv := serve(t, s, mcpserver.HTTPOptions{Verifier: verifier, Bearer: &auth.RequireBearerTokenOptions{Scopes: []string{"ops:write"}}})
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer read-only")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode != http.StatusForbidden || err != nil || len(cs) != 1 || cs[0].Params["error"] != "insufficient_scope" || cs[0].Params["scope"] != "ops:write" {
		t.Fatalf("%d %q (%v)", resp.StatusCode, resp.Header.Values("WWW-Authenticate"), err)
	}
}

// A tool's scopes are checked against the verified token's: TokenContext
// sets ExecutionContext.Scopes from the token, whatever its function says,
// and a call without the scope is an error result naming it.
func TestToolScopesComeFromTheToken(t *testing.T) {
	tool := runtime.NewTool(runtime.ToolInfo{Name: "scale", Version: "1", Effect: runtime.EffectRead, Description: "Scales.", Scopes: []string{"ops:write"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }))
	set := keeltest.Of(tool)
	s := mcpserver.New(quietExecutor(t, set), mcpserver.Options{Context: mcpserver.TokenContext(func(_ context.Context, tok *auth.TokenInfo) runtime.ExecutionContext {
		return runtime.ExecutionContext{Principal: tok.UserID, Scopes: []string{"ops:write"}} // ignored: the token's scopes count
	})})
	scopes := map[string][]string{"reader": {"ops:read"}, "writer": {"ops:read", "ops:write"}}
	verifier := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: token, Scopes: scopes[token], Expiration: time.Now().Add(time.Hour)}, nil
	}
	srv := serve(t, s, mcpserver.HTTPOptions{Stateless: true, Verifier: verifier})
	for token, wantErr := range map[string]bool{"reader": true, "writer": false} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "scale"})
		cs.Close()
		switch {
		case wantErr && (err == nil || !strings.Contains(err.Error(), "Forbidden")): // over HTTP, the scope is a 403 to step up by
			t.Errorf("%s: %v %+v", token, err, res)
		case !wantErr && (err != nil || res.IsError):
			t.Errorf("%s: %v %+v", token, err, res)
		}
	}
	// The 403 names the scope to ask for, as RFC 6750 and the MCP spec ask.
	r := post(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"scale","arguments":{}}}`,
		map[string]string{"Authorization": "Bearer reader", "Mcp-Protocol-Version": "2025-06-18"})
	if r.status != http.StatusForbidden || r.header.Get("WWW-Authenticate") != `Bearer error="insufficient_scope", scope="ops:write"` {
		t.Errorf("a call without the tool's scope: %d %q %s", r.status, r.header.Get("WWW-Authenticate"), r.body)
	}
}

// The 403 that lets a client step up is only for a tool the caller is
// offered: one the executor's ToolFilter hides from it answers as an
// unknown name does, so no status tells hidden from absent; and the refusal
// is in the audit.
func TestStepUpOnlyForOfferedTools(t *testing.T) {
	tool := runtime.NewTool(runtime.ToolInfo{Name: "purge", Version: "1", Effect: runtime.EffectRead, Description: "Purges.", Scopes: []string{"ops:admin"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }))
	var audit strings.Builder
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithObserver(runtime.AuditLog(slog.New(slog.NewJSONHandler(&audit, nil)))),
		runtime.WithToolFilter(func(_ context.Context, ec runtime.ExecutionContext, _ runtime.ToolInfo) bool {
			return ec.Tenant == "paid"
		}))
	if err != nil {
		t.Fatal(err)
	}
	s := mcpserver.New(exec, mcpserver.Options{Context: mcpserver.TokenContext(func(_ context.Context, tok *auth.TokenInfo) runtime.ExecutionContext {
		return runtime.ExecutionContext{Principal: tok.UserID, Tenant: tok.Extra["tenant"].(string)}
	})})
	verifier := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: token, Extra: map[string]any{"tenant": token}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	srv := serve(t, s, mcpserver.HTTPOptions{Stateless: true, Verifier: verifier})
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":{}}}`
	headers := func(tok string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + tok, "Mcp-Protocol-Version": "2025-06-18"}
	}
	hidden := post(t, srv.URL, strings.ReplaceAll(call, "%s", "purge"), headers("free"))
	absent := post(t, srv.URL, strings.ReplaceAll(call, "%s", "no_such_tool"), headers("free"))
	if hidden.status != http.StatusOK || hidden.status != absent.status || hidden.body != absent.body {
		t.Errorf("a hidden tool %d %s; an absent one %d %s", hidden.status, hidden.body, absent.status, absent.body)
	}
	if r := post(t, srv.URL, strings.ReplaceAll(call, "%s", "purge"), headers("paid")); r.status != http.StatusForbidden {
		t.Errorf("an offered tool without its scope: %d %s", r.status, r.body)
	}
	if !strings.Contains(audit.String(), `"tenant":"paid","principal":"paid","arguments_digest":"","decision":"","policy_reason":"","code":"insufficient_scope"`) {
		t.Errorf("the step-up refusal is not in the audit:\n%s", audit.String())
	}
}
