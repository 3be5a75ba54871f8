package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/question"
	"github.com/keelgen/keel/runtime/wire"
)

// Limits bound what the executor reads from a model and returns to it.
type Limits struct {
	// MaxArgumentBytes caps the size of the arguments (default 1 MiB).
	MaxArgumentBytes int
	// MaxDepth caps the nesting depth of objects and arrays in the
	// arguments (default 64).
	MaxDepth int
	// MaxOutputBytes caps the size of a handler's encoded result (default
	// 1 MiB); a larger result is invalid_tool_output.
	MaxOutputBytes int
	// MaxContentBlocks and MaxContentBytes cap a result's content blocks
	// (WithContent): their count (default 16) and their bytes together
	// (default 8 MiB); more is invalid_tool_output.
	MaxContentBlocks int
	MaxContentBytes  int
	// QuestionBrief bounds one string's characters in the short form of
	// an approval's question (ApprovalRequest.Brief; default 1,000).
	QuestionBrief int
}

// DefaultLimits are the limits of an executor made without WithLimits: a
// copy, so no code can widen every executor's limits.
func DefaultLimits() Limits {
	return Limits{MaxArgumentBytes: 1 << 20, MaxDepth: 64, MaxOutputBytes: 1 << 20, MaxContentBlocks: 16, MaxContentBytes: 8 << 20, QuestionBrief: question.DefaultBrief}
}

// inputError is a failure before schema validation; keyword is what
// Details reports for it.
type inputError struct {
	keyword string
	err     error
}

func (e *inputError) Error() string { return e.keyword + ": " + e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// parseObject reads raw model arguments (or a handler's encoded result)
// strictly into the generic form the schema validator takes
// (map[string]any, []any, string, json.Number, bool, nil). It rejects, before building anything large: oversize input,
// anything but one JSON object, duplicate names (also when spelled with
// escapes), invalid UTF-8, trailing data, and nesting beyond the cap.
// Numbers stay json.Number, so the validator compares them exactly.
func parseObject(raw []byte, lim Limits) (any, error) {
	if len(raw) > lim.MaxArgumentBytes {
		return nil, &inputError{"maxBytes", fmt.Errorf("%d bytes, over the limit of %d", len(raw), lim.MaxArgumentBytes)}
	}
	dec := decoders.Get().(*jsontext.Decoder)
	defer decoders.Put(dec)
	dec.Reset(bytes.NewReader(raw)) // rejects duplicates and invalid UTF-8 by default
	if dec.PeekKind() != '{' {
		if _, err := dec.ReadToken(); err != nil {
			return nil, &inputError{"json", err}
		}
		return nil, &inputError{"type", errors.New("not a JSON object")}
	}
	v, err := parseValue(dec, lim.MaxDepth)
	if err != nil {
		if errors.Is(err, errTooDeep) {
			return nil, &inputError{"maxDepth", err}
		}
		if errors.Is(err, errNumberBound) {
			return nil, &inputError{"range", err}
		}
		return nil, &inputError{"json", err}
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, &inputError{"json", errors.New("data after the JSON object")}
	}
	return v, nil
}

var errTooDeep = errors.New("nesting deeper than")

// errNumberBound refuses a number literal before the validator computes
// with it (wire.NumberProblem: too long, or an exponent no Go number holds).
var errNumberBound = errors.New("a number literal beyond keel's bounds")

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
			return nil, fmt.Errorf("%w %d", errTooDeep, maxDepth)
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
			return nil, fmt.Errorf("%w %d", errTooDeep, maxDepth)
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
		if p := wire.NumberProblem([]byte(tok.String())); p != "" {
			return nil, fmt.Errorf("%w: %s", errNumberBound, p)
		}
		return json.Number(tok.String()), nil
	case 't', 'f':
		return tok.Bool(), nil
	case 'n':
		return nil, nil
	default:
		return nil, fmt.Errorf("unexpected token %v", tok.Kind())
	}
}
