// Package oidcverify is a ready mcpserver Verifier for JWT access tokens
// (RFC 9068) from an OpenID Connect provider: the issuer's metadata is
// discovered once, tokens are checked against its published keys
// (cached, refreshed on a key id it has not seen, at most once per
// MinKeyRefresh), its issuer, their expiry (with a small skew), their
// type (at+jwt) and their audience, which must be this server's resource.
// The principal and scopes come from configurable claims. JOSE is
// github.com/go-jose/go-jose and the claim checks github.com/coreos/go-oidc;
// nothing here signs or verifies by hand.
package oidcverify

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/keelgen/keel/internal/weburl"
)

// Options configure a verifier. Issuer and Resource are required.
type Options struct {
	// Issuer is the provider's issuer URL, exactly as its tokens and its
	// metadata (/.well-known/openid-configuration) state it; https (http
	// only on loopback, for tests).
	Issuer string
	// Resource is this server's resource URI (the ResourceMetadata's
	// Resource): every token's aud must include it (RFC 8707), so a token
	// the provider issued for another resource is refused.
	Resource string
	// PrincipalClaim names the claim whose string is the principal
	// (TokenInfo.UserID; default "sub"). A token without it is refused.
	PrincipalClaim string
	// ScopeClaim names the claim holding the granted scopes, a
	// space-separated string (RFC 9068's "scope") or an array of strings
	// (some providers' "scp"); default "scope".
	ScopeClaim string
	// Algorithms are the signature algorithms accepted (default
	// DefaultAlgorithms); symmetric ones and "none" are refused.
	Algorithms []string
	// ClockSkew is how far past its expiry a token is still taken, for a
	// provider whose clock runs ahead (default DefaultClockSkew, at most
	// MaxClockSkew).
	ClockSkew time.Duration
	// MinKeyRefresh is the least time between two fetches of the key set
	// that a token with an unknown key id may cause (default
	// DefaultMinKeyRefresh): a flood of made-up key ids costs one fetch.
	MinKeyRefresh time.Duration
	// AcceptUntyped takes a token whose typ header is not at+jwt (RFC 9068,
	// 4: a resource server must check it, so an ID token is not taken for
	// an access token), for a provider that does not set it.
	AcceptUntyped bool
	// HTTPClient fetches the metadata and the keys (default: a client with
	// a 10 s timeout).
	HTTPClient *http.Client
}

// Defaults and bounds of Options.
const (
	DefaultClockSkew     = 30 * time.Second
	MaxClockSkew         = 5 * time.Minute
	DefaultMinKeyRefresh = time.Minute
	// MaxKeySetBytes bounds a key set document; MaxKeys the keys kept.
	MaxKeySetBytes = 1 << 20
	MaxKeys        = 100
	// KeyMaxAge is how long a fetched key set is used before the next
	// token fetches it again, so a key the provider removed stops
	// verifying (a provider that does not answer leaves the last one).
	KeyMaxAge = time.Hour
)

// DefaultAlgorithms are the asymmetric JWS algorithms of RFC 7518 and 8037.
func DefaultAlgorithms() []string {
	return []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
}

// New discovers the issuer's metadata and returns a verifier for
// mcpserver.HTTPOptions.Verifier. Every refusal it returns wraps
// auth.ErrInvalidToken, and its reason goes to the server's protected log,
// never to the client.
func New(ctx context.Context, opts Options) (auth.TokenVerifier, error) {
	if err := opts.fill(); err != nil {
		return nil, fmt.Errorf("oidcverify: %w", err)
	}
	ctx = oidc.ClientContext(ctx, opts.HTTPClient)
	provider, err := oidc.NewProvider(ctx, opts.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oidcverify: discovering %s: %w", opts.Issuer, err)
	}
	var md struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := provider.Claims(&md); err != nil || md.JWKSURI == "" {
		return nil, fmt.Errorf("oidcverify: the issuer's metadata names no jwks_uri")
	}
	if err := checkURL("the issuer's jwks_uri", md.JWKSURI); err != nil {
		return nil, fmt.Errorf("oidcverify: %w", err)
	}
	keys := newKeySet(md.JWKSURI, opts)
	if _, err := keys.refresh(ctx); err != nil { // a key set that cannot be read is a misconfiguration: say so at start
		return nil, fmt.Errorf("oidcverify: %s: %w", md.JWKSURI, err)
	}
	skew := opts.ClockSkew
	v := oidc.NewVerifier(opts.Issuer, keys, &oidc.Config{
		ClientID:             opts.Resource,
		SupportedSigningAlgs: opts.Algorithms,
		Now:                  func() time.Time { return time.Now().Add(-skew) },
	})
	return func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		info, err := verify(oidc.ClientContext(ctx, opts.HTTPClient), v, token, opts)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", auth.ErrInvalidToken, err)
		}
		return info, nil
	}, nil
}

func (o *Options) fill() error {
	if err := checkURL("Issuer", o.Issuer); err != nil {
		return err
	}
	if r, err := url.Parse(o.Resource); o.Resource == "" || err != nil || !r.IsAbs() {
		return fmt.Errorf("Resource %q is not an absolute URI: tokens must name this server as their audience", o.Resource)
	}
	if o.PrincipalClaim == "" {
		o.PrincipalClaim = "sub"
	}
	if o.ScopeClaim == "" {
		o.ScopeClaim = "scope"
	}
	if len(o.Algorithms) == 0 {
		o.Algorithms = DefaultAlgorithms()
	}
	for _, a := range o.Algorithms {
		if !slices.Contains(DefaultAlgorithms(), a) {
			return fmt.Errorf("algorithm %q is not an asymmetric JWS algorithm (one of %s)", a, strings.Join(DefaultAlgorithms(), ", "))
		}
	}
	switch {
	case o.ClockSkew < 0 || o.ClockSkew > MaxClockSkew:
		return fmt.Errorf("ClockSkew %v is outside [0, %v]", o.ClockSkew, MaxClockSkew)
	case o.ClockSkew == 0:
		o.ClockSkew = DefaultClockSkew
	}
	switch {
	case o.MinKeyRefresh < 0:
		return fmt.Errorf("MinKeyRefresh %v is negative", o.MinKeyRefresh)
	case o.MinKeyRefresh == 0:
		o.MinKeyRefresh = DefaultMinKeyRefresh
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	return nil
}

// checkURL refuses what is not an https URL (http on loopback).
func checkURL(what, s string) error {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return fmt.Errorf("%s %q is not an absolute URL", what, s)
	}
	if !weburl.Secure(u) {
		return fmt.Errorf("%s %q is not https (http only on loopback, for tests)", what, s)
	}
	return nil
}

// verify checks one token and reads its principal and scopes.
func verify(ctx context.Context, v *oidc.IDTokenVerifier, token string, opts Options) (*auth.TokenInfo, error) {
	t, err := v.Verify(ctx, token)
	if err != nil {
		return nil, err
	}
	var claims map[string]any
	if err := t.Claims(&claims); err != nil {
		return nil, err
	}
	principal, _ := claims[opts.PrincipalClaim].(string)
	if principal == "" {
		return nil, fmt.Errorf("the token has no %q claim (the principal)", opts.PrincipalClaim)
	}
	scopes, err := scopesOf(claims[opts.ScopeClaim])
	if err != nil {
		return nil, fmt.Errorf("the %q claim: %w", opts.ScopeClaim, err)
	}
	return &auth.TokenInfo{UserID: principal, Scopes: scopes, Expiration: t.Expiry, Extra: claims}, nil
}

// scopesOf reads a scope claim: absent, a space-separated string, or an
// array of strings.
func scopesOf(v any) ([]string, error) {
	switch s := v.(type) {
	case nil:
		return nil, nil
	case string:
		return strings.Fields(s), nil
	case []any:
		out := make([]string, 0, len(s))
		for _, e := range s {
			str, ok := e.(string)
			if !ok {
				return nil, errors.New("an array with a member that is not a string")
			}
			out = append(out, str)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("a %T, not a string or an array of strings", v)
	}
}
