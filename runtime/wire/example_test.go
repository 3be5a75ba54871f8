package wire_test

import (
	"encoding/json"
	"fmt"

	"github.com/keelgen/keel/runtime/wire"
)

// What a generated reader does with a Decoder, written out: read one
// object member by member, refuse what the schema does not allow, and say
// where, by the schema's pointer and keyword.
func ExampleDecoder() {
	read := func(args string) (int64, error) {
		var d wire.Decoder
		d.Reset([]byte(args), 8)
		if err := d.ObjectStart(); err != nil {
			return 0, err
		}
		var n int64
		seen := false
		for d.More() {
			name, err := d.Name()
			if err != nil {
				return 0, err
			}
			switch string(name) {
			case "count":
				if seen {
					return 0, wire.Duplicate()
				}
				seen = true
				if n, err = d.Int(64); err != nil {
					return 0, wire.At(err, "count")
				}
				if n > 10 {
					return 0, wire.At(wire.Fail("maximum"), "count")
				}
			default:
				return 0, wire.Unknown()
			}
		}
		if err := d.End(); err != nil {
			return 0, err
		}
		if !seen {
			return 0, wire.Missing("count")
		}
		return n, d.Finish()
	}
	for _, args := range []string{`{"count":3}`, `{"count":30}`, `{}`, `{"count":1,"extra":true}`} {
		n, err := read(args)
		fmt.Println(n, err)
	}
	// Output:
	// 3 <nil>
	// 0 /count: maximum
	// 0 /count: required
	// 0 /: additionalProperties: a member the schema does not declare
}

// A member whose null is its own: a handler tells a value, null and absent
// apart; json v2's omitzero leaves an absent one out of a result.
func ExampleNullable() {
	describe := func(folder wire.Nullable[string]) string {
		switch v, ok := folder.Get(); {
		case ok:
			return "move to " + v
		case folder.IsNull():
			return "move to the root"
		default:
			return "leave it"
		}
	}
	var absent wire.Nullable[string]
	fmt.Println(describe(wire.Of("ops")))
	fmt.Println(describe(wire.Null[string]()))
	fmt.Println(describe(absent))

	var read struct {
		Folder wire.Nullable[string] `json:"folder"`
	}
	_ = json.Unmarshal([]byte(`{"folder":null}`), &read)
	fmt.Println(describe(read.Folder))
	// Output:
	// move to ops
	// move to the root
	// leave it
	// move to the root
}
