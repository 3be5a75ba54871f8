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

// A task waiting for answers keeps its call's arguments, and the answers
// that came before the last, in the task store (Redis, for several
// replicas), which may hold a password or a card number (a writeOnly
// member). They are kept sealed: AES-GCM under a key drawn from the
// server's state secret (Options.StateSecret, else the approvals'), which
// every replica shares, bound to the task's id.

// taskArgsInfo keeps the task arguments' key apart from every other use
// of the state secret.
const taskArgsInfo = "keel/mcp-task-arguments/v1"

// newArgsSeal is the AEAD that seals a task's arguments under secret. None
// of its steps can fail for a 32-byte AES key.
func newArgsSeal(secret []byte) cipher.AEAD {
	key, _ := hkdf.Key(sha256.New, secret, nil, taskArgsInfo, 32)
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	return gcm
}

// sealArgs is args as task id's record keeps them: a JSON string of the
// nonce and the sealed bytes.
func (t *taskServer) sealArgs(id string, args json.RawMessage) json.RawMessage {
	if args == nil {
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
	if json.Unmarshal(kept, &text) != nil {
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

// sealAnswers is the answers a waiting task holds before its last one
// came, sealed as its arguments are (answers may be a one-time code).
func (t *taskServer) sealAnswers(id string, answers map[string]json.RawMessage) json.RawMessage {
	b, _ := json.Marshal(answers)
	return t.sealArgs(id+"/answers", b)
}

// openAnswers is the answers task id's record holds, none when it holds
// none.
func (t *taskServer) openAnswers(id string, kept json.RawMessage) (map[string]json.RawMessage, error) {
	answers := map[string]json.RawMessage{}
	b, err := t.openArgs(id+"/answers", kept)
	if err != nil || b == nil {
		return answers, err
	}
	return answers, json.Unmarshal(b, &answers)
}
