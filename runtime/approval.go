package runtime

import (
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ApprovalRequest identifies exactly one call for a person to approve: the
// tool and version, the tool set, the call, and the SHA-256 of its canonical
// arguments. It travels in an approval_required result's error.approval.
type ApprovalRequest struct {
	Tool            string `json:"tool"`
	Version         string `json:"version"`
	SetDigest       string `json:"set_digest,omitempty"`
	CallID          string `json:"call_id"`
	ArgumentsDigest string `json:"arguments_digest"`
}

// Grant is a person's approval of one exact call by one principal of one
// tenant, until Expires. Nonce makes it single-use.
type Grant struct {
	Tenant          string    `json:"tenant"`
	Principal       string    `json:"principal"`
	Tool            string    `json:"tool"`
	Version         string    `json:"version"`
	ArgumentsDigest string    `json:"arguments_digest"`
	Expires         time.Time `json:"expires"`
	Nonce           string    `json:"nonce"`
}

// GrantKey signs and checks grants: HMACKey (one shared secret) or
// Ed25519Key / Ed25519PublicKey (the approver signs, the executor verifies).
type GrantKey interface {
	sign(payload []byte) ([]byte, error)
	verify(payload, sig []byte) bool
}

type hmacKey []byte

// HMACKey signs and verifies grants with HMAC-SHA256 and secret.
func HMACKey(secret []byte) GrantKey { return hmacKey(secret) }

func (k hmacKey) sign(p []byte) ([]byte, error) {
	m := hmac.New(sha256.New, k)
	m.Write(p)
	return m.Sum(nil), nil
}
func (k hmacKey) verify(p, sig []byte) bool {
	want, _ := k.sign(p)
	return hmac.Equal(want, sig)
}

type edKey struct {
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
}

// Ed25519Key signs grants with priv and verifies them with its public key.
func Ed25519Key(priv ed25519.PrivateKey) GrantKey {
	return edKey{priv: priv, pub: priv.Public().(ed25519.PublicKey)}
}

// Ed25519PublicKey only verifies grants, for an executor that must not be
// able to issue them.
func Ed25519PublicKey(pub ed25519.PublicKey) GrantKey { return edKey{pub: pub} }

func (k edKey) sign(p []byte) ([]byte, error) {
	if k.priv == nil {
		return nil, errors.New("this key only verifies grants")
	}
	return ed25519.Sign(k.priv, p), nil
}
func (k edKey) verify(p, sig []byte) bool { return ed25519.Verify(k.pub, p, sig) }

// IssueGrant signs g into a token a harness presents in
// ExecutionContext.Grant. A zero Nonce is filled with a random one.
func IssueGrant(key GrantKey, g Grant) (string, error) {
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

// ParseGrant checks a token's signature and returns its grant.
func ParseGrant(key GrantKey, token string) (Grant, error) {
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

// ReplayStore makes grants single-use. Redeem returns true the first time
// it sees nonce, false ever after (until expires has passed).
type ReplayStore interface {
	Redeem(ctx context.Context, nonce string, expires time.Time) (bool, error)
}

// MemoryReplayStore is the in-memory ReplayStore of one process.
type MemoryReplayStore struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

// NewMemoryReplayStore returns an empty store.
func NewMemoryReplayStore() *MemoryReplayStore {
	return &MemoryReplayStore{seen: map[string]time.Time{}}
}

// Redeem records nonce; expired entries are dropped as it goes.
func (s *MemoryReplayStore) Redeem(_ context.Context, nonce string, expires time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if len(s.seen) > 1024 {
		for n, exp := range s.seen {
			if now.After(exp) {
				delete(s.seen, n)
			}
		}
	}
	if _, used := s.seen[nonce]; used {
		return false, nil
	}
	s.seen[nonce] = expires
	return true, nil
}

// approvals is an executor's grant checking.
type approvals struct {
	key   GrantKey
	store ReplayStore
}

// WithApprovals lets a call the policy sent for approval run when the
// ExecutionContext presents a grant, signed with key, that matches it
// exactly (tenant, principal, tool, version, argument digest, not expired)
// and that store has not seen. Approval_required results then carry the
// ApprovalRequest to show a person.
func WithApprovals(key GrantKey, store ReplayStore) Option {
	return func(e *Executor) { e.approvals = &approvals{key: key, store: store} }
}

// redeem checks a presented grant against the call and uses it up.
func (a *approvals) redeem(ctx context.Context, ec ExecutionContext, info *ToolInfo, argsDigest string) error {
	g, err := ParseGrant(a.key, ec.Grant)
	if err != nil {
		return err
	}
	switch {
	case g.Tenant != ec.Tenant || g.Principal != ec.Principal:
		return errors.New("grant: for another tenant or principal")
	case g.Tool != info.Name || g.Version != info.Version:
		return errors.New("grant: for another tool or version")
	case g.ArgumentsDigest != argsDigest:
		return errors.New("grant: for other arguments")
	case !time.Now().Before(g.Expires):
		return errors.New("grant: expired")
	}
	ok, err := a.store.Redeem(ctx, g.Nonce, g.Expires)
	if err != nil {
		return fmt.Errorf("grant: replay store: %w", err)
	}
	if !ok {
		return errors.New("grant: already used")
	}
	return nil
}
