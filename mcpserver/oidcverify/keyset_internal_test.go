package oidcverify

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// issuer is a key set on loopback whose published document can change, and
// the key that signs with k1.
type issuer struct {
	key  *ecdsa.PrivateKey
	doc  atomic.Value // string
	srv  *httptest.Server
	keys *keySet
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	i := &issuer{key: key}
	pub, err := json.Marshal(jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"})
	if err != nil {
		t.Fatal(err)
	}
	i.doc.Store(`{"keys":[` + string(pub) + `]}`)
	i.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(i.doc.Load().(string)))
	}))
	t.Cleanup(i.srv.Close)
	i.keys = newKeySet(i.srv.URL, Options{HTTPClient: i.srv.Client(), Algorithms: []string{"ES256"}, MinKeyRefresh: time.Millisecond})
	return i
}

// sign is a compact JWS of payload by k1, with these protected headers.
func (i *issuer) sign(t *testing.T, payload string, headers map[jose.HeaderKey]any) string {
	t.Helper()
	opts := &jose.SignerOptions{ExtraHeaders: headers}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: i.key, KeyID: "k1"}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A token the issuer signed without typ at+jwt (an ID token, say), wrapped
// again as JWS JSON with an unprotected typ (and kid), is refused: a JWT is
// compact, and typ and kid count only when signed.
func TestUnprotectedHeadersAreRefused(t *testing.T) {
	i := newIssuer(t)
	ctx := context.Background()
	typed := i.sign(t, `{"sub":"alice"}`, map[jose.HeaderKey]any{jose.HeaderType: "at+jwt"})
	if _, err := i.keys.VerifySignature(ctx, typed); err != nil {
		t.Fatalf("a typed compact token: %v", err)
	}
	untyped := strings.Split(i.sign(t, `{"sub":"alice"}`, nil), ".")
	b64 := base64.RawURLEncoding.EncodeToString
	for name, tok := range map[string]string{
		"typ unprotected": fmt.Sprintf(`{"payload":%q,"protected":%q,"header":{"typ":"at+jwt"},"signature":%q}`, untyped[1], untyped[0], untyped[2]),
		"typ and kid unprotected": fmt.Sprintf(`{"payload":%q,"protected":%q,"header":{"typ":"at+jwt","kid":"k1"},"signature":%q}`,
			untyped[1], b64([]byte(`{"alg":"ES256"}`)), untyped[2]),
		"compact, untyped": strings.Join(untyped, "."),
	} {
		if _, err := i.keys.VerifySignature(ctx, tok); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A key set that the provider publishes and that holds no key keel can use
// replaces the keys before it: the removed key stops verifying. A provider
// that does not answer leaves the keys it last published.
func TestKeySetWithNoUsableKeyFailsClosed(t *testing.T) {
	i := newIssuer(t)
	ctx := context.Background()
	tok := i.sign(t, `{"sub":"alice"}`, map[jose.HeaderKey]any{jose.HeaderType: "at+jwt"})
	if _, err := i.keys.VerifySignature(ctx, tok); err != nil {
		t.Fatal(err)
	}
	good := i.doc.Load().(string)
	i.doc.Store(`not JSON`) // a provider that answers nothing usable
	time.Sleep(2 * time.Millisecond)
	if _, err := i.keys.refresh(ctx); err == nil {
		t.Fatal("a refresh of a broken answer succeeded")
	}
	if _, err := i.keys.VerifySignature(ctx, tok); err != nil {
		t.Fatalf("the last keys after a broken answer: %v", err)
	}
	i.doc.Store(`{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"k1"}]}`) // parses; no public signing key
	time.Sleep(2 * time.Millisecond)
	i.keys.refresh(ctx)
	if _, err := i.keys.VerifySignature(ctx, tok); err == nil {
		t.Fatal("a key the provider removed still verifies")
	}
	i.doc.Store(good)
	time.Sleep(2 * time.Millisecond)
	if _, err := i.keys.VerifySignature(ctx, tok); err != nil {
		t.Fatalf("after the key came back: %v", err)
	}
}
