package grant

import (
	"crypto/sha256"
	"encoding/hex"

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
	s := scanner{doc: args}
	if !s.canonical() {
		return lockfile.CanonicalDigest(args, jsontext.CanonicalizeRawInts(false), jsontext.CanonicalizeRawFloats(false))
	}
	// Arguments as models usually send them are in that form but for
	// whitespace: hashed with the whitespace left out, and, when small,
	// with no allocation (the executor digests every call an observer sees).
	doc := args
	if s.spaced {
		var small [512]byte
		doc = compact(small[:0], args)
	}
	sum := sha256.Sum256(doc)
	var out [len("sha256:") + 2*sha256.Size]byte
	copy(out[:], "sha256:")
	hex.Encode(out[len("sha256:"):], sum[:])
	return string(out[:]), nil
}

// compact appends doc without its whitespace outside strings; doc is in
// scanner's subset, whose strings hold no whitespace but the space and no
// escaped quote.
func compact(dst, doc []byte) []byte {
	in := false
	for _, c := range doc {
		switch {
		case c == '"':
			in = !in
		case !in && isSpace(c):
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// scanner reads one JSON value to tell whether, but for whitespace between
// tokens, it is already in the form ArgumentsDigest hashes, within a subset
// simple to be sure of: strings of printable ASCII with no escapes,
// members in increasing order of their names (byte order is RFC 8785's
// UTF-16 order for ASCII), no deeper than maxCanonicalDepth. Anything else,
// valid or not, is not canonical and takes the general path, which decides.
type scanner struct {
	doc    []byte
	i      int
	spaced bool // whitespace was seen between tokens
}

const maxCanonicalDepth = 32

func (s *scanner) canonical() bool {
	ok := s.value(0)
	s.space()
	return ok && s.i == len(s.doc)
}

func (s *scanner) space() {
	for s.i < len(s.doc) && isSpace(s.doc[s.i]) {
		s.i++
		s.spaced = true
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// next skips whitespace and takes c if it comes next.
func (s *scanner) next(c byte) bool {
	s.space()
	if s.i < len(s.doc) && s.doc[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) value(depth int) bool {
	s.space()
	if s.i >= len(s.doc) || depth > maxCanonicalDepth {
		return false
	}
	switch c := s.doc[s.i]; {
	case c == '{':
		s.i++
		return s.object(depth + 1)
	case c == '[':
		s.i++
		return s.array(depth + 1)
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(s.doc)-s.i >= len(lit) && string(s.doc[s.i:s.i+len(lit)]) == lit {
			s.i += len(lit)
			return true
		}
	}
	return false
}

func (s *scanner) object(depth int) bool {
	if s.next('}') {
		return true
	}
	var last []byte
	for n := 0; ; n++ {
		s.space()
		name, ok := s.str()
		if !ok || n > 0 && string(name) <= string(last) { // out of order, or twice
			return false
		}
		last = name
		if !s.next(':') || !s.value(depth) {
			return false
		}
		if s.next('}') {
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

func (s *scanner) array(depth int) bool {
	if s.next(']') {
		return true
	}
	for {
		if !s.value(depth) {
			return false
		}
		if s.next(']') {
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

// str reads a string of printable ASCII other than '"' and '\' and returns
// its contents.
func (s *scanner) str() ([]byte, bool) {
	if s.i >= len(s.doc) || s.doc[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for s.i = start; s.i < len(s.doc); s.i++ {
		switch c := s.doc[s.i]; {
		case c == '"':
			s.i++
			return s.doc[start : s.i-1], true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// number reads a number by JSON's grammar; the form hashes it as written.
func (s *scanner) number() bool {
	if s.doc[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.doc) && s.doc[s.i] == '0':
		s.i++
	case s.i < len(s.doc) && s.doc[s.i] >= '1' && s.doc[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.i < len(s.doc) && s.doc[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(s.doc) && (s.doc[s.i] == 'e' || s.doc[s.i] == 'E') {
		s.i++
		if s.i < len(s.doc) && (s.doc[s.i] == '+' || s.doc[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *scanner) digits() int {
	start := s.i
	for s.i < len(s.doc) && s.doc[s.i] >= '0' && s.doc[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}
