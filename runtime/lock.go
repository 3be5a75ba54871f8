package runtime

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/lockfile"
)

// ArgumentsDigest is "sha256:" and the hex SHA-256 of a call's arguments in
// the form a grant binds: RFC 8785's member order, whitespace and string
// escapes, but every number exactly as written. RFC 8785 maps numbers
// through float64, which would give 9007199254740992 and
// 9007199254740993.0, or 0 and 1e-400, one digest, while a handler (a
// json.RawMessage member, an exact decimal) can tell them apart; so a
// number spelled differently needs its own approval.
func ArgumentsDigest(args []byte) (string, error) {
	return lockfile.CanonicalDigest(args, jsontext.CanonicalizeRawInts(false), jsontext.CanonicalizeRawFloats(false))
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
	if err := lockfile.CheckPublicKey(pub); err != nil {
		return nil, err
	}
	return pub, nil
}

// contract is info as the lock reads it.
func contract(info ToolInfo) lockfile.Contract {
	c := lockfile.Contract{Name: info.Name, Version: info.Version, Effect: string(info.Effect), Description: info.Description,
		InputSchema: info.InputSchema, OutputSchema: info.OutputSchema, Title: info.Title,
		Destructive: info.Hints.Destructive, Idempotent: info.Hints.Idempotent, OpenWorld: info.Hints.OpenWorld,
		Deferred: info.Deferred, Namespace: info.Namespace, Content: info.Content, Scopes: info.Scopes, Groups: info.Groups}
	for _, e := range info.Errors {
		c.Errors = append(c.Errors, string(e))
	}
	return c
}
