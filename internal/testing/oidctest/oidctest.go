// Package oidctest runs a real OpenID Connect provider on loopback for
// tests: panva's oidc-provider, from mcpserver/testdata/oidc-provider (its
// node_modules installed by npm ci, which .ci/run does). Without Node.js
// or those modules a test is skipped, except in CI (CI=true), where their
// absence is a failure.
package oidctest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keelgen/keel/internal/testing/testmod"
)

// Clients the provider knows, each with its secret (Secret). Each may ask
// for notes:read and notes:write and is granted, of those, what its API
// permission says: Agent both, Reader notes:read, Short notes:read in
// tokens that live one second.
const (
	Agent  = "keel-agent"
	Reader = "keel-reader"
	Short  = "keel-short"
	// OtherResource is a resource the provider also serves.
	OtherResource = "https://other.example/api"
)

// Secret is a client's secret.
func Secret(client string) string { return client + "-secret-that-is-long-enough" }

// Provider is one running provider.
type Provider struct {
	Issuer   string
	resource string
	port     string
	cmd      *exec.Cmd
	t        testing.TB
}

// Start runs a provider that issues tokens for resource (and
// OtherResource), signing with a key of id kid.
func Start(t testing.TB, resource, kid string) *Provider {
	t.Helper()
	dir := filepath.Join(testmod.Root(t), "mcpserver", "testdata", "oidc-provider")
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "oidc-provider"))
	if nodeErr != nil || modErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no OpenID provider to test against (node: %v; modules: %v); .ci/run runs npm ci in %s", nodeErr, modErr, dir)
		}
		t.Skipf("no OpenID provider to test against: run npm ci in %s (needs Node.js 20.19+)", dir)
	}
	p := &Provider{resource: resource, port: "0", t: t}
	p.start(dir, kid)
	t.Cleanup(p.Stop)
	return p
}

func (p *Provider) start(dir, kid string) {
	p.t.Helper()
	p.cmd = exec.Command("node", "provider.mjs")
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), "PORT="+p.port, "KID="+kid, "RESOURCE="+p.resource)
	var stderr strings.Builder
	p.cmd.Stderr = &stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(l)
		io.Copy(io.Discard, out)
	}()
	select {
	case l := <-line:
		issuer, ok := strings.CutPrefix(l, "issuer ")
		if !ok {
			p.t.Fatalf("the provider did not start: %q %s", l, stderr.String())
		}
		p.Issuer = issuer
		u, _ := url.Parse(issuer)
		p.port = u.Port()
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		p.t.Fatalf("the provider did not start within 20 s: %s", stderr.String())
	}
}

// Rotate restarts the provider on its port with a new signing key, of id
// kid: the old key is gone from its key set.
func (p *Provider) Rotate(kid string) {
	p.t.Helper()
	p.Stop()
	p.start(p.cmd.Dir, kid)
}

// Stop ends the provider.
func (p *Provider) Stop() {
	if p.cmd != nil && p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

// Token is an access token for client, by the client credentials grant,
// for resource with scope (space-separated; "" for none).
func (p *Provider) Token(client, resource, scope string) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {resource}}
	if scope != "" {
		form.Set("scope", scope)
	}
	req, err := http.NewRequest(http.MethodPost, p.Issuer+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client, Secret(client))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", err
	}
	if body.AccessToken == "" {
		return "", fmt.Errorf("no token: %s %s", resp.Status, body.Error)
	}
	return body.AccessToken, nil
}
