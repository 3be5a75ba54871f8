// Package grant signs and checks a person's approval of one exact call: a
// Grant, as a token a harness presents in runtime.ExecutionContext.Grant,
// signed with a Key (HMACKey, one shared secret; Ed25519Key and
// Ed25519PublicKey, the approver signs and the executor only verifies).
// The executor checks the token (runtime.WithApprovals); an approver's
// service issues it (Issue), from the request an approval_required result
// carries (runtime.ApprovalRequest.Grant).
package grant

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/keelgen/keel/internal/lockfile"
)

// Grant is a person's approval of one exact call (tool set, call id, tool,
// version and arguments) by one principal of one tenant, until Expires.
// Nonce makes it single-use.
type Grant struct {
	Tenant          string    `json:"tenant"`
	Principal       string    `json:"principal"`
	SetDigest       string    `json:"set_digest"`
	CallID          string    `json:"call_id"`
	Tool            string    `json:"tool"`
	Version         string    `json:"version"`
	ArgumentsDigest string    `json:"arguments_digest"`
	Expires         time.Time `json:"expires"`
	Nonce           string    `json:"nonce"`
	// Memory names the replay store's memory the grant was issued under
	// (Memory, as runtime.ReplayStore says): set, the grant is refused once the store has
	// lost what it recorded (a Redis restarted empty), when it could be
	// spent a second time. "" is a grant the store's memory does not bind.
	Memory string `json:"memory,omitempty"`
}

// Key signs and checks grants: HMACKey (one shared secret) or
// Ed25519Key / Ed25519PublicKey (the approver signs, the executor verifies).
// A key made from a nil, empty, short or malformed secret signs and verifies
// nothing: runtime.WithApprovals refuses it and Issue returns its error.
type Key interface {
	check() error
	sign(payload []byte) ([]byte, error)
	verify(payload, sig []byte) bool
}

// MinHMACKeyBytes is the shortest secret HMACKey accepts: as long as the
// SHA-256 output, as RFC 2104 recommends.
const MinHMACKeyBytes = 32

type hmacKey struct {
	secret []byte
	err    error
}

// HMACKey signs and verifies grants with HMAC-SHA256 and secret, which must
// be at least MinHMACKeyBytes long and not all zero.
func HMACKey(secret []byte) Key {
	switch {
	case len(secret) < MinHMACKeyBytes:
		return hmacKey{err: fmt.Errorf("the HMAC grant key is %d bytes; at least %d are required", len(secret), MinHMACKeyBytes)}
	case allZero(secret):
		return hmacKey{err: errors.New("the HMAC grant key is all zero bytes")}
	}
	return hmacKey{secret: slices.Clone(secret)}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func (k hmacKey) check() error { return k.err }

// Check refuses a nil key and one made from a bad secret: a key that
// signs and verifies nothing.
func Check(key Key) error {
	if key == nil {
		return errors.New("the grant key is nil")
	}
	return key.check()
}

func (k hmacKey) sign(p []byte) ([]byte, error) {
	if k.err != nil {
		return nil, k.err
	}
	m := hmac.New(sha256.New, k.secret)
	m.Write(p)
	return m.Sum(nil), nil
}

func (k hmacKey) verify(p, sig []byte) bool {
	want, err := k.sign(p)
	return err == nil && hmac.Equal(want, sig)
}

type edKey struct {
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
	err  error
}

// Ed25519Key signs grants with priv and verifies them with its public key.
func Ed25519Key(priv ed25519.PrivateKey) Key {
	if len(priv) != ed25519.PrivateKeySize {
		return edKey{err: fmt.Errorf("the ed25519 grant key is %d bytes, not a private key of %d", len(priv), ed25519.PrivateKeySize)}
	}
	priv = slices.Clone(priv)
	pub := priv.Public().(ed25519.PublicKey)
	if err := lockfile.CheckPublicKey(pub); err != nil {
		return edKey{err: fmt.Errorf("the ed25519 grant key: %w", err)}
	}
	return edKey{priv: priv, pub: pub}
}

// Ed25519PublicKey only verifies grants, for an executor that must not be
// able to issue them.
func Ed25519PublicKey(pub ed25519.PublicKey) Key {
	if len(pub) != ed25519.PublicKeySize {
		return edKey{err: fmt.Errorf("the ed25519 grant key is %d bytes, not a public key of %d", len(pub), ed25519.PublicKeySize)}
	}
	if err := lockfile.CheckPublicKey(pub); err != nil {
		return edKey{err: fmt.Errorf("the ed25519 grant key: %w", err)}
	}
	return edKey{pub: slices.Clone(pub)}
}

func (k edKey) check() error { return k.err }

func (k edKey) sign(p []byte) ([]byte, error) {
	switch {
	case k.err != nil:
		return nil, k.err
	case k.priv == nil:
		return nil, errors.New("this key only verifies grants")
	}
	return ed25519.Sign(k.priv, p), nil
}

func (k edKey) verify(p, sig []byte) bool { return k.err == nil && ed25519.Verify(k.pub, p, sig) }

// Issue signs g into a token a harness presents in
// runtime.ExecutionContext.Grant. A zero Nonce is filled with a random one.
func Issue(key Key, g Grant) (string, error) {
	if err := Check(key); err != nil {
		return "", fmt.Errorf("grant: %w", err)
	}
	if g.Nonce == "" {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		g.Nonce = hex.EncodeToString(b[:])
	}
	payload, err := json.Marshal(g)
	if err != nil {
		return "", err
	}
	sig, err := key.sign(payload)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(sig), nil
}

// Parse checks a token's signature and returns its grant.
func Parse(key Key, token string) (Grant, error) {
	if err := Check(key); err != nil {
		return Grant{}, fmt.Errorf("grant: %w", err)
	}
	p, s, ok := strings.Cut(token, ".")
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p)
	sig, err2 := enc.DecodeString(s)
	if !ok || err1 != nil || err2 != nil {
		return Grant{}, errors.New("grant: not a grant token")
	}
	if !key.verify(payload, sig) {
		return Grant{}, errors.New("grant: bad signature")
	}
	var g Grant
	if err := json.Unmarshal(payload, &g); err != nil {
		return Grant{}, fmt.Errorf("grant: %w", err)
	}
	return g, nil
}
