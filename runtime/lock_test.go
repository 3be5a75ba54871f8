package runtime_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"strings"
	"testing"

	"github.com/keelgen/keel/internal/lockfile"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

func lockedSet(t *testing.T) (keeltest.Set, []runtime.ToolInfo) {
	t.Helper()
	infos := []runtime.ToolInfo{
		{Name: "echo", Version: "2.1", Effect: runtime.EffectRead, Description: "Echo text.",
			InputSchema: json.RawMessage(echoIn), OutputSchema: json.RawMessage(echoOut), Errors: []runtime.Code{"text_not_found"}},
		{Name: "shout", Version: "1.0.0", Effect: runtime.EffectWrite, Description: "Shout text.",
			InputSchema: json.RawMessage(echoIn), OutputSchema: json.RawMessage(echoOut)},
	}
	return setOf(t, infos), infos
}

// setOf builds a set from infos with a lock computed from them.
func setOf(t *testing.T, infos []runtime.ToolInfo) keeltest.Set {
	t.Helper()
	var tools []*runtime.Tool
	for _, info := range infos {
		tools = append(tools, runtime.NewTool(info, runtime.Handle(okEcho)))
	}
	s, err := keeltest.Locked(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLockVerifiesAtStart(t *testing.T) {
	set, _ := lockedSet(t)
	exec := executorForSet(t, set)
	l, _ := lockfile.Parse(set.LockFile)
	if exec.SetDigest() == "" || exec.SetDigest() != l.SetDigest || !strings.HasPrefix(l.SetDigest, "sha256:") {
		t.Fatalf("set digest %q, lock says %q", exec.SetDigest(), l.SetDigest)
	}
}

// Digests are over canonical JSON: formatting and member order do not matter.
func TestDigestIgnoresFormatting(t *testing.T) {
	a, err := lockfile.Digest([]byte(`{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := lockfile.Digest([]byte("{\n  \"properties\": {\"n\": {\"maximum\": 9007199254740993, \"type\": \"integer\"}},\n  \"type\": \"object\"\n}"))
	c, _ := lockfile.Digest([]byte(`{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740992}}}`))
	if a != b {
		t.Fatalf("formatting changed the digest: %s vs %s", a, b)
	}
	if a == c {
		t.Fatal("integers beyond 2^53 collapsed into one digest")
	}
}

func TestTamperedContractFailsStart(t *testing.T) {
	_, infos := lockedSet(t)
	for name, tamper := range map[string]func(*runtime.ToolInfo){
		"input schema": func(i *runtime.ToolInfo) {
			i.InputSchema = json.RawMessage(strings.Replace(echoIn, "^[a-z]+$", "^.*$", 1))
		},
		"output schema": func(i *runtime.ToolInfo) {
			i.OutputSchema = json.RawMessage(strings.Replace(echoOut, `"low","high"`, `"low","high","any"`, 1))
		},
		"description": func(i *runtime.ToolInfo) { i.Description = "Echo text, and also delete files." },
		"effect":      func(i *runtime.ToolInfo) { i.Effect = runtime.EffectWrite },
		"version":     func(i *runtime.ToolInfo) { i.Version = "9.9" },
		"errors":      func(i *runtime.ToolInfo) { i.Errors = append(i.Errors, "anything_goes") },
	} {
		set := setOf(t, infos) // the lock of the reviewed contracts
		changed := append([]runtime.ToolInfo(nil), infos...)
		tamper(&changed[0])
		set.List[0] = runtime.NewTool(changed[0], runtime.Handle(okEcho))
		if _, err := runtime.NewExecutor(set); err == nil || !strings.Contains(err.Error(), "integrity") {
			t.Errorf("%s tampered: NewExecutor error %v", name, err)
		}
	}
}

func TestTamperedLockFailsStart(t *testing.T) {
	for name, tamper := range map[string]func([]byte) []byte{
		"digest": func(b []byte) []byte {
			i := bytes.Index(b, []byte(`"input_schema_digest": "sha256:`)) + 31
			b[i] ^= 1
			return b
		},
		"set digest": func(b []byte) []byte { i := bytes.Index(b, []byte(`"set_digest": "sha256:`)) + 22; b[i] ^= 1; return b },
		"version": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"version": "2.1"`), []byte(`"version": "2.2"`), 1)
		},
		"effect": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"effect": "write"`), []byte(`"effect": "read"`), 1)
		},
		"not JSON": func(b []byte) []byte { return b[:len(b)/2] },
		"extra field": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"lock_version": 1,`), []byte(`"lock_version": 1, "trusted": true,`), 1)
		},
	} {
		set, _ := lockedSet(t)
		set.LockFile = tamper(bytes.Clone(set.LockFile))
		if _, err := runtime.NewExecutor(set); err == nil {
			t.Errorf("lock %s tampered: NewExecutor accepted it", name)
		}
	}
}

func TestSignedLock(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	otherPub, _, _ := ed25519.GenerateKey(rand.Reader)

	set, _ := lockedSet(t)
	set.Signature = lockfile.Sign(priv, set.LockFile)
	executorForSet(t, set, runtime.WithRequiredSignature(publicKeyPEM(t, pub)))

	if _, err := runtime.NewExecutor(set, runtime.WithRequiredSignature(publicKeyPEM(t, otherPub))); err == nil || !strings.Contains(err.Error(), "signature") {
		t.Errorf("wrong key: %v", err)
	}
	altered := set
	altered.LockFile = bytes.Replace(bytes.Clone(set.LockFile), []byte("\n"), []byte("\n "), 1) // same content, other bytes
	if _, err := runtime.NewExecutor(altered, runtime.WithRequiredSignature(publicKeyPEM(t, pub))); err == nil || !strings.Contains(err.Error(), "signature") {
		t.Errorf("altered lock: %v", err)
	}
	unsigned := set
	unsigned.Signature = nil
	if _, err := runtime.NewExecutor(unsigned, runtime.WithRequiredSignature(publicKeyPEM(t, pub))); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("unsigned lock: %v", err)
	}
	garbage := set
	garbage.Signature = []byte("not base64!\n")
	if _, err := runtime.NewExecutor(garbage, runtime.WithRequiredSignature(publicKeyPEM(t, pub))); err == nil {
		t.Error("garbage signature accepted")
	}
	// Without the option, a signature is not required.
	executorForSet(t, unsigned)
}

func TestPinnedSetDigest(t *testing.T) {
	set, _ := lockedSet(t)
	l, _ := lockfile.Parse(set.LockFile)
	executorForSet(t, set, runtime.WithExpectedSetDigest(l.SetDigest))
	if _, err := runtime.NewExecutor(set, runtime.WithExpectedSetDigest("sha256:0000")); err == nil {
		t.Fatal("a set with another digest passed the pin")
	}
	bare := set
	bare.LockFile = nil
	if _, err := runtime.NewExecutor(bare, runtime.WithExpectedSetDigest(l.SetDigest)); err == nil {
		t.Fatal("a set without a lock passed the pin")
	}
}

func executorForSet(t *testing.T, set keeltest.Set, opts ...runtime.Option) *runtime.Executor {
	t.Helper()
	opts = append([]runtime.Option{runtime.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	exec, err := runtime.NewExecutor(set, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return exec
}

// publicKeyPEM is pub as keelgen -genkey writes it.
func publicKeyPEM(t *testing.T, pub ed25519.PublicKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}
