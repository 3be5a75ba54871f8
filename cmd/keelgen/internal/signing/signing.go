// Package signing makes ed25519 keys and detached signatures of
// keel.lock.json for keelgen -genkey and -sign, with the standard library.
package signing

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"

	"github.com/keelgen/keel/internal/lockfile"
)

// GenerateKey writes a new private key to file (PEM "PRIVATE KEY", PKCS #8,
// mode 0600) and its public key to file.pub (PEM "PUBLIC KEY", PKIX). It
// never overwrites a file.
func GenerateKey(file string) error {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return err
	}
	for _, f := range []string{file, file + ".pub"} {
		if _, err := os.Stat(f); err == nil {
			return fmt.Errorf("%s exists; keelgen does not overwrite keys", f)
		}
	}
	if err := writeNew(file, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER}), 0o600); err != nil {
		return err
	}
	return writeNew(file+".pub", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644)
}

func writeNew(file string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	return errors.Join(werr, f.Close())
}

// ReadPrivateKey reads an ed25519 private key in PEM, PKCS #8.
func ReadPrivateKey(file string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%s: no PEM \"PRIVATE KEY\" block", file)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: the key is %T, not ed25519", file, k)
	}
	return priv, nil
}

// SignLock writes the detached signature of the lock at lockPath beside it,
// as keel.lock.json.sig, and checks it verifies.
func SignLock(keyFile, lockPath string) error {
	priv, err := ReadPrivateKey(keyFile)
	if err != nil {
		return err
	}
	lock, err := os.ReadFile(lockPath)
	if err != nil {
		return err
	}
	sig := lockfile.Sign(priv, lock)
	if err := lockfile.VerifySignature(priv.Public().(ed25519.PublicKey), lock, sig); err != nil {
		return err
	}
	return renameio.WriteFile(filepath.Join(filepath.Dir(lockPath), lockfile.SignatureFileName), sig, 0o644)
}
