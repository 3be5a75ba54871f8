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
	"slices"
	"strings"
	"time"

	"github.com/keelgen/keel/internal/lockfile"
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
}

// Grant is the grant that approves exactly this request for one principal
// of one tenant until expires: fill nothing by hand that the request says.
func (r ApprovalRequest) Grant(tenant, principal string, expires time.Time) Grant {
	return Grant{Tenant: tenant, Principal: principal, SetDigest: r.SetDigest, CallID: r.CallID,
		Tool: r.Tool, Version: r.Version, ArgumentsDigest: r.ArgumentsDigest, Expires: expires}
}

// GrantKey signs and checks grants: HMACKey (one shared secret) or
// Ed25519Key / Ed25519PublicKey (the approver signs, the executor verifies).
// A key made from a nil, empty, short or malformed secret signs and verifies
// nothing: WithApprovals refuses it and IssueGrant returns its error.
type GrantKey interface {
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
func HMACKey(secret []byte) GrantKey {
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

// checkKey refuses a nil key and one made from a bad secret.
func checkKey(key GrantKey) error {
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
func Ed25519Key(priv ed25519.PrivateKey) GrantKey {
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
func Ed25519PublicKey(pub ed25519.PublicKey) GrantKey {
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

// IssueGrant signs g into a token a harness presents in
// ExecutionContext.Grant. A zero Nonce is filled with a random one.
func IssueGrant(key GrantKey, g Grant) (string, error) {
	if err := checkKey(key); err != nil {
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

// ParseGrant checks a token's signature and returns its grant.
func ParseGrant(key GrantKey, token string) (Grant, error) {
	if err := checkKey(key); err != nil {
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

// ReplayStore makes grants single-use. Redeem returns true the first time
// it sees nonce, false ever after (until expires has passed). A store that
// cannot decide returns an error, and the grant is refused.
type ReplayStore interface {
	Redeem(ctx context.Context, nonce string, expires time.Time) (bool, error)
}

// CallReplayStore is a ReplayStore that remembers which call redeemed each
// grant, so that a durable engine's later try of that call (an
// ExecutionContext whose Attempt.Number is above 1) may redeem it again,
// while any other use stays refused. memstore's ReplayStore and redisreplay's
// Store are both. Given a retry and a plain ReplayStore, the executor
// refuses the grant: a store that cannot tell a retry denies.
type CallReplayStore interface {
	ReplayStore
	// RedeemCall records nonce for callID until expires: true the first
	// time, and, with retry, again for the same callID; false otherwise.
	RedeemCall(ctx context.Context, nonce, callID string, retry bool, expires time.Time) (bool, error)
}

// approvals is an executor's grant checking.
type approvals struct {
	key   GrantKey
	store ReplayStore
}

// WithApprovals lets a call the policy sent for approval run when the
// ExecutionContext presents a grant, signed with key, that matches it
// exactly (tenant, principal, tool set, call id, tool, version, argument
// digest, not expired) and that store has not seen. Approval_required
// results then carry the ApprovalRequest to show a person. A nil or weak
// key, or a nil store, fails NewExecutor.
func WithApprovals(key GrantKey, store ReplayStore) Option {
	return func(e *Executor) {
		switch err := checkKey(key); {
		case err != nil:
			e.refuse("WithApprovals", "%v", err)
		case store == nil:
			e.refuse("WithApprovals", "the replay store is nil")
		default:
			e.approvals = &approvals{key: key, store: store}
		}
	}
}

// redeem checks a presented grant against the call and uses it up.
func (a *approvals) redeem(ctx context.Context, ec ExecutionContext, call ApprovalRequest) error {
	g, err := ParseGrant(a.key, ec.Grant)
	if err != nil {
		return err
	}
	switch {
	case g.Tenant != ec.Tenant || g.Principal != ec.Principal:
		return errors.New("grant: for another tenant or principal")
	case g.SetDigest != call.SetDigest:
		return errors.New("grant: for another tool set")
	case g.CallID != call.CallID:
		return errors.New("grant: for another call")
	case g.Tool != call.Tool || g.Version != call.Version:
		return errors.New("grant: for another tool or version")
	case g.ArgumentsDigest != call.ArgumentsDigest:
		return errors.New("grant: for other arguments")
	case !time.Now().Before(g.Expires):
		return errors.New("grant: expired")
	}
	var ok bool
	cs, byCall := a.store.(CallReplayStore)
	switch {
	case byCall:
		ok, err = cs.RedeemCall(ctx, g.Nonce, g.CallID, ec.Attempt.retry(), g.Expires)
	case ec.Attempt.retry():
		return errors.New("grant: a retry, and the replay store cannot tell which call redeemed the grant (not a CallReplayStore)")
	default:
		ok, err = a.store.Redeem(ctx, g.Nonce, g.Expires)
	}
	if err != nil {
		return fmt.Errorf("grant: replay store: %w", err)
	}
	if !ok {
		return errors.New("grant: already used")
	}
	return nil
}
