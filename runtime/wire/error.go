package wire

import (
	"errors"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Error is why a value was refused.
type Error struct {
	// Pointer (RFC 6901) names the place in the schema: member names the
	// schema declares and array indexes, never a map key or an unknown name.
	Pointer string
	// Keyword is the schema keyword that failed ("type", "pattern",
	// "required", ...) or one of keel's own: "json" (not strict JSON),
	// "maxDepth", "maxBytes", "range" (a number the Go type cannot hold).
	Keyword string
	// Reason is for the protected log only.
	Reason string
}

func (e *Error) Error() string {
	ptr := e.Pointer
	if ptr == "" {
		ptr = "/"
	}
	if e.Reason == "" {
		return ptr + ": " + e.Keyword
	}
	return ptr + ": " + e.Keyword + ": " + e.Reason
}

// Fail is a refusal by keyword at the current value.
func Fail(keyword string) error { return &Error{Keyword: keyword} }

// Failf is a refusal by keyword with a reason for the log. The reason must
// not quote the input.
func Failf(keyword, reason string) error { return &Error{Keyword: keyword, Reason: reason} }

// Missing is a required member that did not come; its pointer names it.
func Missing(name string) error { return &Error{Pointer: token(name), Keyword: "required"} }

// Duplicate is a member named twice (also when spelled with escapes).
func Duplicate() error { return &Error{Keyword: "json", Reason: "a member named twice"} }

// Unknown is a member the schema does not declare. Its name is the model's
// and stays out of the error.
func Unknown() error {
	return &Error{Keyword: "additionalProperties", Reason: "a member the schema does not declare"}
}

// At places err inside the member name of the enclosing object.
func At(err error, name string) error {
	var e *Error
	if errors.As(err, &e) {
		e.Pointer = token(name) + e.Pointer
	}
	return err
}

// AtIndex places err inside element i of the enclosing array.
func AtIndex(err error, i int) error {
	var e *Error
	if errors.As(err, &e) {
		e.Pointer = "/" + strconv.Itoa(i) + e.Pointer
	}
	return err
}

// AtKey places err inside a map value. The key is the model's: the pointer
// stops at the map, as it does for every place the schema does not declare.
func AtKey(err error) error {
	var e *Error
	if errors.As(err, &e) {
		e.Pointer = ""
		if e.Reason == "" {
			e.Reason = "in a map value"
		}
	}
	return err
}

// token is name as one RFC 6901 reference token, with its slash.
func token(name string) string { return string(jsontext.Pointer("").AppendToken(name)) }

// Count is how many of met are true: of a struct's oneOf alternatives, how
// many sets of members were given.
func Count(met ...bool) int {
	n := 0
	for _, m := range met {
		if m {
			n++
		}
	}
	return n
}
