package front

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Since the 2026-07-28 revision (SEP-2575) a request carries its protocol
// version itself, in the Mcp-Protocol-Version header and in its _meta, and
// opens no session. The SDK serves such requests only on a stateless
// handler; a server with sessions routes them to one over the same
// mcp.Server, so one endpoint serves clients of both revisions.
const SessionlessRevision = "2026-07-28"

// CalledName is the name a tools/call names, "" when it names none that reads.
func (m *Message) CalledName() string {
	name, _ := m.CallName()
	return name
}

// CallParams are a tools/call's params as the SDK would read them, built
// from the spans the front read: the arguments as sent, the _meta decoded;
// false for a call the SDK is to refuse (no JSON-RPC 2.0 request with a
// string or number id, a name that is no string, a member it cannot read).
func (m *Message) CallParams() (*mcp.CallToolParamsRaw, bool) {
	if !m.IsCall() || m.Version != "2.0" || !PlainID(m.ID.Bytes(m.Raw)) {
		return nil, false
	}
	name, ok := m.CallName()
	if !ok && m.HasName {
		return nil, false // a name that is no string
	}
	params := &mcp.CallToolParamsRaw{Name: name} // none: "", the executor's unknown_tool, audited
	if m.HasArguments {
		params.Arguments = m.Arguments.Bytes(m.Raw)
	}
	for _, p := range m.ParamMembers {
		v := p.Value.Bytes(m.Raw)
		var err error
		switch p.Name {
		case "inputResponses":
			err = json.Unmarshal(v, &params.InputResponses)
		case "requestState":
			err = json.Unmarshal(v, &params.RequestState)
		}
		if err != nil {
			return nil, false
		}
	}
	if m.HasMeta {
		params.Meta = make(mcp.Meta, len(m.MetaMembers))
		for _, mm := range m.MetaMembers {
			var v any
			if json.Unmarshal(mm.Value.Bytes(m.Raw), &v) != nil {
				return nil, false
			}
			params.Meta[mm.Name] = v
		}
	}
	return params, true
}

// RevisionMeta reports whether the _meta of a 2026-07-28 request is one
// the SDK serves: a version it supports, its client's capabilities, its
// client named well if at all (each read from its bytes, as the SDK's
// types read them).
func (m *Message) RevisionMeta(meta mcp.Meta) bool {
	v, _ := meta[mcp.MetaKeyProtocolVersion].(string)
	if v < SessionlessRevision || !slices.Contains(mcp.SupportedProtocolVersions(), v) {
		return false
	}
	caps, info := false, true
	for _, mm := range m.MetaMembers {
		raw := mm.Value.Bytes(m.Raw)
		switch mm.Name {
		case mcp.MetaKeyClientCapabilities:
			caps = len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &mcp.ClientCapabilities{}) == nil
		case mcp.MetaKeyClientInfo:
			info = string(raw) != "null" && json.Unmarshal(raw, &mcp.Implementation{}) == nil
		}
	}
	return caps && info
}

// MetaLogLevel is the level a 2026-07-28 request's client listens at; ""
// for none.
func MetaLogLevel(meta mcp.Meta) mcp.LoggingLevel {
	s, _ := meta[mcp.MetaKeyLogLevel].(string)
	return mcp.LoggingLevel(s)
}

// PlainID reports whether id is a string or a number: the ids keel
// echoes as sent.
func PlainID(id []byte) bool {
	return len(id) > 0 && (id[0] == '"' || id[0] == '-' || ('0' <= id[0] && id[0] <= '9'))
}

// PostHeadersOK reports whether a POST's Content-Type and Accept are what
// the transport asks: JSON, and a client that reads JSON and events.
func PostHeadersOK(h http.Header) bool {
	ct, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	if !strings.EqualFold(strings.TrimSpace(ct), "application/json") {
		return false
	}
	var jsonOK, streamOK bool
	for _, v := range h.Values("Accept") {
		for raw := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(raw, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}
