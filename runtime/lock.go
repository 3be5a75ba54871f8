package runtime

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"regexp"
	"slices"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// LockFileName is the lock keelgen writes beside the generated code, and
// SignatureFileName its detached ed25519 signature (keelgen -sign).
const (
	LockFileName      = "keel.lock.json"
	SignatureFileName = "keel.lock.json.sig"
)

// LockVersion is the format version of the lock file.
const LockVersion = 1

// Lock is the reviewed contract of a whole tool set: per tool its name,
// version, effect, declared error codes and the SHA-256 digests of its
// description and schemas over their canonical JSON form (RFC 8785), and one
// digest of the whole set. Formatting never changes a digest.
type Lock struct {
	LockVersion int          `json:"lock_version"`
	SetDigest   string       `json:"set_digest"`
	Tools       []LockedTool `json:"tools"`
}

// LockedTool is one tool's entry in the lock.
type LockedTool struct {
	Name               string `json:"name"`
	Version            string `json:"version"`
	Effect             Effect `json:"effect"`
	Errors             []Code `json:"errors"`
	DescriptionDigest  string `json:"description_digest"`
	InputSchemaDigest  string `json:"input_schema_digest"`
	OutputSchemaDigest string `json:"output_schema_digest"`
	// ModelBytes is the size of what a model reads of the tool, its
	// ModelTool as compact JSON (name, description, parameters, codes);
	// ModelTokens estimates it at one token per four bytes. Every call's
	// prompt carries it, so a reviewer sees a description that tripled.
	ModelBytes  int `json:"model_bytes"`
	ModelTokens int `json:"model_tokens"`
	// Title and the stated hints; absent when not stated (a hint then takes
	// its default, so a set that states none has the lock it always had).
	Title       string `json:"title,omitempty"`
	Destructive *bool  `json:"destructive,omitempty"`
	Idempotent  *bool  `json:"idempotent,omitempty"`
	OpenWorld   *bool  `json:"open_world,omitempty"`
	// Deferred: the set loads the tool on demand (its budget is not spent
	// up front); Namespace groups it.
	Deferred  bool   `json:"deferred,omitzero"` // json v2, which digests the lock, writes a false omitempty
	Namespace string `json:"namespace,omitempty"`
	// Content are the MIME types of content blocks the tool may return.
	Content []string `json:"content,omitempty"`
}

// ModelBytes is the size of the ModelTool of info as compact JSON.
func ModelBytes(info ToolInfo) (int, error) {
	var params bytes.Buffer
	if err := json.Compact(&params, info.InputSchema); err != nil {
		return 0, err
	}
	info.InputSchema = params.Bytes()
	b, err := json.Marshal(info.modelTool())
	return len(b), err
}

// EstimateTokens is the rule of thumb keel uses for a budget: one token
// per four bytes of JSON, rounded up. Providers count differently; the
// figure is for comparing one version with the next.
func EstimateTokens(n int) int { return (n + 3) / 4 }

