package main

import (
	"strings"
	"testing"
)

// A failed test's output is written, a passing one's is not, and the
// packages are named slowest first.
func TestSummary(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"a"}`,
		`{"Action":"run","Package":"a","Test":"TestOK"}`,
		`{"Action":"output","Package":"a","Test":"TestOK","Output":"=== RUN   TestOK\n"}`,
		`{"Action":"output","Package":"a","Test":"TestOK","Output":"    chatter that passed\n"}`,
		`{"Action":"pass","Package":"a","Test":"TestOK","Elapsed":0.1}`,
		`{"Action":"output","Package":"a","Output":"ok  \ta\t0.5s\n"}`,
		`{"Action":"pass","Package":"a","Elapsed":0.5}`,
		`{"Action":"output","Package":"b","Test":"TestBad","Output":"    b_test.go:9: the reason\n"}`,
		`{"Action":"fail","Package":"b","Test":"TestBad","Elapsed":2}`,
		`{"Action":"output","Package":"b","Output":"FAIL\tb\t2.5s\n"}`,
		`{"Action":"fail","Package":"b","Elapsed":2.5}`,
		`{"ImportPath":"c","Action":"build-output","Output":"c/c.go:1:1: expected 'package'\n"}`,
		`{"ImportPath":"c","Action":"build-fail"}`,
	}, "\n")
	var out strings.Builder
	failed, err := summarize(strings.NewReader(in), &out, 10)
	if err != nil || !failed {
		t.Fatalf("failed %v, err %v", failed, err)
	}
	want := "ok  \ta\t0.5s\n    b_test.go:9: the reason\nFAIL\tb\t2.5s\nc/c.go:1:1: expected 'package'\n\n" +
		"the 2 slowest packages (wall time of each package's tests):\n      2.5s  b\n      0.5s  a\n"
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	ok, err := summarize(strings.NewReader(strings.Join(strings.Split(in, "\n")[:7], "\n")), &out, 10)
	if err != nil || ok {
		t.Fatalf("a passing run: failed %v, err %v", ok, err)
	}
}
