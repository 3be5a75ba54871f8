package mcpserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// signedState is a request state a client carries between the rounds of a
// call (keel's approval question, a handler's own questions): a payload it
// can read but neither alter nor make, prefix + payload.signature in
// base64url, signed with HMAC-SHA256 under secret in domain, so that no
// other signature under the same secret means the same.
type signedState struct {
	secret         []byte
	domain, prefix string
}

// errState is any request state keel did not sign, or signed for a call
// now over.
var errState = errors.New("mcpserver: a request state keel did not sign, or expired")

func (s signedState) sign(payload []byte) []byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(s.domain))
	m.Write(payload)
	return m.Sum(nil)
}

// seal is v as a client carries it.
func (s signedState) seal(v any) (string, error) {
	payload, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return s.prefix + enc.EncodeToString(payload) + "." + enc.EncodeToString(s.sign(payload)), nil
}

// open reads a state keel sealed into v; any other is errState.
func (s signedState) open(text string, v any) error {
	rest, ok := strings.CutPrefix(text, s.prefix)
	p, sig, cut := strings.Cut(rest, ".")
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p)
	mac, err2 := enc.DecodeString(sig)
	if !ok || !cut || err1 != nil || err2 != nil || !hmac.Equal(mac, s.sign(payload)) || json.Unmarshal(payload, v) != nil {
		return errState
	}
	return nil
}