// NewLock computes the lock of tools, which must be sorted by name.
func NewLock(tools []ToolInfo) (Lock, error) {
	l := Lock{LockVersion: LockVersion, Tools: []LockedTool{}}
	for i, t := range tools {
		if i > 0 && tools[i-1].Name >= t.Name {
			return Lock{}, fmt.Errorf("tools are not sorted by name: %s before %s", tools[i-1].Name, t.Name)
		}
		desc, err := jsonv2.Marshal(t.Description)
		if err != nil {
			return Lock{}, fmt.Errorf("tool %s: description: %w", t.Name, err)
		}
		lt := LockedTool{Name: t.Name, Version: t.Version, Effect: t.Effect, Errors: slices.Clone(t.Errors),
			Title: t.Title, Destructive: t.Hints.Destructive, Idempotent: t.Hints.Idempotent, OpenWorld: t.Hints.OpenWorld,
			Deferred: t.Deferred, Namespace: t.Namespace, Content: slices.Clone(t.Content)}
		if lt.ModelBytes, err = ModelBytes(t); err != nil {
			return Lock{}, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		lt.ModelTokens = EstimateTokens(lt.ModelBytes)
		if lt.Errors == nil {
			lt.Errors = []Code{}
		}
		slices.Sort(lt.Errors)
		for _, d := range []struct {
			dst *string
			doc []byte
			of  string
		}{{&lt.DescriptionDigest, desc, "description"}, {&lt.InputSchemaDigest, t.InputSchema, "input schema"}, {&lt.OutputSchemaDigest, t.OutputSchema, "output schema"}} {
			if *d.dst, err = Digest(d.doc); err != nil {
				return Lock{}, fmt.Errorf("tool %s: %s: %w", t.Name, d.of, err)
			}
		}
		l.Tools = append(l.Tools, lt)
	}
	entries, err := jsonv2.Marshal(l.Tools)
	if err != nil {
		return Lock{}, err
	}
	if l.SetDigest, err = Digest(entries); err != nil {
		return Lock{}, err
	}
	return l, nil
}

// Digest is "sha256:" and the hex SHA-256 of doc's canonical JSON form
// (RFC 8785, integers kept exact): the digest of the lock's contracts.
func Digest(doc []byte) (string, error) {
	return canonicalDigest(doc, jsontext.CanonicalizeRawInts(false))
}

// ArgumentsDigest is "sha256:" and the hex SHA-256 of a call's arguments in
// the form a grant binds: RFC 8785's member order, whitespace and string
// escapes, but every number exactly as written. RFC 8785 maps numbers
// through float64, which would give 9007199254740992 and
// 9007199254740993.0, or 0 and 1e-400, one digest, while a handler (a
// json.RawMessage member, an exact decimal) can tell them apart; so a
// number spelled differently needs its own approval.
func ArgumentsDigest(args []byte) (string, error) {
	return canonicalDigest(args, jsontext.CanonicalizeRawInts(false), jsontext.CanonicalizeRawFloats(false))
}

func canonicalDigest(doc []byte, opts ...jsontext.Options) (string, error) {
	v := jsontext.Value(bytes.Clone(doc))
	if err := v.Canonicalize(opts...); err != nil {
		return "", err
	}
	sum := sha256.Sum256(v)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Marshal renders the lock file: indented, one tool after another, ending in
// a newline.
func (l Lock) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseLock reads a lock file strictly.
func ParseLock(b []byte) (Lock, error) {
	var l Lock
	if err := jsonv2.Unmarshal(b, &l, jsonv2.RejectUnknownMembers(true)); err != nil {
		return Lock{}, fmt.Errorf("%s: %w", LockFileName, err)
	}
	if l.LockVersion != LockVersion {
		return Lock{}, fmt.Errorf("%s: lock_version %d, this runtime reads %d", LockFileName, l.LockVersion, LockVersion)
	}
	for _, t := range l.Tools {
		// A name outside the rule is no tool keelgen wrote, and in a file
		// name it could leave the output directory (../../victim).
		if !toolName.MatchString(t.Name) {
			return Lock{}, fmt.Errorf("%s: %q is not a tool name (^[a-zA-Z0-9_-]{1,64}$): the lock is not one keelgen wrote", LockFileName, t.Name)
		}
	}
	return l, nil
}

// toolName is the rule every tool name follows, the one every provider accepts.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// VerifyLock checks that lockFile is exactly the lock of tools: every digest
// recomputed from the contracts the binary holds equals the lock's.
func VerifyLock(lockFile []byte, tools []ToolInfo) (Lock, error) {
	l, err := ParseLock(lockFile)
	if err != nil {
		return Lock{}, err
	}
	want, err := NewLock(tools)
	if err != nil {
		return Lock{}, err
	}
	if len(l.Tools) != len(want.Tools) {
		return Lock{}, fmt.Errorf("%s lists %d tools, the binary holds %d", LockFileName, len(l.Tools), len(want.Tools))
	}
	for i := range want.Tools {
		if got, w := l.Tools[i], want.Tools[i]; !lockedToolEqual(got, w) {
			return Lock{}, fmt.Errorf("tool %s: the contract in the binary differs from %s", w.Name, LockFileName)
		}
	}
	if l.SetDigest != want.SetDigest {
		return Lock{}, fmt.Errorf("set digest %s in %s, the binary's tools digest to %s", l.SetDigest, LockFileName, want.SetDigest)
	}
	return l, nil
}

func lockedToolEqual(a, b LockedTool) bool {
	return a.Name == b.Name && a.Version == b.Version && a.Effect == b.Effect && slices.Equal(a.Errors, b.Errors) &&
		a.DescriptionDigest == b.DescriptionDigest && a.InputSchemaDigest == b.InputSchemaDigest && a.OutputSchemaDigest == b.OutputSchemaDigest &&
		a.ModelBytes == b.ModelBytes && a.ModelTokens == b.ModelTokens && a.Title == b.Title &&
		sameHint(a.Destructive, b.Destructive) && sameHint(a.Idempotent, b.Idempotent) && sameHint(a.OpenWorld, b.OpenWorld) &&
		a.Deferred == b.Deferred && a.Namespace == b.Namespace && slices.Equal(a.Content, b.Content)
}

func sameHint(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// SignLock returns the detached signature file for lockFile: the base64
// ed25519 signature of its bytes, and a newline.
func SignLock(key ed25519.PrivateKey, lockFile []byte) []byte {
	return []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(key, lockFile)) + "\n")
}

// VerifyLockSignature checks a signature file made by SignLock.
func VerifyLockSignature(pub ed25519.PublicKey, lockFile, sigFile []byte) error {
	if len(sigFile) == 0 {
		return fmt.Errorf("%s is missing: sign the lock with keelgen -sign", SignatureFileName)
	}
	sig, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(sigFile)))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("%s is not a base64 ed25519 signature", SignatureFileName)
	}
	if err := checkEd25519PublicKey(pub); err != nil {
		return fmt.Errorf("%s cannot be verified: %w", SignatureFileName, err)
	}
	if !ed25519.Verify(pub, lockFile, sig) {
		return fmt.Errorf("%s does not verify %s with the given public key", SignatureFileName, LockFileName)
	}
	return nil
}

// ParsePublicKeyPEM reads an ed25519 public key in PEM ("PUBLIC KEY", PKIX),
// as keelgen -genkey writes it.
func ParsePublicKeyPEM(b []byte) (ed25519.PublicKey, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, errors.New("no PEM \"PUBLIC KEY\" block")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("the key is %T, not ed25519", k)
	}
	if err := checkEd25519PublicKey(pub); err != nil {
		return nil, err
	}
	return pub, nil
}
