package lockfile

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"filippo.io/edwards25519"
)

// CheckPublicKey refuses a public key that signatures nobody made
// would verify under: one that is not a canonical encoding of a point on
// the curve, or a point of small order (the all-zero key is one). With a
// small-order key, a signature of a small-order R and S = 0 verifies for
// every message.
func CheckPublicKey(pub ed25519.PublicKey) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("the public key is %d bytes, not an ed25519 key of %d", len(pub), ed25519.PublicKeySize)
	}
	p, err := new(edwards25519.Point).SetBytes(pub)
	if err != nil {
		return errors.New("the public key is not a point on the ed25519 curve")
	}
	if !bytes.Equal(p.Bytes(), pub) {
		return errors.New("the public key is not canonically encoded")
	}
	if new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1 {
		return errors.New("the public key is a point of small order, under which forged signatures verify")
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
		return nil, errors.New("the PUBLIC KEY block is not a PKIX public key")
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("the key is %T, not ed25519", k)
	}
	if err := CheckPublicKey(pub); err != nil {
		return nil, err
	}
	return pub, nil
}
