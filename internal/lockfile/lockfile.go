// Package lockfile is keel.lock.json: the reviewed contract of a tool set,
// its digests and its detached signature. keelgen writes and compares it;
// the runtime verifies the embedded one when an executor starts. Neither a
// harness nor generated code needs more of it than wire.EmbeddedLock and
// runtime.WithRequiredSignature, so it is not part of runtime's surface.
package lockfile

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// FileName is the lock keelgen writes beside the generated code, and
// SignatureFileName its detached ed25519 signature (keelgen -sign).
const (
	FileName          = "keel.lock.json"
	SignatureFileName = "keel.lock.json.sig"
)

// Version is the format version of the lock file.
const Version = 1

// Lock is the reviewed contract of a whole tool set: per tool its name,
// version, effect, declared error codes and the SHA-256 digests of its
// description and schemas over their canonical JSON form (RFC 8785), and one
// digest of the whole set. Formatting never changes a digest.
type Lock struct {
	LockVersion int     `json:"lock_version"`
	SetDigest   string  `json:"set_digest"`
	Tools       []Entry `json:"tools"`
}

// Entry is one tool's entry in the lock.
type Entry struct {
	Name               string   `json:"name"`
	Version            string   `json:"version"`
	Effect             string   `json:"effect"`
	Errors             []string `json:"errors"`
	DescriptionDigest  string   `json:"description_digest"`
	InputSchemaDigest  string   `json:"input_schema_digest"`
	OutputSchemaDigest string   `json:"output_schema_digest"`
	// ModelBytes is the size of what a model reads of the tool (name,
	// description, parameters, codes, as compact JSON); ModelTokens
	// estimates it at one token per four bytes. Every call's prompt carries
	// it, so a reviewer sees a description that tripled.
	ModelBytes  int `json:"model_bytes"`
	ModelTokens int `json:"model_tokens"`
	// Title and the stated hints; absent when not stated (a hint then takes
	// its default, so a set that states none has the lock it always had).
	Title string `json:"title,omitempty"`
	// Approve is the wording of its approval question (//keel:approve).
	Approve     string `json:"approve,omitempty"`
	Destructive *bool  `json:"destructive,omitempty"`
	Idempotent  *bool  `json:"idempotent,omitempty"`
	OpenWorld   *bool  `json:"open_world,omitempty"`
	// Deferred: the set loads the tool on demand (its budget is not spent
	// up front); Namespace groups it.
	Deferred  bool   `json:"deferred,omitzero"` // json v2, which digests the lock, writes a false omitempty
	Namespace string `json:"namespace,omitempty"`
	// Content are the MIME types of content blocks the tool may return.
	Content []string `json:"content,omitempty"`
	// Scopes are the OAuth scopes a caller's credentials must grant.
	Scopes []string `json:"scopes,omitempty"`
	// Groups are the tool groups it belongs to (groups=): a server that
	// enables some groups offers only their tools.
	Groups []string `json:"groups,omitempty"`
	// LaxNumbers: its integer and number members are also read from
	// numeric strings (lax=numbers), a reading a reviewer must see.
	LaxNumbers bool `json:"lax_numbers,omitzero"`
	// OwnText: MCP's text block says the result in its author's words
	// (MCPText), not as JSON.
	OwnText bool `json:"own_text,omitzero"`
	// NoTextCopy: a client of MCP's 2026-07-28 revision gets no JSON copy
	// of the result as text (text=none), which a host reading only the
	// text block would miss.
	NoTextCopy bool `json:"no_text_copy,omitzero"`
	// Icons and Meta are what an MCP client shows of the tool beside its
	// words (//keel:icon, //keel:meta): a reviewer sees a link change.
	Icons []Icon                     `json:"icons,omitempty"`
	Meta  map[string]json.RawMessage `json:"meta,omitempty"`
}

// Icon is one of a tool's icons.
type Icon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mime_type,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// Contract is one tool's contract as the lock reads it: what
// runtime.ToolInfo holds, in plain types.
type Contract struct {
	Name, Version, Effect, Description string
	Errors                             []string
	InputSchema, OutputSchema          []byte
	Title, Approve                     string
	Destructive, Idempotent, OpenWorld *bool
	Deferred                           bool
	Namespace                          string
	Content, Scopes, Groups            []string
	LaxNumbers, OwnText, NoTextCopy    bool
	Icons                              []Icon
	Meta                               map[string]json.RawMessage
}

