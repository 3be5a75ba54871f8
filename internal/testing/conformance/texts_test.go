package conformance_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/keelgen/keel/internal/testing/conformance/generated"
	"github.com/keelgen/keel/internal/testing/cputime"
	"github.com/keelgen/keel/runtime"
)

// Every text kind keel generates costs time linear in its size: a text for
// a parser keel does not own (UnmarshalText, time.ParseDuration) is bounded
// before the parser sees it, and base64 keel reads itself. Before the bound,
// a decimal of 1 MiB cost 2.1-2.5 s and one a sixteenth of that 15-25 ms
// (×146). The ratio is of the fastest CPU times of the two sizes in one
// run, so neither a slow machine nor other processes on it trip the check
// (wall-clock medians once read ×80 while a build shared the machine);
// linear is ~16, and the check fails above 64.
func TestTextKindsCostLinearTime(t *testing.T) {
	if testing.Short() {
		t.Skip("measures; run without -short")
	}
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithErrorDetails(),
		runtime.WithLimits(runtime.Limits{MaxArgumentBytes: 2 << 20, MaxDepth: 64, MaxOutputBytes: 1 << 20}))
	if err != nil {
		t.Fatal(err)
	}
	const id = `"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427"`
	for _, c := range []struct{ member, fill, wrap string }{
		{"price", "9", `"price":"%s"`},              // //keel:text decimal: quadratic parser
		{"wait", "1", `"wait":"%ss"`},               // time.ParseDuration
		{"addr", "1", `"addr":"%s"`},                // netip.Addr
		{"net", "1", `"net":"%s/8"`},                // netip.Prefix
		{"hosts/0", "f", `"hosts":["fe80::1%%%s"]`}, // a zone
		{"level", "h", `"level":"%s"`},              // the package's own UnmarshalText, under maxLength
		{"blob", "A", `"blob":"%s"`},                // base64, under maxLength
		{"owners", "1", `"owners":{"a":"%s"}`},      // uuid.UUID in a map
	} {
		args := func(size int) []byte {
			return []byte("{" + id + "," + fmt.Sprintf(c.wrap, strings.Repeat(c.fill, size)) + "}")
		}
		cost := func(a []byte) time.Duration {
			return cputime.Fastest(15, func() {
				r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "t", Name: generated.ToolTexts, Arguments: a})
				if r.Code() != runtime.CodeInvalidArguments || len(r.Error.Details) != 1 || r.Error.Details[0].Keyword != "maxLength" {
					t.Fatalf("%s of %d bytes: %s %+v, want invalid_arguments for its length", c.member, len(a), r.Code(), r.Error)
				}
			})
		}
		small, large := cost(args(64<<10)), cost(args(1<<20))
		ratio := float64(large) / float64(small)
		t.Logf("%s: %v at 64 KiB, %v at 1 MiB: ×%.1f", c.member, small, large, ratio)
		if ratio > 64 {
			t.Errorf("%s: a text 16 times longer costs ×%.1f (linear is ~16)", c.member, ratio)
		}
	}
}
