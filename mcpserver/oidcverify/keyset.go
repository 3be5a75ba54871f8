package oidcverify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// keySet is the issuer's published signing keys, as go-oidc's KeySet: kept
// from the last fetch, fetched again when a token names a key id they lack
// (the provider rotated its keys), but not more than once per
// MinKeyRefresh, and one fetch at a time. go-oidc's own RemoteKeySet
// fetches on every unknown key id, so each made-up one would cost a
// request to the provider.
type keySet struct {
	url        string
	client     *http.Client
	algs       []jose.SignatureAlgorithm
	minRefresh time.Duration
	untyped    bool

	mu       sync.Mutex
	keys     []jose.JSONWebKey
	fetched  time.Time     // the last fetch begun
	inflight chan struct{} // closed when the fetch under way ends
	fetchErr error
}

func newKeySet(url string, opts Options) *keySet {
	algs := make([]jose.SignatureAlgorithm, len(opts.Algorithms))
	for i, a := range opts.Algorithms {
		algs[i] = jose.SignatureAlgorithm(a)
	}
	return &keySet{url: url, client: opts.HTTPClient, algs: algs, minRefresh: opts.MinKeyRefresh, untyped: opts.AcceptUntyped}
}

// VerifySignature checks the token's one signature by the key its key id
// names and returns its payload. A JWT is compact JWS (RFC 7519), whose
// header is all protected: the JSON serialization, whose unprotected
// header go-jose merges into what it reports, could carry a typ and a kid
// the issuer never signed, so it is refused, and typ and kid are read from
// the protected header alone.
func (k *keySet) VerifySignature(ctx context.Context, token string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(token, k.algs)
	if err != nil {
		return nil, fmt.Errorf("a malformed token (a JWT is compact JWS): %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("a token with other than one signature")
	}
	h := jws.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); !k.untyped && typ != "at+jwt" && typ != "application/at+jwt" {
		return nil, fmt.Errorf("the token's typ is %q, not at+jwt: not an access token (RFC 9068)", typ)
	}
	if h.KeyID == "" {
		return nil, errors.New("the token names no key id")
	}
	keys, stale := k.current()
	if stale { // a key the provider removed stops verifying within KeyMaxAge
		if fresh, err := k.refresh(ctx); err == nil {
			keys = fresh
		} // a provider that does not answer leaves the keys it last published
	}
	if key, ok := find(keys, h.KeyID, h.Algorithm); ok {
		return jws.Verify(key)
	}
	if keys, err = k.refresh(ctx); err != nil {
		return nil, err
	}
	if key, ok := find(keys, h.KeyID, h.Algorithm); ok {
		return jws.Verify(key)
	}
	return nil, fmt.Errorf("no key %q in the issuer's key set", h.KeyID)
}

// find is the key of kid, when its stated algorithm (if any) is alg.
func find(keys []jose.JSONWebKey, kid, alg string) (*jose.JSONWebKey, bool) {
	for i := range keys {
		if keys[i].KeyID == kid && (keys[i].Algorithm == "" || keys[i].Algorithm == alg) {
			return &keys[i], true
		}
	}
	return nil, false
}

// current is the keys of the last fetch, and whether they are older than
// KeyMaxAge.
func (k *keySet) current() ([]jose.JSONWebKey, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.keys, time.Since(k.fetched) > KeyMaxAge
}

// refresh fetches the key set, unless one was fetched within minRefresh:
// then the keys are those of that fetch. Callers that come during a fetch
// wait for it.
func (k *keySet) refresh(ctx context.Context) ([]jose.JSONWebKey, error) {
	k.mu.Lock()
	if wait := k.inflight; wait != nil {
		k.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.keys, k.fetchErr
	}
	if !k.fetched.IsZero() && time.Since(k.fetched) < k.minRefresh {
		defer k.mu.Unlock()
		return k.keys, nil
	}
	k.fetched = time.Now()
	done := make(chan struct{})
	k.inflight = done
	k.mu.Unlock()

	// The fetch is the key set's, not this request's: a client that goes
	// away does not cancel it for the others.
	keys, err := k.fetch(context.WithoutCancel(ctx))
	k.mu.Lock()
	defer k.mu.Unlock()
	if err == nil || errors.Is(err, errNoUsableKey) {
		// A set the provider published replaces the last, also one with no
		// key keel can use: a removed key stops verifying (fail closed).
		// A provider that did not answer leaves the keys it last published.
		k.keys = keys
	}
	k.fetchErr = err
	k.inflight = nil
	close(done)
	return k.keys, err
}

// fetch reads the key set: at most MaxKeySetBytes, and of its keys the
// public signing keys it can use, at most MaxKeys. A key of a type it does
// not know is skipped, not a reason to drop the others.
func (k *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the key set: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching the key set: %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxKeySetBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the key set: %w", err)
	}
	if len(body) > MaxKeySetBytes {
		return nil, fmt.Errorf("the key set is over %d bytes", MaxKeySetBytes)
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("the key set is not JSON: %w", err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range doc.Keys {
		var key jose.JSONWebKey
		if json.Unmarshal(raw, &key) != nil || !key.Valid() || !key.IsPublic() || key.KeyID == "" || (key.Use != "" && key.Use != "sig") {
			continue
		}
		if keys = append(keys, key); len(keys) == MaxKeys {
			break
		}
	}
	if len(keys) == 0 {
		return nil, errNoUsableKey
	}
	return keys, nil
}

// errNoUsableKey is a key set that was published and read, with no public
// signing key with a key id in it.
var errNoUsableKey = errors.New("the key set has no public signing key with a key id")
