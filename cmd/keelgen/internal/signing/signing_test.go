package signing_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/keelgen/keel/cmd/keelgen/internal/signing"
	"github.com/keelgen/keel/internal/lockfile"
)

// -genkey writes a private key only its owner reads and a public key; it
// never overwrites either. -sign writes a signature that the runtime
// verifies with that public key, and no other key verifies.
func TestGenerateSignVerify(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "release.pem")
	if err := signing.GenerateKey(key); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("private key: %v, mode %v", err, fi.Mode())
	}
	if err := signing.GenerateKey(key); err == nil {
		t.Fatal("GenerateKey overwrote a key")
	}
	lock := filepath.Join(dir, lockfile.FileName)
	if err := os.WriteFile(lock, []byte(`{"lock_version":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := signing.SignLock(key, lock); err != nil {
		t.Fatal(err)
	}
	lockBytes, _ := os.ReadFile(lock)
	sig, err := os.ReadFile(lock + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	pem, _ := os.ReadFile(key + ".pub")
	pub, err := lockfile.ParsePublicKeyPEM(pem)
	if err != nil {
		t.Fatal(err)
	}
	if err := lockfile.VerifySignature(pub, lockBytes, sig); err != nil {
		t.Fatalf("the signature does not verify: %v", err)
	}
	if err := lockfile.VerifySignature(pub, append(lockBytes, ' '), sig); err == nil {
		t.Fatal("a signature verified an altered lock")
	}
	other := filepath.Join(dir, "other.pem")
	if err := signing.GenerateKey(other); err != nil {
		t.Fatal(err)
	}
	otherPEM, _ := os.ReadFile(other + ".pub")
	otherPub, _ := lockfile.ParsePublicKeyPEM(otherPEM)
	if err := lockfile.VerifySignature(otherPub, lockBytes, sig); err == nil {
		t.Fatal("another key verified the signature")
	}
	if _, err := signing.ReadPrivateKey(key + ".pub"); err == nil {
		t.Fatal("a public key was read as a private one")
	}
}
