// Package jsontest compares JSON values in tests, whatever the member order
// or formatting.
package jsontest

import (
	"encoding/json"
	"testing"
)

// Canonical encodes v (any value, or raw JSON) with sorted members.
func Canonical(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(x)
	return string(out)
}

// Equal reports whether a and b are the same JSON value.
func Equal(t testing.TB, a, b any) bool {
	t.Helper()
	return Canonical(t, a) == Canonical(t, b)
}
