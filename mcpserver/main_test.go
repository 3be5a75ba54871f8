package mcpserver_test

import (
	"flag"
	"os"
	"testing"
)

// The tests of this package wait on servers, clients, timers and Node.js
// processes far more than they compute, so more of them run at once than
// go test's default -parallel (GOMAXPROCS), unless -parallel was given.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "8")
	}
	os.Exit(m.Run())
}
