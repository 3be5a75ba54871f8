package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/keelgen/keel/internal/testing/oidctest"
	"github.com/keelgen/keel/internal/testing/testmod"
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
	// Not quietExecutor's 100 ms: under CI's two race passes at once a call
	// that discovery and step-up share the machine with outlasted it.
	exec, err := runtime.NewExecutor(keeltest.Of(tool("read_notes", "notes:read"), tool("write_notes", "notes:write")),
		runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	s := mcpserver.New(exec,
		mcpserver.Options{Context: mcpserver.TokenContext(func(_ context.Context, tok *auth.TokenInfo) runtime.ExecutionContext {
			return runtime.ExecutionContext{Principal: tok.UserID}
		})})
	// The metadata lists the scope every client starts with; a client asks
	// for notes:write when a call needs it (step-up).
	md := &oauthex.ProtectedResourceMetadata{Resource: resource, AuthorizationServers: []string{p.Issuer}, ScopesSupported: []string{"notes:read"}}
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
// alone (a 401 → the server's metadata → the provider's → a token for the
// scope the metadata lists, notes:read) and is listed the tool that scope
// allows. A call of the other tool is 403 insufficient_scope naming
// notes:write: the agent, whose provider grants it, steps up (a new token
// for both scopes), the call runs, and its list now has both tools; the
// reader, whose provider does not, is refused. A token the provider issued
// for another resource is refused.
func TestGoClientDiscoversTheProvider(t *testing.T) {
	t.Parallel()
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
		if got := listed(t, cs); got != "read_notes" {
			t.Errorf("%s is listed %s; want only the tool its scope allows", client, got)
		}
		read, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_notes"})
		if err != nil || read.IsError || !strings.Contains(textOf(read), `"by":"`+client+`"`) {
			t.Errorf("%s: read_notes: %v %s", client, err, textOf(read))
		}
		write, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_notes"})
		switch {
		case writes && (err != nil || write.IsError):
			t.Errorf("%s did not step up to write_notes: %v %s", client, err, textOf(write))
		case writes && listed(t, cs) != "read_notes,write_notes":
			t.Errorf("%s, stepped up, is listed %s", client, listed(t, cs))
		case !writes && (err == nil || !strings.Contains(err.Error(), "Forbidden")):
			t.Errorf("%s: write_notes without the scope: %v %s", client, err, textOf(write))
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

func listed(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	return strings.Join(names, ",")
}

// The official TypeScript client's ClientCredentialsProvider does the same:
// discovery, a token for this resource (it sends RFC 8707's resource) and
// the scope it is configured with, a list of the tools that allows, and
// calls. The reader, configured with notes:read, is refused write_notes: on
// the 403 it tries again ("upscoping"), but SDK 1.32.2's provider asks for
// its configured scope on every token request, so the agent is configured
// with both scopes from the start.
func TestTypeScriptClientDiscoversTheProvider(t *testing.T) {
	t.Parallel()
	dir := tsClientDir(t)
	resource, p := notesServer(t)
	for client, writes := range map[string]bool{oidctest.Reader: false, oidctest.Agent: true} {
		scope, want := "notes:read", "read_notes"
		if writes {
			scope, want = "notes:read notes:write", "read_notes,write_notes"
		}
		cmd := exec.Command("node", "oauth.mjs", resource, client, oidctest.Secret(client), p.Issuer, scope, "read_notes", "write_notes")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the TypeScript client: %v\n%s", err, out)
		}
		var steps []struct {
			Step, Tool, Text, Error string
			Tools                   []string
			IsError                 bool
		}
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			var s struct {
				Step, Tool, Text, Error string
				Tools                   []string
				IsError                 bool
			}
			if json.Unmarshal(sc.Bytes(), &s) == nil {
				steps = append(steps, s)
			}
		}
		ok := len(steps) == 3 && strings.Join(steps[0].Tools, ",") == want &&
			!steps[1].IsError && strings.Contains(steps[1].Text, `"by":"`+client+`"`)
		if writes {
			ok = ok && !steps[2].IsError && strings.Contains(steps[2].Text, `"by":"`+client+`"`)
		} else {
			ok = ok && strings.Contains(steps[2].Error, "403")
		}
		if !ok {
			t.Errorf("%s, the TypeScript client's steps: %+v\n%s", client, steps, out)
		}
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
		return runtime.ExecutionContext{Tenant: req.ClientInfo().Name}
	}})
	for tenant, want := range map[string]string{"free": "lookup", "paid": "forecast,lookup"} {
		for transport, cs := range transports(t, s, tenant) {
			if got := listed(t, cs); got != want {
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

// The Go SDK's AuthorizationCodeHandler, as a desktop MCP host uses it,
// finds its way in by discovery alone: a 401 → the server's metadata → the
// provider's → the provider's login and consent pages (which the fetcher
// fills in as a person would: any login, then Continue) → a code on the
// loopback redirect → a token (PKCE, RFC 8707 resource) → the call runs as
// the person who logged in; a call of the tool that needs notes:write steps
// up the same way, through consent again.
func TestGoAuthorizationCodeClientLogsIn(t *testing.T) {
	t.Parallel()
	resource, _ := notesServer(t)
	const redirect = "http://127.0.0.1/callback"
	logins := 0
	person := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		logins++
		return personAt(ctx, args.URL, redirect, "ann")
	}
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient:      &oauthex.ClientCredentials{ClientID: "keel-desktop"},
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: person,
	})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: resource, OAuthHandler: h}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if got := listed(t, cs); got != "read_notes" {
		t.Errorf("listed %s", got)
	}
	read, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_notes"})
	if err != nil || read.IsError || !strings.Contains(textOf(read), `"by":"ann"`) {
		t.Fatalf("read_notes: %v %s", err, textOf(read))
	}
	write, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_notes"})
	if err != nil || write.IsError || !strings.Contains(textOf(write), `"by":"ann"`) {
		t.Errorf("write_notes after step-up: %v %s", err, textOf(write))
	}
	if logins != 2 {
		t.Errorf("%d trips to the provider's pages, want 2 (the first token, the step-up)", logins)
	}
}

