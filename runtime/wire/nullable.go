package wire

import "encoding/json"

// Nullable is a member whose null means something of its own, apart from
// absent: a model sends "type": null to clear an issue's type, and leaves
// "type" out to keep it. Its schema is the value's with null added
// (type ["string", "null"]); the generated reader gives the handler one of
// three states:
//
//	switch v, ok := args.Type.Get(); {
//	case ok: // a value: set it
//	case args.Type.IsNull(): // null: clear it
//	default: // absent: leave it
//	}
//
// Tag it omitzero to make the member optional; without, it is required
// and null or a value. In a result, absent is omitted under omitzero and
// written as null otherwise. T is a string, number, boolean or text type.
type Nullable[T any] struct {
	value T
	state nullState
}

type nullState uint8

const (
	absent nullState = iota
	null
	given
)

// Of is a Nullable holding v.
func Of[T any](v T) Nullable[T] { return Nullable[T]{value: v, state: given} }

// Null is a Nullable that is null.
func Null[T any]() Nullable[T] { return Nullable[T]{state: null} }

// Get is the value and true when one was given; the zero value and false
// when the member was null or absent.
func (n Nullable[T]) Get() (T, bool) { return n.value, n.state == given }

// IsNull reports whether the member was null.
func (n Nullable[T]) IsNull() bool { return n.state == null }

// IsZero reports whether the member was absent, so json v2's omitzero
// leaves an absent one out.
func (n Nullable[T]) IsZero() bool { return n.state == absent }

// MarshalJSON writes the value, or null for null and absent, for code that
// marshals the type itself (a policy's view of the arguments, a test);
// generated writers do not call it.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if n.state != given {
		return []byte("null"), nil
	}
	return json.Marshal(n.value)
}

// UnmarshalJSON reads null or a value; a member never read stays absent.
// Generated readers do not call it.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Null[T]()
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = Of(v)
	return nil
}
