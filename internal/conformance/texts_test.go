package conformance_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/keelgen/keel/internal/conformance/generated"
	"github.com/keelgen/keel/runtime"
)

// Every text kind keel generates costs time linear in its size: a text for
// a parser keel does not own (UnmarshalText, time.ParseDuration) is bounded
// before the parser sees it, and base64 keel reads itself. Before the bound,
// a decimal of 1 MiB cost 2.1-2.5 s and one a sixteenth of that 15-25 ms
// (×146). Same-run medians, so a slow machine does not trip it; linear is
// ~16, and the check fails above 64 (memory effects alone reach ~35 here;
// measured one size after the other, a loaded machine once gave ×68).
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
		// The two sizes alternate, so a burst of load on a shared machine
		// falls on both rather than on one.
		args := func(size int) []byte {
			return []byte("{" + id + "," + fmt.Sprintf(c.wrap, strings.Repeat(c.fill, size)) + "}")
		}
		sizes := [2][]byte{args(64 << 10), args(1 << 20)}
		var runs [2][]time.Duration
		for range 15 {
			for i, a := range sizes {
				start := time.Now()
				r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "t", Name: generated.ToolTexts, Arguments: a})
				runs[i] = append(runs[i], time.Since(start))
				if r.Code() != runtime.CodeInvalidArguments || len(r.Error.Details) != 1 || r.Error.Details[0].Keyword != "maxLength" {
					t.Fatalf("%s of %d bytes: %s %+v, want invalid_arguments for its length", c.member, len(a), r.Code(), r.Error)
				}
			}
		}
		median := func(d []time.Duration) time.Duration {
			slices.Sort(d)
			return d[len(d)/2]
		}
		small, large := median(runs[0]), median(runs[1])
		ratio := float64(large) / float64(small)
		t.Logf("%s: %v at 64 KiB, %v at 1 MiB: ×%.1f", c.member, small, large, ratio)
		if ratio > 64 {
			t.Errorf("%s: a text 16 times longer costs ×%.1f (linear is ~16)", c.member, ratio)
		}
	}
}
