package mcpserver

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/keelgen/keel/internal/weburl"
)

// wellKnownPath is where RFC 9728 puts a protected resource's metadata,
// before the resource's own path.
const wellKnownPath = "/.well-known/oauth-protected-resource"

// resourceMetadata checks the metadata a server publishes and returns the
// URL it is published at: for https://mcp.example.com/mcp,
// https://mcp.example.com/.well-known/oauth-protected-resource/mcp.
func resourceMetadata(md *oauthex.ProtectedResourceMetadata) (metadataURL string, err error) {
	u, err := url.Parse(md.Resource)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" || u.RawQuery != "" {
		return "", fmt.Errorf("ResourceMetadata.Resource %q is not an absolute URL without a query or fragment (RFC 9728, 2)", md.Resource)
	}
	if !weburl.Secure(u) {
		return "", fmt.Errorf("ResourceMetadata.Resource %q is not https (http only on loopback, for tests)", md.Resource)
	}
	if len(md.AuthorizationServers) == 0 {
		return "", errors.New("ResourceMetadata.AuthorizationServers is empty: a client could discover no way to get a token")
	}
	for _, as := range md.AuthorizationServers {
		a, err := url.Parse(as)
		if err != nil || !a.IsAbs() || !weburl.Secure(a) {
			return "", fmt.Errorf("ResourceMetadata.AuthorizationServers: %q is not an https URL (http only on loopback)", as)
		}
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: wellKnownPath + path}).String(), nil
}

// metadataRoute answers GET of the metadata's path (and, for a resource
// with a path, the bare well-known path too, which clients try next) with
// the metadata, before any other check: it is public, for discovery, and
// read cross-origin. Everything else goes to next.
type metadataRoute struct {
	next  http.Handler
	paths map[string]bool
	serve http.Handler
}

func newMetadataRoute(next http.Handler, md *oauthex.ProtectedResourceMetadata, metadataURL string) metadataRoute {
	u, _ := url.Parse(metadataURL)
	return metadataRoute{next: next, paths: map[string]bool{u.EscapedPath(): true, wellKnownPath: true}, serve: auth.ProtectedResourceMetadataHandler(md)}
}

func (m metadataRoute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if m.paths[r.URL.EscapedPath()] {
		m.serve.ServeHTTP(w, r)
		return
	}
	m.next.ServeHTTP(w, r)
}

// challenges completes the SDK's refusals of a bearer token as RFC 6750
// and 9728 ask: every 401 names the metadata (resource_metadata), and says
// error="invalid_token" when a token came and was refused; a 403 says
// error="insufficient_scope" with the scope to ask for.
type challenges struct {
	next        http.Handler
	metadataURL string
}

func (c challenges) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.next.ServeHTTP(&challengeWriter{ResponseWriter: w, c: c, presented: r.Header.Get("Authorization") != ""}, r)
}

type challengeWriter struct {
	http.ResponseWriter
	c         challenges
	presented bool
}

func (w *challengeWriter) WriteHeader(status int) {
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		w.Header().Set("WWW-Authenticate", w.challenge(status))
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *challengeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// challenge is the WWW-Authenticate value for status.
func (w *challengeWriter) challenge(status int) string {
	params := []string{}
	if w.c.metadataURL != "" {
		params = append(params, fmt.Sprintf("resource_metadata=%q", w.c.metadataURL))
	}
	scope := scopeOf(w.Header().Values("WWW-Authenticate"))
	switch {
	case status == http.StatusForbidden:
		params = append(params, `error="insufficient_scope"`)
		if scope != "" {
			params = append(params, fmt.Sprintf("scope=%q", scope))
		}
	case w.presented:
		params = append(params, `error="invalid_token"`)
	}
	if len(params) == 0 {
		return "Bearer"
	}
	return "Bearer " + strings.Join(params, ", ")
}

// scopeOf is the scope the SDK's challenge names, if any.
func scopeOf(headers []string) string {
	cs, err := oauthex.ParseWWWAuthenticate(headers)
	if err != nil {
		return ""
	}
	for _, c := range cs {
		if s := c.Params["scope"]; s != "" {
			return s
		}
	}
	return ""
}

// Flush passes on, for the event streams the SDK writes through w.
func (w *challengeWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }
