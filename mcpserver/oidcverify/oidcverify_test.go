package oidcverify_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/keelgen/keel/internal/testing/oidctest"
	"github.com/keelgen/keel/mcpserver/oidcverify"
)

const resource = "http://127.0.0.1:8080/mcp"

// keyFetches counts the requests for the provider's key set.
type keyFetches struct{ n atomic.Int32 }

func (k *keyFetches) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/jwks") {
		k.n.Add(1)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func token(t *testing.T, p *oidctest.Provider, client, res, scope string) string {
	t.Helper()
	tok, err := p.Token(client, res, scope)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func newVerifier(t *testing.T, opts oidcverify.Options) auth.TokenVerifier {
	t.Helper()
	v, err := oidcverify.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Tokens of a real OpenID provider: the principal and scopes of a valid
// one; refused, as invalid tokens, one for another resource, one altered,
// one expired (past the skew), one of a key rotated out; and a key rotated
// in is fetched and taken.
func TestTokensOfARealProvider(t *testing.T) {
	p := oidctest.Start(t, resource, "k1")
	fetches := &keyFetches{}
	client := &http.Client{Transport: fetches, Timeout: 5 * time.Second}
	v := newVerifier(t, oidcverify.Options{Issuer: p.Issuer, Resource: resource, MinKeyRefresh: 50 * time.Millisecond, HTTPClient: client})
	ctx := context.Background()

	agent := token(t, p, oidctest.Agent, resource, "notes:read notes:write")
	info, err := v(ctx, agent, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.UserID != oidctest.Agent || !slices.Equal(info.Scopes, []string{"notes:read", "notes:write"}) ||
		time.Until(info.Expiration) < time.Minute || info.Extra["client_id"] != oidctest.Agent {
		t.Errorf("token info %+v", info)
	}
	if info, err := v(ctx, token(t, p, oidctest.Reader, resource, "notes:read"), nil); err != nil || !slices.Equal(info.Scopes, []string{"notes:read"}) {
		t.Errorf("the reader's token: %+v, %v", info, err)
	}

	refused := func(what, tok, why string) {
		t.Helper()
		_, err := v(ctx, tok, nil)
		if !errors.Is(err, auth.ErrInvalidToken) || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v (want an invalid token: %s)", what, err, why)
		}
	}
	refused("a token for another resource", token(t, p, oidctest.Agent, oidctest.OtherResource, "notes:read"), "audience")
	parts := strings.Split(agent, ".")
	sig := []byte(parts[2])
	sig[5] ^= 1
	refused("a signature altered", parts[0]+"."+parts[1]+"."+string(sig), "")
	refused("an unsigned token", b64(`{"alg":"none","typ":"at+jwt","kid":"k1"}`)+"."+parts[1]+".", "")
	refused("an HMAC token", b64(`{"alg":"HS256","typ":"at+jwt","kid":"k1"}`)+"."+parts[1]+"."+parts[2], "")
	refused("an untyped token", b64(`{"alg":"ES256","kid":"k1"}`)+"."+parts[1]+"."+parts[2], "not at+jwt")
	refused("garbage", "not.a.token", "malformed")

	// Expiry: a token that lived one second is refused once the skew is past.
	// exp has one-second resolution and iat is rounded down, so a token
	// issued late in a second has almost none of its second left: a skew of
	// one second gives the fresh check a whole second wherever in a second
	// the token was issued (with a millisecond, a check under -race on a
	// loaded machine once came too late). The strict verifier has its keys
	// before the token is issued.
	strict := newVerifier(t, oidcverify.Options{Issuer: p.Issuer, Resource: resource, ClockSkew: time.Second})
	if _, err := strict(ctx, agent, nil); err != nil {
		t.Fatal(err)
	}
	short := token(t, p, oidctest.Short, resource, "notes:read")
	if _, err := strict(ctx, short, nil); err != nil {
		t.Fatalf("a fresh short token: %v", err)
	}
	time.Sleep(2100 * time.Millisecond) // past exp (at most a second after issue) and the skew
	if _, err := strict(ctx, short, nil); !errors.Is(err, auth.ErrInvalidToken) || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired token: %v", err)
	}
	if _, err := v(ctx, short, nil); err != nil {
		t.Errorf("within the default skew (30 s), the expired token is refused: %v", err)
	}

	// Rotation: the provider signs with a new key; its tokens are taken once
	// the key set is fetched again, the old key's are not.
	p.Rotate("k2")
	time.Sleep(60 * time.Millisecond) // MinKeyRefresh
	before := fetches.n.Load()
	rotated := token(t, p, oidctest.Agent, resource, "notes:read")
	if _, err := v(ctx, rotated, nil); err != nil {
		t.Fatalf("a token of the rotated key: %v", err)
	}
	if got := fetches.n.Load() - before; got != 1 {
		t.Errorf("%d key set fetches for the rotated key, want 1", got)
	}
	time.Sleep(60 * time.Millisecond)
	refused("a token of the key rotated out", agent, "no key")
}

// Made-up key ids cost at most one fetch of the key set per MinKeyRefresh:
// a flood of 200 costs none after New's own.
func TestUnknownKeyIDsDoNotFloodTheProvider(t *testing.T) {
	p := oidctest.Start(t, resource, "k1")
	fetches := &keyFetches{}
	v := newVerifier(t, oidcverify.Options{Issuer: p.Issuer, Resource: resource, HTTPClient: &http.Client{Transport: fetches}})
	parts := strings.Split(token(t, p, oidctest.Agent, resource, ""), ".")
	after := fetches.n.Load()
	for i := range 200 {
		tok := b64(fmt.Sprintf(`{"alg":"ES256","typ":"at+jwt","kid":"made-up-%d"}`, i)) + "." + parts[1] + "." + parts[2]
		if _, err := v(context.Background(), tok, nil); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("a made-up key id: %v", err)
		}
	}
	if got := fetches.n.Load() - after; got > 1 {
		t.Errorf("200 made-up key ids caused %d key set fetches, want at most 1", got)
	}
}

// Options that would weaken a check are refused, with what is wrong.
func TestOptionsThatWeakenAreRefused(t *testing.T) {
	for _, c := range []struct {
		opts oidcverify.Options
		want string
	}{
		{oidcverify.Options{Issuer: "https://id.example", Resource: ""}, "Resource"},
		{oidcverify.Options{Issuer: "http://id.example", Resource: resource}, "not https"},
		{oidcverify.Options{Issuer: "", Resource: resource}, "Issuer"},
		{oidcverify.Options{Issuer: "https://id.example", Resource: resource, Algorithms: []string{"HS256"}}, "HS256"},
		{oidcverify.Options{Issuer: "https://id.example", Resource: resource, Algorithms: []string{"none"}}, "none"},
		{oidcverify.Options{Issuer: "https://id.example", Resource: resource, ClockSkew: time.Hour}, "ClockSkew"},
		{oidcverify.Options{Issuer: "https://id.example", Resource: resource, ClockSkew: -time.Second}, "ClockSkew"},
		{oidcverify.Options{Issuer: "https://id.example", Resource: resource, MinKeyRefresh: -time.Second}, "MinKeyRefresh"},
	} {
		if _, err := oidcverify.New(context.Background(), c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.opts, err, c.want)
		}
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
