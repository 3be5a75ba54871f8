package gen

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A stage slower than slowAfter says what keelgen is doing, so a cold first
// run does not look hung: a run where every stage is slow names both.
func TestSlowStagesSayWhatTheyDo(t *testing.T) {
	was := slowAfter
	t.Cleanup(func() { slowAfter = was })
	slowAfter = time.Millisecond
	var progress bytes.Buffer
	res, err := Generate(Config{Dir: "testdata/golden/mixed/in", OutDir: t.TempDir(), OutPkg: "out", Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Writable() {
		t.Fatalf("generate: %v", res.Diagnostics)
	}
	for _, w := range []string{"keelgen: loading and type-checking the handler packages", "keelgen: building and running the schema program"} {
		if !strings.Contains(progress.String(), w) {
			t.Errorf("progress %q lacks %q", progress.String(), w)
		}
	}
}

// A stage that ends before slowAfter says nothing; one that outlasts it
// says its message once, before done returns.
func TestFastStageSaysNothing(t *testing.T) {
	was := slowAfter
	t.Cleanup(func() { slowAfter = was })
	var out bytes.Buffer
	slowAfter = time.Hour
	slowStage(&out, "fast")()
	slowAfter = time.Millisecond
	done := slowStage(&out, "slow")
	time.Sleep(20 * time.Millisecond)
	done()
	if out.String() != "slow\n" {
		t.Fatalf("progress %q, want only the slow stage's line", out.String())
	}
}