// ModelBytes is the size, as compact JSON, of what a model is shown of the
// tool: runtime.ModelTool's name, description, parameters and error codes.
func ModelBytes(c Contract) (int, error) {
	var params bytes.Buffer
	if err := json.Compact(&params, c.InputSchema); err != nil {
		return 0, err
	}
	b, err := json.Marshal(struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		ErrorCodes  []string        `json:"error_codes,omitempty"`
	}{c.Name, c.Description, params.Bytes(), c.Errors})
	return len(b), err
}

// EstimateTokens is the rule of thumb keel uses for a budget: one token
// per four bytes of JSON, rounded up. Providers count differently; the
// figure is for comparing one version with the next.
func EstimateTokens(n int) int { return (n + 3) / 4 }

// OfInfos is the lock of a []runtime.ToolInfo, sorted by name, each info
// read as the runtime reads it at start (runtime/lock.go): the one mapping
// of a ToolInfo to its contract, for keelgen (which writes the lock) and
// runtime/keeltest (which locks hand-made sets). The runtime sets it when
// it loads; this package, a leaf the runtime imports, cannot import it.
var OfInfos func(infos any) (Lock, error)

// New computes the lock of tools, which must be sorted by name.
func New(tools []Contract) (Lock, error) {
	l := Lock{LockVersion: Version, Tools: []Entry{}}
	for i, t := range tools {
		if i > 0 && tools[i-1].Name >= t.Name {
			return Lock{}, fmt.Errorf("tools are not sorted by name: %s before %s", tools[i-1].Name, t.Name)
		}
		desc, err := jsonv2.Marshal(t.Description)
		if err != nil {
			return Lock{}, fmt.Errorf("tool %s: description: %w", t.Name, err)
		}
		e := Entry{Name: t.Name, Version: t.Version, Effect: t.Effect, Errors: slices.Clone(t.Errors),
			Title: t.Title, Approve: t.Approve, Destructive: t.Destructive, Idempotent: t.Idempotent, OpenWorld: t.OpenWorld,
			Deferred: t.Deferred, Namespace: t.Namespace, Content: slices.Clone(t.Content), Scopes: slices.Clone(t.Scopes), Groups: slices.Clone(t.Groups),
			LaxNumbers: t.LaxNumbers, OwnText: t.OwnText, NoTextCopy: t.NoTextCopy, Icons: slices.Clone(t.Icons), Meta: maps.Clone(t.Meta)}
		if e.ModelBytes, err = ModelBytes(t); err != nil {
			return Lock{}, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		e.ModelTokens = EstimateTokens(e.ModelBytes)
		if e.Errors == nil {
			e.Errors = []string{}
		}
		slices.Sort(e.Errors)
		for _, d := range []struct {
			dst *string
			doc []byte
			of  string
		}{{&e.DescriptionDigest, desc, "description"}, {&e.InputSchemaDigest, t.InputSchema, "input schema"}, {&e.OutputSchemaDigest, t.OutputSchema, "output schema"}} {
			if *d.dst, err = Digest(d.doc); err != nil {
				return Lock{}, fmt.Errorf("tool %s: %s: %w", t.Name, d.of, err)
			}
		}
		l.Tools = append(l.Tools, e)
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
	return CanonicalDigest(doc, jsontext.CanonicalizeRawInts(false))
}

// CanonicalDigest is "sha256:" and the hex SHA-256 of doc canonicalized
// with opts.
func CanonicalDigest(doc []byte, opts ...jsontext.Options) (string, error) {
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

// Parse reads a lock file strictly.
func Parse(b []byte) (Lock, error) {
	var l Lock
	if err := jsonv2.Unmarshal(b, &l, jsonv2.RejectUnknownMembers(true)); err != nil {
		return Lock{}, fmt.Errorf("%s: %w", FileName, err)
	}
	if l.LockVersion != Version {
		return Lock{}, fmt.Errorf("%s: lock_version %d, this runtime reads %d", FileName, l.LockVersion, Version)
	}
	for _, t := range l.Tools {
		// A name outside the rule is no tool keelgen wrote, and in a file
		// name it could leave the output directory (../../victim).
		if !toolName.MatchString(t.Name) {
			return Lock{}, fmt.Errorf("%s: %q is not a tool name (^[a-zA-Z0-9_-]{1,64}$): the lock is not one keelgen wrote", FileName, t.Name)
		}
	}
	return l, nil
}

// toolName is the rule every tool name follows, the one every provider accepts.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Verify checks that lockFile is exactly the lock of tools: every digest
// recomputed from the contracts the binary holds equals the lock's.
func Verify(lockFile []byte, tools []Contract) (Lock, error) {
	l, err := Parse(lockFile)
	if err != nil {
		return Lock{}, err
	}
	want, err := New(tools)
	if err != nil {
		return Lock{}, err
	}
	if len(l.Tools) != len(want.Tools) {
		return Lock{}, fmt.Errorf("%s lists %d tools, the binary holds %d", FileName, len(l.Tools), len(want.Tools))
	}
	for i := range want.Tools {
		if got, w := l.Tools[i], want.Tools[i]; !entryEqual(got, w) {
			return Lock{}, fmt.Errorf("tool %s: the contract in the binary differs from %s", w.Name, FileName)
		}
	}
	if l.SetDigest != want.SetDigest {
		return Lock{}, fmt.Errorf("set digest %s in %s, the binary's tools digest to %s", l.SetDigest, FileName, want.SetDigest)
	}
	return l, nil
}

func entryEqual(a, b Entry) bool {
	return a.Name == b.Name && a.Version == b.Version && a.Effect == b.Effect && slices.Equal(a.Errors, b.Errors) &&
		a.DescriptionDigest == b.DescriptionDigest && a.InputSchemaDigest == b.InputSchemaDigest && a.OutputSchemaDigest == b.OutputSchemaDigest &&
		a.ModelBytes == b.ModelBytes && a.ModelTokens == b.ModelTokens && a.Title == b.Title && a.Approve == b.Approve &&
		sameHint(a.Destructive, b.Destructive) && sameHint(a.Idempotent, b.Idempotent) && sameHint(a.OpenWorld, b.OpenWorld) &&
		a.Deferred == b.Deferred && a.Namespace == b.Namespace && slices.Equal(a.Content, b.Content) && slices.Equal(a.Scopes, b.Scopes) &&
		slices.Equal(a.Groups, b.Groups) && a.LaxNumbers == b.LaxNumbers && a.OwnText == b.OwnText && a.NoTextCopy == b.NoTextCopy &&
		SameIcons(a.Icons, b.Icons) && maps.EqualFunc(a.Meta, b.Meta, SameJSON)
}

// SameIcons reports whether a and b list the same icons in the same order.
func SameIcons(a, b []Icon) bool {
	return slices.EqualFunc(a, b, func(x, y Icon) bool {
		return x.Src == y.Src && x.MIMEType == y.MIMEType && x.Theme == y.Theme && slices.Equal(x.Sizes, y.Sizes)
	})
}

// SameJSON reports whether x and y are the same JSON, however indented
// (the lock file is written indented).
func SameJSON(x, y json.RawMessage) bool {
	var cx, cy bytes.Buffer
	return json.Compact(&cx, x) == nil && json.Compact(&cy, y) == nil && bytes.Equal(cx.Bytes(), cy.Bytes())
}

func sameHint(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// Sign returns the detached signature file for lockFile: the base64
// ed25519 signature of its bytes, and a newline.
func Sign(key ed25519.PrivateKey, lockFile []byte) []byte {
	return []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(key, lockFile)) + "\n")
}

// VerifySignature checks a signature file made by Sign.
func VerifySignature(pub ed25519.PublicKey, lockFile, sigFile []byte) error {
	if len(sigFile) == 0 {
		return fmt.Errorf("%s is missing: sign the lock with keelgen -sign", SignatureFileName)
	}
	sig, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(sigFile)))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("%s is not a base64 ed25519 signature", SignatureFileName)
	}
	if err := CheckPublicKey(pub); err != nil {
		return fmt.Errorf("%s cannot be verified: %w", SignatureFileName, err)
	}
	if !ed25519.Verify(pub, lockFile, sig) {
		return fmt.Errorf("%s does not verify %s with the given public key", SignatureFileName, FileName)
	}
	return nil
}
