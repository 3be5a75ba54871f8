package peers_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
)

// The floor is an MCP server with no MCP library: a stdio line loop or a
// net/http handler, encoding/json, the tool's checks written by hand
// (incident_id a string matching its pattern, no other member) and the
// same answer every peer gives. keel's cost above it is what keel's
// checks, audit and protocol handling take beyond the least a server must
// do (BenchmarkHTTPLoad, BenchmarkStdioServer; docs/performance.md).

// floorRequest is one JSON-RPC message as the floor reads it.
type floorRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Name            string          `json:"name"`
		Arguments       json.RawMessage `json:"arguments"`
		Meta            map[string]any  `json:"_meta"`
	} `json:"params"`
}

var incidentID = regexp.MustCompile(`^INC-[0-9]{3,}$`)

const floorTool = `{"name":"lookup_incident","description":"Look up an incident.","inputSchema":{"type":"object","properties":{"incident_id":{"type":"string","pattern":"^INC-[0-9]{3,}$"}},"required":["incident_id"],"additionalProperties":false}}`

// floorAnswer answers one message; nil for a notification.
func floorAnswer(ctx context.Context, req *floorRequest) []byte {
	if len(req.ID) == 0 {
		return nil
	}
	revision, _ := req.Params.Meta["io.modelcontextprotocol/protocolVersion"].(string)
	result := func(r string) []byte {
		if revision != "" {
			r = `{"resultType":"complete",` + r[1:]
		}
		return []byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + r + `}`)
	}
	fail := func(code int, msg string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":` + strconv.Itoa(code) + `,"message":"` + msg + `"}}`)
	}
	switch req.Method {
	case "initialize":
		v := req.Params.ProtocolVersion
		if v != "2025-11-25" && v != "2025-06-18" && v != "2025-03-26" {
			v = "2025-11-25"
		}
		return result(`{"protocolVersion":"` + v + `","capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"1"}}`)
	case "server/discover":
		return result(`{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"1"}}`)
	case "ping":
		return result(`{}`)
	case "tools/list":
		return result(`{"tools":[` + floorTool + `]}`)
	case "tools/call":
		if req.Params.Name != tool {
			return fail(-32602, "Unknown tool.")
		}
		var a map[string]json.RawMessage
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil || len(a) != 1 {
			return result(`{"content":[{"type":"text","text":"invalid arguments"}],"isError":true}`)
		}
		var id string
		if err := json.Unmarshal(a["incident_id"], &id); err != nil || !incidentID.MatchString(id) {
			return result(`{"content":[{"type":"text","text":"invalid arguments"}],"isError":true}`)
		}
		inc, err := lookup(ctx, args{IncidentID: id})
		if err != nil {
			return result(`{"content":[{"type":"text","text":"not found"}],"isError":true}`)
		}
		data, _ := json.Marshal(inc)
		text, _ := json.Marshal(string(data))
		return result(`{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":` + string(data) + `}`)
	}
	return fail(-32601, "Method not found.")
}

// serveFloorStdio answers one message a line until in ends.
func serveFloorStdio(ctx context.Context, in io.Reader, out io.Writer) {
	lines := bufio.NewScanner(in)
	lines.Buffer(nil, 16<<20)
	w := bufio.NewWriter(out)
	for lines.Scan() {
		var req floorRequest
		if err := json.Unmarshal(lines.Bytes(), &req); err != nil {
			continue
		}
		if a := floorAnswer(ctx, &req); a != nil {
			w.Write(a)
			w.WriteByte('\n')
			w.Flush()
		}
	}
}

// floorHTTP answers each POST with its one message's answer as JSON; an
// initialize opens a session (its id in the header, nothing kept).
func floorHTTP() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req floorRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 4<<20)).Decode(&req); err != nil {
			http.Error(w, "Bad Request", http.StatusBadRequest)
			return
		}
		a := floorAnswer(r.Context(), &req)
		if a == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if req.Method == "initialize" {
			var id [16]byte
			rand.Read(id[:])
			w.Header().Set("Mcp-Session-Id", hex.EncodeToString(id[:]))
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(a)
	})
}
