package main

import (
	"bytes"
	"strings"
	"testing"
)

func runDemo(t *testing.T, stdin string, args ...string) (string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(args, strings.NewReader(stdin), &out, &errOut); code != 0 {
		t.Fatalf("dispatch %v exited %d: %s", args, code, errOut.String())
	}
	return out.String(), errOut.String()
}

func TestTable(t *testing.T) {
	got, _ := runDemo(t, "")
	want := `| call_id | name | version | ok | code |
| --- | --- | --- | --- | --- |
| call-valid | lookup_incident | 1.1 | true | — |
| call-unknown | delete_prod | null | false | unknown_tool |
| call-invalid | lookup_incident | 1.1 | false | invalid_arguments |
| call-write | create_ticket | 1.2.1 | false | approval_required |

{
  "call_id": "call-valid",
  "tool_name": "lookup_incident",
  "tool_version": "1.1",
  "ok": true,
  "data": {
    "incident_id": "INC-001",
    "service": "auth-api",
    "severity": "high",
    "symptom": "登录接口持续返回 502",
    "evidence": [
      "auth-api timeout",
      "database pool exhausted"
    ]
  },
  "error": null
}
`
	if got != want {
		t.Fatalf("demo output:\n%s\nwant:\n%s", got, want)
	}
}

func TestJSON(t *testing.T) {
	got, _ := runDemo(t, "", "-json")
	want := `{"call_id":"call-valid","tool_name":"lookup_incident","tool_version":"1.1","ok":true,"data":{"incident_id":"INC-001","service":"auth-api","severity":"high","symptom":"登录接口持续返回 502","evidence":["auth-api timeout","database pool exhausted"]},"error":null}
{"call_id":"call-unknown","tool_name":"delete_prod","tool_version":null,"ok":false,"data":null,"error":{"code":"unknown_tool","message":"No tool with that name is available. Available tools: create_ticket, lookup_incident."}}
{"call_id":"call-invalid","tool_name":"lookup_incident","tool_version":"1.1","ok":false,"data":null,"error":{"code":"invalid_arguments","message":"The arguments do not match the tool's input schema."}}
{"call_id":"call-write","tool_name":"create_ticket","tool_version":"1.2.1","ok":false,"data":null,"error":{"code":"approval_required","message":"This call needs approval before it can run."}}
`
	if got != want {
		t.Fatalf("-json output:\n%s\nwant:\n%s", got, want)
	}
}

func TestCallsFromStdin(t *testing.T) {
	in := strings.Join([]string{
		`{"call_id":"w","name":"create_ticket","arguments":{"incident_id":"INC-001","summary":"raise pool size"}}`,
		`not json at all`,
		``,
		`{"call_id":"x","name":"lookup_incident","arguments":{"incident_id":"INC-001"},"extra":true}`,
		`[1,2,3]`,
		`{"call_id":"n","name":"lookup_incident","arguments":{"incident_id":"INC-404"}}`,
		`{"call_id":"a","name":"lookup_incident"}`,
	}, "\n")
	got, _ := runDemo(t, in, "-calls", "-", "-allow-side-effects")
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	wantPrefixes := []string{
		`{"call_id":"w","tool_name":"create_ticket","tool_version":"1.2.1","ok":true,"data":{"ticket_id":"TCK-`,
		`{"call_id":"line-2","tool_name":"","tool_version":null,"ok":false,"data":null,"error":{"code":"invalid_call",`,
		`{"call_id":"line-4","tool_name":"","tool_version":null,"ok":false,"data":null,"error":{"code":"invalid_call",`,
		`{"call_id":"line-5","tool_name":"","tool_version":null,"ok":false,"data":null,"error":{"code":"invalid_call",`,
		`{"call_id":"n","tool_name":"lookup_incident","tool_version":"1.1","ok":false,"data":null,"error":{"code":"incident_not_found",`,
		`{"call_id":"a","tool_name":"lookup_incident","tool_version":"1.1","ok":false,"data":null,"error":{"code":"invalid_arguments",`,
	}
	if len(lines) != len(wantPrefixes) {
		t.Fatalf("got %d result lines, want %d:\n%s", len(lines), len(wantPrefixes), got)
	}
	for i, p := range wantPrefixes {
		if !strings.HasPrefix(lines[i], p) {
			t.Errorf("line %d:\n%s\nwant prefix\n%s", i+1, lines[i], p)
		}
	}
}

