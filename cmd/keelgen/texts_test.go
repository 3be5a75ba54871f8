package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keelgen/keel/internal/testing/testmod"
)

// thingHandlers use the Go a team already writes: a uuid, an address, bytes,
// a duration, a text type of their own and a decimal of another module.
const thingHandlers = `package things

GENERATE

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

//keel:text github.com/shopspring/decimal.Decimal pattern=^-?[0-9]+(\.[0-9]+)?$

// Colour is red or blue.
type Colour int

func (c Colour) MarshalText() ([]byte, error) {
	if c == 1 {
		return []byte("red"), nil
	}
	return []byte("blue"), nil
}

func (c *Colour) UnmarshalText(b []byte) error {
	switch string(b) {
	case "red":
		*c = 1
	case "blue":
		*c = 2
	default:
		return errors.New("no colour " + string(b))
	}
	return nil
}

// Thing is what get_thing takes and returns.
type Thing struct {
	// ID identifies the thing.
	ID uuid.UUID ` + "`json:\"id\"`" + `
	// Addr is where it lives.
	Addr netip.Addr ` + "`json:\"addr\"`" + `
	// Blob is its bytes.
	Blob []byte ` + "`json:\"blob,omitempty\"`" + `
	// Wait is how long to wait.
	Wait time.Duration ` + "`json:\"wait,omitzero\"`" + `
	// Colour is its colour.
	Colour Colour ` + "`json:\"colour,omitzero\"`" + `
	// Price is its price.
	Price decimal.Decimal ` + "`json:\"price\"`" + `
}

// GetThing returns the thing it is given, its wait doubled.
//
//keel:tool name=get_thing version=1.0 effect=read
func GetThing(ctx context.Context, t Thing) (Thing, error) {
	t.Wait *= 2
	return t, nil
}
`

// thingHarness runs each line of calls.txt as get_thing's arguments.
const thingHarness = `package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/keelgen/keel/runtime"

	"example.com/user/thingtools"
)

func main() {
	exec, err := thingtools.NewExecutor()
	if err != nil {
		panic(err)
	}
	calls, err := os.ReadFile("calls.txt")
	if err != nil {
		panic(err)
	}
	for _, args := range strings.Split(strings.TrimSpace(string(calls)), "\n") {
		res := exec.Execute(context.Background(), runtime.ExecutionContext{Principal: "p"}, runtime.ToolCall{ID: "1", Name: thingtools.ToolGetThing, Arguments: json.RawMessage(args)})
		out, _ := json.Marshal(res)
		fmt.Println(string(out))
	}
}
`

// thingCalls: one valid call, then a malformed uuid, address, decimal and
// colour.
const thingCalls = `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","addr":"192.0.2.1","blob":"aGk=","wait":"1.5s","colour":"red","price":"12.50"}
{"id":"nope","addr":"192.0.2.1","price":"1"}
{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","addr":"192.0.2.999","price":"1"}
{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","addr":"::1","price":"1e3"}
{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","addr":"::1","price":"1","colour":"green"}
`

// TestTextTypesInAUserModule generates and runs a tool whose arguments and
// result are uuid.UUID, netip.Addr, []byte, time.Duration, a team's own text
// type and shopspring's decimal, with no conversion by hand.
func TestTextTypesInAUserModule(t *testing.T) {
	testmod.EndToEnd(t)
	t.Parallel()
	dir := testmod.New(t, map[string]string{
		"things/things.go":    strings.Replace(withGenerate(thingHandlers), "../notetools", "../thingtools", 1),
		"cmd/harness/main.go": thingHarness,
		"calls.txt":           thingCalls,
	})
	testmod.MustGo(t, dir, "generate", "./...")
	out := testmod.MustGo(t, dir, "run", "./cmd/harness")
	invalid := `{"call_id":"1","tool_name":"get_thing","tool_version":"1.0","ok":false,"data":null,"error":{"code":"invalid_arguments","message":"The arguments do not match the tool's input schema."}}`
	want := strings.Join([]string{
		`{"call_id":"1","tool_name":"get_thing","tool_version":"1.0","ok":true,"data":{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","addr":"192.0.2.1","blob":"aGk=","wait":"3s","colour":"red","price":"12.5"},"error":null}`,
		invalid, invalid, invalid, invalid,
	}, "\n")
	if out != want {
		t.Fatalf("harness output:\n%s\nwant:\n%s", out, want)
	}
	data, err := os.ReadFile(filepath.Join(dir, "thingtools/schemas/get_thing.input.json"))
	if err != nil {
		t.Fatal(err)
	}
	input := string(data)
	for _, s := range []string{`"format": "uuid"`, `"title": "An IPv4 or IPv6 address."`, `"contentEncoding": "base64"`, `"title": "A duration, such as 2s, 150ms or 1h30m."`, `"pattern": "^-?[0-9]+(\\.[0-9]+)?$"`} {
		if !strings.Contains(input, s) {
			t.Errorf("input schema lacks %s:\n%s", s, input)
		}
	}
}
