package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/keelgen/keel/internal/oidctest"
	"github.com/keelgen/keel/internal/testmod"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/mcpserver/oidcverify"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// notesServer is a keel HTTP server behind a real OpenID provider: tokens
// verified by oidcverify, the provider named in the server's Protected
// Resource Metadata, a read tool that needs notes:read and one that needs
// notes:write.
func notesServer(t *testing.T) (resource string, p *oidctest.Provider) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resource = "http://" + l.Addr().String() + "/mcp"
	p = oidctest.Start(t, resource, "k1")
	v, err := oidcverify.New(context.Background(), oidcverify.Options{Issuer: p.Issuer, Resource: resource})
	if err != nil {
		t.Fatal(err)
	}
	tool := func(name, scope string) *runtime.Tool {
		return runtime.NewTool(runtime.ToolInfo{Name: name, Version: "1", Effect: runtime.EffectRead, Description: name, Scopes: []string{scope},
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object","properties":{"by":{"type":"string"}}}`)},
			runtime.Handle(func(ctx context.Context, _ struct{}) (map[string]string, error) {
				ec, _ := runtime.ExecutionContextFrom(ctx)
				return map[string]string{"by": ec.Principal}, nil
			}))
	}
	s := mcpserver.New(quietExecutor(t, keeltest.Of(tool("read_notes", "notes:read"), tool("write_notes", "notes:write"))),
		mcpserver.Options{Context: mcpserver.TokenContext(func(_ context.Context, tok *auth.TokenInfo) runtime.ExecutionContext {
			return runtime.ExecutionContext{Principal: tok.UserID}
		})})
	md := &oauthex.ProtectedResourceMetadata{Resource: resource, AuthorizationServers: []string{p.Issuer}, ScopesSupported: []string{"notes:read", "notes:write"}}
	h, err := mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Verifier: v, ResourceMetadata: md, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return resource, p
}

// The Go SDK's client credentials handler finds its way in by discovery
// alone (a 401 → the server's metadata → the provider's → a token), is
// listed and calls the tools its scopes allow, and gets insufficient_scope,
// naming the scope,
// for the one they do not; a token the provider issued for another
// resource is refused.
func TestGoClientDiscoversTheProvider(t *testing.T) {
	resource, p := notesServer(t)
	for client, writes := range map[string]bool{oidctest.Reader: false, oidctest.Agent: true} {
		h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{Credentials: &oauthex.ClientCredentials{
			ClientID: client, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: oidctest.Secret(client)}}})
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: resource, OAuthHandler: h}, nil)
		if err != nil {
			t.Fatalf("%s: connect: %v", client, err)
		}
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil || len(list.Tools) != map[bool]int{false: 1, true: 2}[writes] || list.Tools[0].Name != "read_notes" {
			t.Errorf("%s is listed %+v (%v); want only the tools its scopes allow", client, list, err)
		}
		read, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_notes"})
		if err != nil || read.IsError || !strings.Contains(textOf(read), `"by":"`+client+`"`) {
			t.Errorf("%s: read_notes: %v %s", client, err, textOf(read))
		}
		write, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_notes"})
		if err != nil || write.IsError == writes || (!writes && !strings.Contains(textOf(write), `"code":"insufficient_scope"`)) {
			t.Errorf("%s: write_notes: %v %s", client, err, textOf(write))
		}
		cs.Close()
	}
	other, err := p.Token(oidctest.Agent, oidctest.OtherResource, "notes:read")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: resource, HTTPClient: &http.Client{Transport: bearer{other}}}, nil); err == nil {
		t.Error("a token for another resource connected")
	}
}

// The official TypeScript client's ClientCredentialsProvider does the same:
// discovery, a token for this resource (it sends RFC 8707's resource), a
// list of only the tool its scope allows, a call to it, and
// insufficient_scope for the other.
func TestTypeScriptClientDiscoversTheProvider(t *testing.T) {
	dir := filepath.Join(testmod.Root(t), "mcpserver", "testdata", "ts-client")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the TypeScript client is not installed (.ci/run runs npm ci in %s): %v", dir, err)
		}
		t.Skipf("the TypeScript client is not installed: run npm ci in %s", dir)
	}
	resource, p := notesServer(t)
	cmd := exec.Command("node", "oauth.mjs", resource, oidctest.Reader, oidctest.Secret(oidctest.Reader), p.Issuer, "notes:read", "read_notes", "write_notes")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the TypeScript client: %v\n%s", err, out)
	}
	var steps []struct {
		Step, Tool, Text string
		Tools            []string
		IsError          bool
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var s struct {
			Step, Tool, Text string
			Tools            []string
			IsError          bool
		}
		if json.Unmarshal(sc.Bytes(), &s) == nil {
			steps = append(steps, s)
		}
	}
	if len(steps) != 3 || strings.Join(steps[0].Tools, ",") != "read_notes" ||
		steps[1].IsError || !strings.Contains(steps[1].Text, `"by":"keel-reader"`) ||
		!steps[2].IsError || !strings.Contains(steps[2].Text, `"code":"insufficient_scope"`) {
		t.Fatalf("the TypeScript client's steps: %+v\n%s", steps, out)
	}
}

func textOf(r *mcp.CallToolResult) string {
	if r == nil || len(r.Content) == 0 {
		return ""
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// tools/list offers each client what it may call: a tool the executor's
// ToolFilter hides from the client's tenant is not listed, and a call to it
// is the same JSON-RPC error as a name the set lacks, over every transport.
func TestListsAreByWhoAsks(t *testing.T) {
	tool := func(name string) *runtime.Tool {
		return runtime.NewTool(runtime.ToolInfo{Name: name, Version: "1", Effect: runtime.EffectRead, Description: name,
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
			runtime.Handle(func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }))
	}
	exec, err := runtime.NewExecutor(keeltest.Of(tool("lookup"), tool("forecast")), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithToolFilter(func(_ context.Context, ec runtime.ExecutionContext, info runtime.ToolInfo) bool {
			return info.Name != "forecast" || ec.Tenant == "paid"
		}))
	if err != nil {
		t.Fatal(err)
	}
	// The tenant is the client's name here, as a session's identity is on stdio.
	s := mcpserver.New(exec, mcpserver.Options{Context: func(_ context.Context, req *mcp.CallToolRequest) runtime.ExecutionContext {
		return runtime.ExecutionContext{Tenant: req.Session.InitializeParams().ClientInfo.Name}
	}})
	for tenant, want := range map[string]string{"free": "lookup", "paid": "forecast,lookup"} {
		for transport, cs := range transports(t, s, tenant) {
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range list.Tools {
				names = append(names, tl.Name)
			}
			if got := strings.Join(names, ","); got != want {
				t.Errorf("%s over %s lists %s, want %s", tenant, transport, got, want)
			}
			_, hiddenErr := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "forecast"})
			_, absentErr := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"})
			if tenant == "free" && (hiddenErr == nil || absentErr == nil || hiddenErr.Error() != absentErr.Error()) {
				t.Errorf("over %s, a hidden tool's error %v differs from an absent one's %v", transport, hiddenErr, absentErr)
			}
			if tenant == "paid" && hiddenErr != nil {
				t.Errorf("over %s, the paid tenant's call: %v", transport, hiddenErr)
			}
		}
	}
}