func TestWriteNeedsTheFlag(t *testing.T) {
	got, _ := runDemo(t, `{"call_id":"w","name":"create_ticket","arguments":{"incident_id":"INC-001","summary":"s"}}`, "-calls", "-")
	if !strings.Contains(got, `"code":"approval_required"`) {
		t.Fatalf("write without -allow-side-effects: %s", got)
	}
}

func TestApprovalLoop(t *testing.T) {
	got, _ := runDemo(t, "", "-approvals")
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 9 {
		t.Fatalf("approval loop printed %d lines:\n%s", len(lines), got)
	}
	for i, want := range map[int]string{
		1: `"error":{"code":"approval_required","message":"This call needs approval before it can run.","approval":{"tool":"create_ticket","version":"1.2.1","set_digest":"sha256:`,
		4: `"ok":true,"data":{"ticket_id":"TCK-`,
		6: `"code":"approval_required"`,
		8: `"code":"approval_required"`,
	} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d:\n%s\nlacks\n%s", i+1, lines[i], want)
		}
	}
	if !strings.HasPrefix(lines[2], "2. a person approves create_ticket 1.2.1 with arguments sha256:") {
		t.Errorf("line 3: %s", lines[2])
	}
}

// Lines of any length up to the cap reach the executor; a longer one gets a
// result of its own and the lines after it are still answered. Arguments go
// to the executor as raw bytes, so its verdict stands on what they hold.
func TestCallLinesOfAnyLength(t *testing.T) {
	long := `{"call_id":"long","name":"lookup_incident","arguments":{"incident_id":"` + strings.Repeat("A", 100<<10) + `"}}`
	tooLong := `{"call_id":"huge","name":"lookup_incident","arguments":{"incident_id":"` + strings.Repeat("A", maxLine) + `"}}`
	in := strings.Join([]string{
		long,
		tooLong,
		`{"call_id":"dup","name":"lookup_incident","arguments":{"incident_id":"INC-001","incident_id":"INC-002"}}`,
		`{"call_id":"sur","name":"lookup_incident","arguments":{"incident_id":"\ud800"}}`,
		"{\"call_id\":\"utf\",\"name\":\"lookup_incident\",\"arguments\":{\"incident_id\":\"INC-\xff\"}}",
		`{"call_id":"twice","call_id":"again","name":"lookup_incident","arguments":{"incident_id":"INC-001"}}`,
		`{"call_id":"ok","name":"lookup_incident","arguments":{"incident_id":"INC-001"}} trailing`,
		`{"call_id":"last","name":"lookup_incident","arguments":{"incident_id":"INC-001"}}`,
	}, "\n")
	got, _ := runDemo(t, in, "-calls", "-")
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	wantPrefixes := []string{
		`{"call_id":"long","tool_name":"lookup_incident","tool_version":"1.1","ok":false,"data":null,"error":{"code":"invalid_arguments",`,
		`{"call_id":"line-2","tool_name":"","tool_version":null,"ok":false,"data":null,"error":{"code":"invalid_call","message":"The line is longer than 4194304 bytes."`,
		`{"call_id":"dup","tool_name":"lookup_incident","tool_version":"1.1","ok":false,"data":null,"error":{"code":"invalid_arguments",`,
		`{"call_id":"sur","tool_name":"lookup_incident","tool_version":"1.1","ok":false,"data":null,"error":{"code":"invalid_arguments",`,
		`{"call_id":"utf","tool_name":"lookup_incident","tool_version":"1.1","ok":false,"data":null,"error":{"code":"invalid_arguments",`,
		`{"call_id":"line-6","tool_name":"","tool_version":null,"ok":false,"data":null,"error":{"code":"invalid_call",`,
		`{"call_id":"line-7","tool_name":"","tool_version":null,"ok":false,"data":null,"error":{"code":"invalid_call",`,
		`{"call_id":"last","tool_name":"lookup_incident","tool_version":"1.1","ok":true,`,
	}
	if len(lines) != len(wantPrefixes) {
		t.Fatalf("got %d result lines, want %d:\n%.2000s", len(lines), len(wantPrefixes), got)
	}
	for i, p := range wantPrefixes {
		if !strings.HasPrefix(lines[i], p) {
			t.Errorf("line %d:\n%.300s\nwant prefix\n%s", i+1, lines[i], p)
		}
	}
}
