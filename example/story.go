package example

import (
	"encoding/json"

	"github.com/keelgen/keel/runtime"
)

// StoryCalls are the four calls of keel's story, as a model might send them:
// a valid read, a hallucinated tool, invalid arguments, and a write without
// approval. The demo and the benchmarks send them; each call is a new copy.
func StoryCalls() []runtime.ToolCall {
	return []runtime.ToolCall{
		{ID: "call-valid", Name: "lookup_incident", Arguments: json.RawMessage(`{"incident_id": "INC-001"}`)},
		{ID: "call-unknown", Name: "delete_prod", Arguments: json.RawMessage(`{"target": "db-main"}`)},
		{ID: "call-invalid", Name: "lookup_incident", Arguments: json.RawMessage(`{"incident_id": 42}`)},
		{ID: "call-write", Name: "create_ticket", Arguments: json.RawMessage(`{"incident_id": "INC-001", "summary": "Raise the auth-api database pool size"}`)},
	}
}
