package gen

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A stage slower than slowAfter says what keelgen is doing, so a cold first
// run does not look hung; a fast one says nothing.
func TestSlowStagesSayWhatTheyDo(t *testing.T) {
	was := slowAfter
	t.Cleanup(func() { slowAfter = was })
	for _, c := range []struct {
		after time.Duration
		want  []string
	}{
		{time.Millisecond, []string{"keelgen: loading and type-checking the handler packages", "keelgen: building and running the schema program"}},
		{time.Hour, nil},
	} {
		slowAfter = c.after
		var progress bytes.Buffer
		res, err := Generate(Config{Dir: "testdata/golden/mixed/in", OutDir: t.TempDir(), OutPkg: "out", Progress: &progress})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Writable() {
			t.Fatalf("generate: %v", res.Diagnostics)
		}
		got := progress.String()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("after %v: progress %q lacks %q", c.after, got, w)
			}
		}
		if c.want == nil && got != "" {
			t.Errorf("a fast run printed %q", got)
		}
	}
}
