package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// keelUnknownTool starts the executor's unknown_tool message, the one
// protocol error text written for the model that a client may read.
const keelUnknownTool = "No tool with that name is available."

// fixedMessage is the only text a protocol error carries: the SDK's own
// messages can hold Go type names and the rejected input.
func fixedMessage(code int64) string {
	switch code {
	case jsonrpc.CodeParseError:
		return "Parse error."
	case jsonrpc.CodeInvalidRequest:
		return "Invalid request."
	case jsonrpc.CodeMethodNotFound:
		return "Method not found."
	case jsonrpc.CodeInvalidParams:
		return "Invalid params."
	case jsonrpc.CodeInternalError:
		return "Internal error."
	case CodeRateLimited:
		return "Too many calls."
	case mcp.CodeUnsupportedProtocolVersion:
		return "Unsupported protocol version."
	case mcp.CodeMissingRequiredClientCapabilities:
		return "A client capability this request needs was not declared."
	case mcp.CodeHeaderMismatch:
		return "A request header does not match the body."
	case mcp.CodeURLElicitationRequired:
		return "A person must act at the address given before this call can run."
	default:
		return "The request failed."
	}
}

// protocolError is a protocol error of code with its fixed text.
func protocolError(code int64) *jsonrpc.Error {
	return &jsonrpc.Error{Code: code, Message: fixedMessage(code)}
}

// CodeRateLimited is the JSON-RPC error of a tools/call over a rate limit
// (runtime.WithRateLimits), as MCP servers answer it; its data says
// {"retry_after_seconds": n} when the wait is known, and
// "limit_unchecked": true when the limit could not be checked (its store
// did not answer) rather than reached, with words that say so. Over HTTP
// the answer is 429 with Retry-After.
const CodeRateLimited = -32029

// rateLimit is what a rate-limited error says: the wait, and whether the
// limit could not be checked.
type rateLimit struct {
	RetryAfterSeconds int  `json:"retry_after_seconds,omitempty"`
	LimitUnchecked    bool `json:"limit_unchecked,omitempty"`
}

// rateLimited is the error of a call over its rate limit, or whose limit
// could not be checked.
func rateLimited(l rateLimit) *jsonrpc.Error {
	e := &jsonrpc.Error{Code: CodeRateLimited, Message: fixedMessage(CodeRateLimited)}
	if l.LimitUnchecked {
		e.Message = "The rate limit could not be checked."
	}
	if l.RetryAfterSeconds > 0 || l.LimitUnchecked {
		e.Data, _ = json.Marshal(l)
	}
	return e
}

// limitOf reads a rate-limited error's data: its wait (0 when it has
// none), and whether the limit could not be checked.
func limitOf(e *jsonrpc.Error) rateLimit {
	var l rateLimit
	if json.Unmarshal(e.Data, &l) != nil || l.RetryAfterSeconds < 0 {
		return rateLimit{}
	}
	return l
}

// sanitize replaces the error of a response with its code's fixed text,
// logging what it replaced. keel's unknown_tool message stays.
func sanitize(msg jsonrpc.Message, log *slog.Logger) jsonrpc.Message {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error == nil {
		return msg
	}
	code := int64(jsonrpc.CodeInternalError)
	var wire *jsonrpc.Error
	if errors.As(resp.Error, &wire) {
		code = wire.Code
		if strings.HasPrefix(wire.Message, keelUnknownTool) && wire.Data == nil {
			return msg
		}
		if code == CodeRateLimited { // keel's: its fixed text, and of its data the wait alone
			out := *resp
			out.Error = rateLimited(limitOf(wire))
			return &out
		}
		if data, ok := protocolData(code, wire.Data); ok {
			out := *resp
			out.Error = &jsonrpc.Error{Code: code, Message: fixedMessage(code), Data: data}
			return &out
		}
	}
	log.LogAttrs(context.Background(), slog.LevelInfo, "keel: protocol error; the client gets the fixed text",
		slog.Int64("code", code), slog.Any("detail", resp.Error))
	out := *resp
	out.Error = &jsonrpc.Error{Code: code, Message: fixedMessage(code)}
	return &out
}

