package runtime_test

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/keelgen/keel/internal/lockfile"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
	"github.com/keelgen/keel/runtime/keeltest"
)

// The eight points of small order on edwards25519, encoded.
var smallOrder = []string{
	"0100000000000000000000000000000000000000000000000000000000000000",
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"0000000000000000000000000000000000000000000000000000000000000000",
	"0000000000000000000000000000000000000000000000000000000000000080",
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
}

// forge makes, for a small-order public key, a signature of msg that
// ed25519.Verify accepts though nobody holds a private key: a small-order R
// and S = 0.
func forge(t *testing.T, pub ed25519.PublicKey, msg []byte) []byte {
	t.Helper()
	for _, r := range smallOrder {
		sig, _ := hex.DecodeString(r + strings.Repeat("00", 32))
		if ed25519.Verify(pub, msg, sig) {
			return sig
		}
	}
	return nil
}

// Every place that takes an ed25519 public key refuses the all-zero key and
// every other point of small order, under which forged signatures verify.
func TestSmallOrderKeysAreRefused(t *testing.T) {
	set := keeltest.Of(runtime.NewTool(runtime.ToolInfo{Name: "echo", Version: "1", Effect: runtime.EffectRead, Description: "Echo.",
		InputSchema: json.RawMessage(echoIn), OutputSchema: json.RawMessage(echoOut)}, runtime.Handle(okEcho)))
	lock := []byte(`{"lock_version":1}`)
	forgedAny := false
	for _, enc := range smallOrder {
		key, _ := hex.DecodeString(enc)
		pub := ed25519.PublicKey(key)
		sig := forge(t, pub, lock)
		forgedAny = forgedAny || sig != nil
		if _, err := runtime.NewExecutor(set, runtime.WithApprovals(grant.Ed25519PublicKey(pub), memstore.NewReplayStore())); err == nil {
			t.Errorf("Ed25519PublicKey took the small-order key %s", enc)
		}
		if sig != nil {
			sigFile := []byte(base64.StdEncoding.EncodeToString(sig) + "\n")
			if err := lockfile.VerifySignature(pub, lock, sigFile); err == nil {
				t.Errorf("a forged lock signature verified under %s", enc)
			}
		}
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := runtime.NewExecutor(set, runtime.WithRequiredSignature(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))); err == nil {
			t.Errorf("WithRequiredSignature took the small-order key %s", enc)
		}
	}
	if !forgedAny {
		t.Fatal("no forged signature verified under any small-order key: the test proves nothing")
	}
	// A real key still works.
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.NewExecutor(set, runtime.WithApprovals(grant.Ed25519PublicKey(pub), memstore.NewReplayStore())); err != nil {
		t.Fatal(err)
	}
}
