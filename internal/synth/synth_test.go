package synth_test

import (
	"fmt"
	"testing"

	"github.com/keelgen/keel/internal/synth"
	"github.com/keelgen/keel/internal/testmod"
)

// A set past the flat switch gets the narrowed Lookup: every tool is found
// by its exact name and by nothing else (names of other lengths, a byte
// changed anywhere, a prefix, a suffix).
func TestNarrowedLookupFindsExactNamesOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and builds a module")
	}
	const n = 120
	files := synth.Files(n, 0)
	files["cmd/lookup/main.go"] = fmt.Sprintf(`package main

import (
	"fmt"
	"os"

	"example.com/synth/tools"
)

func main() {
	bad := 0
	for i := range %d {
		name := fmt.Sprintf("incident_lookup_%%d", i)
		if t := tools.ToolSet.Lookup(name); t == nil || t.Info().Name != name {
			fmt.Println("not found:", name)
			bad++
		}
		for p := range len(name) {
			b := []byte(name)
			b[p] ^= 1
			if t := tools.ToolSet.Lookup(string(b)); t != nil && t.Info().Name != string(b) {
				fmt.Println("near miss found:", string(b))
				bad++
			}
		}
		for _, miss := range []string{name + "0", name[:len(name)-1] + "x", name[1:], "x" + name, name + " "} {
			if t := tools.ToolSet.Lookup(miss); t != nil && t.Info().Name != miss {
				fmt.Println("near miss found:", miss)
				bad++
			}
		}
	}
	if tools.ToolSet.Lookup("") != nil || tools.ToolSet.Lookup("incident_lookup_99999") != nil {
		fmt.Println("an unknown name was found")
		bad++
	}
	if bad > 0 {
		os.Exit(1)
	}
	fmt.Println("ok", len(tools.ToolSet.Tools()))
}
`, n)
	dir := t.TempDir()
	if err := testmod.Make(testmod.Root(t), dir, "example.com/synth", files); err != nil {
		t.Fatal(err)
	}
	testmod.MustGo(t, dir, "generate", "./"+synth.Handlers)
	src := testmod.MustGo(t, dir, "run", "./cmd/lookup")
	if src != fmt.Sprintf("ok %d", n) {
		t.Fatalf("lookup check:\n%s", src)
	}
}
