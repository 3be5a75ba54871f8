package resultjson

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/runtime"
)

// Data is r's data as a model reads it: each string of text from outside
// the system (r.Untrusted) set between ⟦untrusted:B⟧ and ⟦/untrusted:B⟧,
// B a random boundary of this result, so that no text in it can close the
// mark and speak as the system (spotlighting). The tool's description tells
// the model so (runtime.ModelTool.DescriptionForModel). Data without such
// text is r.Data as it is.
func Data(r runtime.ToolResult) []byte {
	if len(r.Untrusted) == 0 {
		return r.Data
	}
	var b [8]byte
	rand.Read(b[:])
	boundary := hex.EncodeToString(b[:])
	open, end := "⟦untrusted:"+boundary+"⟧", "⟦/untrusted:"+boundary+"⟧"
	dec := jsontext.NewDecoder(bytes.NewReader(r.Data))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out)
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		if tok.Kind() == '"' && isValue(dec) && slices.Contains(r.Untrusted, string(dec.StackPointer())) {
			tok = jsontext.String(open + tok.String() + end)
		}
		if enc.WriteToken(tok) != nil {
			return r.Data // unreachable for checked data: leave it as the executor wrote it
		}
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

// isValue reports whether the token just read is a value, not an object's
// member name.
func isValue(dec *jsontext.Decoder) bool {
	kind, n := dec.StackIndex(dec.StackDepth())
	return kind != '{' || n%2 == 0
}