// sanitizingTransport is t with every protocol error the server writes
// saying only its code's fixed text, the detail going to log. On an
// *mcp.StdioTransport or *mcp.IOTransport keel frames the stream itself
// (stdio.go); on another transport, a request whose params name a member
// twice is refused (callFront.decoded).
type sanitizingTransport struct {
	t     mcp.Transport
	log   *slog.Logger
	h     *handler
	front *callFront // answers the connection's calls, once bound
}

func (s *sanitizingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	if c, ok := stdioConnection(s.t, s.log, s.h); ok {
		s.front = c.front
		return sanitizingConnection{Connection: c, log: s.log}, nil
	}
	c, err := s.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	s.front = newCallFront(s.h, s.log, writeDecoded(c, s.log))
	return sanitizingConnection{Connection: frontedConnection{c, s.front}, log: s.log}, nil
}

type sanitizingConnection struct {
	mcp.Connection
	log *slog.Logger
}

func (c sanitizingConnection) Write(ctx context.Context, msg jsonrpc.Message) error {
	return c.Connection.Write(ctx, sanitize(msg, c.log))
}

// protocolData is the data of an error whose data the protocol defines
// (SEP-2575), rebuilt from the values read: for -32022 the versions the
// server supports and the one requested, for -32021 the capabilities the
// request needs. A client reads these to recover; nothing else of the
// SDK's data passes.
func protocolData(code int64, data json.RawMessage) (json.RawMessage, bool) {
	switch code {
	case mcp.CodeUnsupportedProtocolVersion:
		var d mcp.UnsupportedProtocolVersionData
		if json.Unmarshal(data, &d) != nil || len(d.Supported) == 0 {
			return nil, false
		}
		out := mcp.UnsupportedProtocolVersionData{Supported: []string{}, Requested: d.Requested}
		for _, v := range d.Supported {
			if protocolVersionLike(v) {
				out.Supported = append(out.Supported, v)
			}
		}
		if len(d.Requested) > 64 || strings.IndexFunc(d.Requested, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
			out.Requested = "" // the client's own bytes, echoed only when short and printable
		}
		b, err := json.Marshal(out)
		return b, err == nil
	case jsonrpc.CodeInvalidParams: // keel's reasons: a request state answered before, or made before the store lost its memory
		return data, string(data) == answeredData || string(data) == lostData
	case mcp.CodeURLElicitationRequired: // keel's own: the approval page's address and question
		var d urlElicitations
		if json.Unmarshal(data, &d) != nil || len(d.Elicitations) == 0 ||
			slices.ContainsFunc(d.Elicitations, func(e urlElicitation) bool { return e.Mode != "url" || e.ID == "" || e.URL == "" }) {
			return nil, false
		}
		b, err := json.Marshal(d)
		return b, err == nil
	case mcp.CodeMissingRequiredClientCapabilities:
		// Read as members, not as the SDK's ClientCapabilities, whose
		// encoding names roots whether required or not.
		var d requiredCapabilities
		if json.Unmarshal(data, &d) != nil || len(d.RequiredCapabilities) == 0 {
			return nil, false
		}
		b, err := json.Marshal(d)
		return b, err == nil
	}
	return nil, false
}

// protocolVersionLike reports whether v reads as a protocol revision
// (YYYY-MM-DD).
func protocolVersionLike(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i, c := range []byte(v) {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// requiredCapabilities is the data of a MissingRequiredClientCapability
// error: the capabilities the request needs, each an object.
type requiredCapabilities struct {
	RequiredCapabilities map[string]map[string]any `json:"requiredCapabilities"`
}

// missingCapabilities is the error of a request that needs the client
// capabilities named (as in ClientCapabilities: "sampling", "extensions"
// with the extension's id, ...).
func missingCapabilities(required map[string]map[string]any) error {
	data, _ := json.Marshal(requiredCapabilities{RequiredCapabilities: required})
	e := protocolError(mcp.CodeMissingRequiredClientCapabilities)
	e.Data = data
	return e
}
