package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/runtime"
)

// stepUp answers, over HTTP, a tools/call of a tool whose scopes the
// bearer token lacks with 403 and WWW-Authenticate: Bearer
// error="insufficient_scope", scope="…" (the tool's scopes), as the MCP
// authorization spec asks, so that a client can ask its authorization
// server for them and try again. The executor still sees the call (it is
// insufficient_scope in the audit; nothing is read or run).
type stepUp struct {
	h   *handler
	log *slog.Logger
}

// refused reports whether it answered the POST of body.
func (s stepUp) refused(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if !bytes.Contains(body, []byte(`"tools/call"`)) { // most POSTs are not calls: no parse
		return false
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		return false // a batch, or not a call: the SDK answers it
	}
	tool := s.h.exec.ToolSet().Lookup(msg.Params.Name)
	tok := auth.TokenInfoFromContext(r.Context())
	if tool == nil || tok == nil {
		return false
	}
	need := tool.Info().Scopes
	if !slices.ContainsFunc(need, func(sc string) bool { return !slices.Contains(tok.Scopes, sc) }) {
		return false
	}
	ec := s.context(r.Context(), tok, msg.Params.Name, r.Header)
	// Offered to this caller, scopes aside: visible were its token to
	// hold the tool's scopes too. A tool hidden from it is answered by the
	// SDK's path as unknown, and no 403 tells it apart.
	stepped := ec
	stepped.Scopes = append(slices.Clone(ec.Scopes), need...)
	if !s.h.exec.Visible(r.Context(), stepped, tool) {
		return false
	}
	// The executor refuses it, before reading anything, and audits it.
	res := s.h.exec.Execute(r.Context(), ec, runtime.ToolCall{ID: newCallID(), Name: msg.Params.Name})
	if res.Code() != runtime.CodeInsufficientScope {
		s.log.LogAttrs(r.Context(), slog.LevelError, "keel: a call the token's scopes do not cover was not refused for its scope", slog.String("code", string(res.Code())))
	}
	w.Header().Set("WWW-Authenticate", fmt.Sprintf("Bearer scope=%q", strings.Join(need, " ")))
	http.Error(w, http.StatusText(http.StatusForbidden), http.StatusForbidden)
	return true
}

// context is the ExecutionContext the server's Options.Context gives this
// token, for the audit; its scopes are the token's. A hook that needs a
// session (there is none yet at this point) gives the token's principal.
func (s stepUp) context(ctx context.Context, tok *auth.TokenInfo, name string, header http.Header) (ec runtime.ExecutionContext) {
	defer func() {
		if recover() != nil {
			ec = runtime.ExecutionContext{Principal: tok.UserID}
		}
		ec.Scopes = slices.Clone(tok.Scopes)
	}()
	return s.h.context(ctx, &mcp.CallToolRequest{Extra: &mcp.RequestExtra{TokenInfo: tok, Header: header}, Params: &mcp.CallToolParamsRaw{Name: name}})
}
