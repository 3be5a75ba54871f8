package mcpserver

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
)

// A task waiting for a person's answer keeps its call's arguments in the
// task store (Redis, for several replicas), which may hold a password or
// a card number (a writeOnly member). They are kept sealed: AES-GCM under
// a key drawn from the approvals' state secret, which every replica
// shares, bound to the task's id. Without Approvals no task waits for an
// answer, and none keeps its arguments.

// taskArgsInfo keeps the task arguments' key apart from every other use
// of the state secret.
const taskArgsInfo = "keel/mcp-task-arguments/v1"

// newArgsSeal is the AEAD that seals a task's arguments, nil when there
// are no approvals. None of its steps can fail for a 32-byte AES key.
func newArgsSeal(a *Approvals) cipher.AEAD {
	if a == nil {
		return nil
	}
	key, _ := hkdf.Key(sha256.New, a.secret, nil, taskArgsInfo, 32)
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	return gcm
}

// sealArgs is args as task id's record keeps them: a JSON string of the
// nonce and the sealed bytes, or nothing when no answer can come.
func (t *taskServer) sealArgs(id string, args json.RawMessage) json.RawMessage {
	if t.seal == nil || args == nil {
		return nil
	}
	nonce := make([]byte, t.seal.NonceSize(), t.seal.NonceSize()+len(args)+t.seal.Overhead())
	rand.Read(nonce)
	sealed := t.seal.Seal(nonce, nonce, args, []byte(id))
	b, _ := json.Marshal(base64.RawURLEncoding.EncodeToString(sealed))
	return b
}

// errSealedArgs is a task record's arguments that do not open: written by
// another key, or altered in the store.
var errSealedArgs = errors.New("mcpserver: a task's sealed arguments do not open")

// openArgs is the arguments task id's record keeps.
func (t *taskServer) openArgs(id string, kept json.RawMessage) (json.RawMessage, error) {
	if kept == nil {
		return nil, nil
	}
	var text string
	if t.seal == nil || json.Unmarshal(kept, &text) != nil {
		return nil, errSealedArgs
	}
	sealed, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil || len(sealed) < t.seal.NonceSize() {
		return nil, errSealedArgs
	}
	n := t.seal.NonceSize()
	args, err := t.seal.Open(nil, sealed[:n], sealed[n:], []byte(id))
	if err != nil {
		return nil, errSealedArgs
	}
	return args, nil
}
