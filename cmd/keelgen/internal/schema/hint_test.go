package schema

import (
	"strings"
	"testing"
)

// The go command's complaint about a module the program needs comes with
// its own advice; keelgen's hint replaces it, so one go get is printed, and
// keelgen's program is named as itself, not as a file of the user's.
func TestModuleHintIsOneCommand(t *testing.T) {
	msg := programDir + "/main.go:11:1: no required module provides package github.com/invopop/jsonschema; to add it:\n\tgo get github.com/invopop/jsonschema"
	hint := moduleHint(msg)
	if hint == "" {
		t.Fatal("no hint for a missing reflector")
	}
	out := withoutGoAdvice(msg) + hint
	if strings.Count(out, "go get ") != 1 || strings.Contains(out, programDir) || !strings.Contains(out, "keelgen's schema program: no required module provides package github.com/invopop/jsonschema\n") {
		t.Errorf("the message:\n%s", out)
	}
}
