// Package callid makes the ids adapters give calls that a framework does
// not identify to its tools: unique across processes, and named after the
// adapter that made them, so a result and the audit log say where a call
// came from.
package callid

import (
	"crypto/rand"
	"encoding/hex"
)

// New is a fresh call id: prefix, a dash, and 96 random bits in hex.
func New(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}
