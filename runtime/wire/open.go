package wire

import (
	"encoding/json"
	"maps"
	"slices"
)

// Any writes an open value of a result: a member typed any (or a map of
// them) that a library filled with JSON data it decoded, such as a REST
// API's extra fields. It writes what encoding/json decodes into an any
// (maps of string to any, lists, strings, float64, bool, nil, json.Number)
// and the few typed forms handlers build by hand (ints, []string,
// map[string]string, []map[string]any, json.RawMessage), with sorted keys,
// under the Encoder's depth and size caps. Any other Go value inside is
// refused: keel writes data, and does not reflect on a handler's types.
func (e *Encoder) Any(v any) error {
	switch x := v.(type) {
	case nil:
		e.Null()
	case string:
		return e.String(x)
	case bool:
		e.Bool(x)
	case float64:
		_, err := e.Float(x, 64)
		return err
	case float32:
		_, err := e.Float(float64(x), 32)
		return err
	case int:
		e.Int(int64(x))
	case int64:
		e.Int(x)
	case int32:
		e.Int(int64(x))
	case uint64:
		e.Uint(x)
	case json.Number:
		if NumberProblem([]byte(x)) != "" || !json.Valid([]byte(x)) {
			return Failf("type", "a json.Number that is not a JSON number")
		}
		e.buf = append(e.buf, x...)
	case json.RawMessage:
		return e.Raw(x)
	case map[string]any:
		return openObject(e, x)
	case map[string]string:
		return openObject(e, x)
	case []any:
		return openArray(e, x)
	case []string:
		return openArray(e, x)
	case []map[string]any:
		return openArray(e, x)
	default:
		return Failf("type", "an open value holds a Go value that is not JSON data (maps of string to any, lists, strings, numbers, booleans, null)")
	}
	return nil
}

// openObject writes a map with sorted keys; a nil one is {}, as json v2
// writes it.
func openObject[V any](e *Encoder, m map[string]V) error {
	if err := e.Enter(); err != nil {
		return err
	}
	defer e.Leave()
	e.ObjectStart()
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := e.Key(k); err != nil {
			return err
		}
		if err := e.Any(m[k]); err != nil {
			return AtKey(err)
		}
		if err := e.Cap(); err != nil {
			return err
		}
	}
	e.ObjectEnd()
	return nil
}

// openArray writes a list; a nil one is [], as json v2 writes it.
func openArray[V any](e *Encoder, items []V) error {
	if err := e.Enter(); err != nil {
		return err
	}
	defer e.Leave()
	e.ArrayStart()
	for i, item := range items {
		e.Elem()
		if err := e.Any(item); err != nil {
			return AtIndex(err, i)
		}
		if err := e.Cap(); err != nil {
			return err
		}
	}
	e.ArrayEnd()
	return nil
}
