package resultjson_test

import (
	"encoding/json"
	"testing"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/resultjson"
)

// A failed result reads back with its stable code; a good one with its
// value.
func TestContent(t *testing.T) {
	ok := runtime.ToolResult{OK: true, ToolName: "t", Data: json.RawMessage(`{"a":1}`)}
	var back map[string]any
	if err := json.Unmarshal([]byte(resultjson.Content(ok)), &back); err != nil || back["ok"] != true {
		t.Errorf("ok result read back as %v (%v)", back, err)
	}
	bad := runtime.ToolResult{ToolName: "t", Error: &runtime.ToolError{Code: runtime.CodeUnknownTool, Message: "No such tool."}}
	if err := json.Unmarshal([]byte(resultjson.Content(bad)), &back); err != nil || back["error"].(map[string]any)["code"] != "unknown_tool" {
		t.Errorf("failed result read back as %v (%v)", back, err)
	}
}