// personAt plays the person at the provider's pages: it opens the
// authorization URL, submits each page's form (the login as login, then
// the consent) and returns the code the provider redirects to redirect.
func personAt(ctx context.Context, authURL, redirect, login string) (*auth.AuthorizationResult, error) {
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirect) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	form := regexp.MustCompile(`<form[^>]*action="([^"]+)"`)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	resp, err := browser.Do(req)
	for range 4 { // the login page, the consent page, then the redirect
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if loc, err := resp.Location(); err == nil && strings.HasPrefix(loc.String(), redirect) {
			q := loc.Query()
			if q.Get("code") == "" {
				return nil, fmt.Errorf("the provider refused: %s", loc.RawQuery)
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		}
		m := form.FindSubmatch(body)
		if m == nil {
			return nil, fmt.Errorf("a page without a form (%s): %.300s", resp.Status, body)
		}
		action, _ := resp.Request.URL.Parse(html.UnescapeString(string(m[1])))
		fields := url.Values{"prompt": {"consent"}}
		if bytes.Contains(body, []byte(`name="login"`)) {
			fields = url.Values{"prompt": {"login"}, "login": {login}, "password": {"any"}}
		}
		resp, err = browser.PostForm(action.String(), fields)
	}
	return nil, errors.New("no code after the login and consent pages")
}

// The official TypeScript client as a desktop host: the authorization code
// flow (PKCE, a pre-registered public client, a loopback redirect) through
// the provider's login and consent pages, by discovery alone; the token
// carries the person's login, and its list and calls are its scope's.
func TestTypeScriptAuthorizationCodeClientLogsIn(t *testing.T) {
	t.Parallel()
	dir := tsClientDir(t)
	resource, _ := notesServer(t)
	cmd := exec.Command("node", "oauth-code.mjs", resource, "ann", "read_notes")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the TypeScript client: %v\n%s", err, out)
	}
	want := `{"step":"login"}
{"step":"list","tools":["read_notes"]}
{"step":"call","tool":"read_notes","isError":false,"text":"{\"by\":\"ann\"}"}`
	if strings.TrimSpace(string(out)) != want {
		t.Errorf("the TypeScript client's steps:\n%s\nwant\n%s", out, want)
	}
}

// tsClientDir is where the official TypeScript client is installed. A test
// that drives it is end-to-end (KEEL_E2E=1), and skipped without it, except
// in CI, where .ci/run installs it.
func tsClientDir(t *testing.T) string {
	t.Helper()
	testmod.EndToEnd(t)
	dir := filepath.Join(testmod.Root(t), "mcpserver", "testdata", "ts-client")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the TypeScript client is not installed (.ci/run runs npm ci in %s): %v", dir, err)
		}
		t.Skipf("the TypeScript client is not installed: run npm ci in %s", dir)
	}
	return dir
}
