package runtime_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"reflect"
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
		h := runtime.Handle(okEcho)
		if info.LaxNumbers { // a generated reader's reading: the hand-bound one refuses it
			h = seats{}
		}
		tools = append(tools, runtime.NewTool(info, h))
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

// The lock keelgen and keeltest write (lockfile.OfInfos) and the one the
// executor checks at start are one mapping (runtime/lock.go), which maps
// every contract field: a set locked with every field of ToolInfo changed,
// one at a time, starts, and each change but Timeout (a deployment's, not
// the contract's) changes the set digest. A new ToolInfo field fails this
// test until it is listed here, mapped or, like Timeout, not.
func TestTheLockMapsEveryField(t *testing.T) {
	yes := true
	base := runtime.ToolInfo{Name: "echo", Version: "1.0.0", Effect: runtime.EffectRead, Description: "Echo text.",
		InputSchema: json.RawMessage(echoIn), OutputSchema: json.RawMessage(echoOut)}
	changes := map[string]func(*runtime.ToolInfo){
		"Name":        func(i *runtime.ToolInfo) { i.Name = "echo_again" },
		"Version":     func(i *runtime.ToolInfo) { i.Version = "1.0.1" },
		"Effect":      func(i *runtime.ToolInfo) { i.Effect = runtime.EffectWrite },
		"Description": func(i *runtime.ToolInfo) { i.Description = "Echo text back." },
		"InputSchema": func(i *runtime.ToolInfo) {
			i.InputSchema = json.RawMessage(strings.Replace(echoIn, `"string"`, `"string","minLength":1`, 1))
		},
		"OutputSchema": func(i *runtime.ToolInfo) {
			i.OutputSchema = json.RawMessage(strings.Replace(echoOut, `"string"`, `"string","maxLength":9`, 1))
		},
		"Timeout":    func(i *runtime.ToolInfo) { i.Timeout = 3e9 },
		"Errors":     func(i *runtime.ToolInfo) { i.Errors = []runtime.Code{"text_not_found"} },
		"Title":      func(i *runtime.ToolInfo) { i.Title = "Echo" },
		"Approve":    func(i *runtime.ToolInfo) { i.Approve = "Echo this?" },
		"Hints":      func(i *runtime.ToolInfo) { i.Hints.Destructive = &yes },
		"Deferred":   func(i *runtime.ToolInfo) { i.Deferred, i.Namespace = true, "text" },
		"Namespace":  func(i *runtime.ToolInfo) { i.Deferred, i.Namespace = true, "words" },
		"Content":    func(i *runtime.ToolInfo) { i.Content = []string{"image/png"} },
		"Scopes":     func(i *runtime.ToolInfo) { i.Scopes = []string{"text:read"} },
		"Groups":     func(i *runtime.ToolInfo) { i.Groups = []string{"text"} },
		"LaxNumbers": func(i *runtime.ToolInfo) { i.LaxNumbers = true },
		"OwnText":    func(i *runtime.ToolInfo) { i.OwnText = true },
		"NoTextCopy": func(i *runtime.ToolInfo) { i.NoTextCopy = true },
		"Icons": func(i *runtime.ToolInfo) {
			i.Icons = []runtime.Icon{{Src: "https://example.com/echo.svg", Sizes: []string{"any"}}}
		},
		"Meta": func(i *runtime.ToolInfo) {
			i.Meta = map[string]json.RawMessage{"ui": json.RawMessage(`{"resourceUri":"ui://echo"}`)}
		},
		"Hints.Idempotent": func(i *runtime.ToolInfo) { i.Hints.Idempotent = &yes },
		"Hints.OpenWorld":  func(i *runtime.ToolInfo) { i.Hints.OpenWorld = &yes },
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[runtime.ToolInfo]()) {
		if _, ok := changes[f.Name]; !ok {
			t.Errorf("ToolInfo.%s is not in this test: list it, and map it in the lock or say why not", f.Name)
		}
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[runtime.Hints]()) {
		if _, ok := changes["Hints."+f.Name]; !ok && f.Name != "Destructive" {
			t.Errorf("Hints.%s is not in this test", f.Name)
		}
	}
	digest := func(info runtime.ToolInfo) string {
		set := setOf(t, []runtime.ToolInfo{info})
		e, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatalf("a set locked by keeltest does not start: %v", err)
		}
		return e.SetDigest()
	}
	was := digest(base)
	for name, change := range changes {
		info := base
		change(&info)
		if now := digest(info); (now == was) != (name == "Timeout") {
			t.Errorf("changing %s changed the set digest: %v (want %v)", name, now != was, name != "Timeout")
		}
	}
}
