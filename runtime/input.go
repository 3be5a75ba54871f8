package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Limits bound what the executor will read of a model's arguments.
type Limits struct {
	// MaxArgumentBytes caps the size of the arguments (default 1 MiB).
	MaxArgumentBytes int
	// MaxDepth caps the nesting depth of objects and arrays (default 64).
	MaxDepth int
}

// DefaultLimits are the limits of an executor made without WithLimits.
var DefaultLimits = Limits{MaxArgumentBytes: 1 << 20, MaxDepth: 64}

// parseObject reads raw model arguments (or a handler's encoded result) strictly into the generic form
// the schema validator takes (map[string]any, []any, string, json.Number,
// bool, nil). It rejects, before building anything large: oversize input,
// anything but one JSON object, duplicate names (also when spelled with
// escapes), invalid UTF-8, trailing data, and nesting beyond the cap.
// Numbers stay json.Number, so the validator compares them exactly.
func parseObject(raw []byte, lim Limits) (any, error) {
	if len(raw) > lim.MaxArgumentBytes {
		return nil, fmt.Errorf("%d bytes, over the limit of %d", len(raw), lim.MaxArgumentBytes)
	}
	dec := decoders.Get().(*jsontext.Decoder)
	defer decoders.Put(dec)
	dec.Reset(bytes.NewReader(raw)) // rejects duplicates and invalid UTF-8 by default
	if dec.PeekKind() != '{' {
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		return nil, errors.New("not a JSON object")
	}
	v, err := parseValue(dec, lim.MaxDepth)
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return v, nil
}

// decoders reuses jsontext decoders and their buffers across calls.
var decoders = sync.Pool{New: func() any { return jsontext.NewDecoder(bytes.NewReader(nil)) }}

func parseValue(dec *jsontext.Decoder, maxDepth int) (any, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		if dec.StackDepth() > maxDepth {
			return nil, fmt.Errorf("nesting deeper than %d", maxDepth)
		}
		obj := map[string]any{}
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			key := name.String() // a token is void after the next read
			v, err := parseValue(dec, maxDepth)
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		return obj, nil
	case '[':
		if dec.StackDepth() > maxDepth {
			return nil, fmt.Errorf("nesting deeper than %d", maxDepth)
		}
		arr := []any{}
		for dec.PeekKind() != ']' {
			v, err := parseValue(dec, maxDepth)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		return arr, nil
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tok.String()), nil
	case 't', 'f':
		return tok.Bool(), nil
	case 'n':
		return nil, nil
	default:
		return nil, fmt.Errorf("unexpected token %v", tok.Kind())
	}
}
