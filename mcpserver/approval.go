package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/internal/question"
	"github.com/keelgen/keel/mcpserver/approvalstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
)

// Approvals lets the person at an MCP client approve a call the policy sent
// for approval, in the protocol's own way: the call's answer is an input
// request (SEP-2322's InputRequiredResult) that asks, by elicitation, to
// approve this exact call (tool, version, arguments); the client calls again
// with the answer and the request state, and a yes becomes a grant bound to
// that call, redeemed by the executor as any grant (single use, across
// replicas with a shared replay store). A client that cannot take
// elicitation, or a call Ask keeps from the client, gets approval_required
// as before. Make one with NewApprovals.
type Approvals struct {
	key    grant.Key
	secret []byte

	// Ask decides whether the client's person may approve this call. Nil
	// asks for every call; a policy that wants a grant from elsewhere (a
	// second person, a ticket) answers false, and the client reads
	// approval_required.
	Ask func(ctx context.Context, ec runtime.ExecutionContext, req runtime.ApprovalRequest) bool
	// TTL is how long a question stays answerable, and the life of the
	// grant a yes becomes (default DefaultApprovalTTL).
	TTL time.Duration
	// Pending, with PageURL, sends each call the client's person is not
	// asked about (a client that cannot be asked, or a call Ask keeps from
	// it) to the approval page (ApprovalPage): the call is
	// approval_required with error.approval.url, an approver decides at
	// that address, and the same call, sent again, runs once with the
	// grant an approval became. Several replicas share one store.
	Pending approvalstore.Store
	// PageURL is the address of ApprovalPage as a person's browser reaches
	// it, ending in "/": an approval's address is PageURL and its id.
	PageURL string
}

// DefaultApprovalTTL is how long a client's person has to answer.
const DefaultApprovalTTL = 10 * time.Minute

// approvalInput is the key of the one input request keel makes.
const approvalInput = "keel/approval"

// minStateSecret is the least length of the request state's secret.
const minStateSecret = 32

// NewApprovals returns approvals whose grants key signs (the executor's
// runtime.WithApprovals key: an HMAC key, or an ed25519 private key) and
// whose request state stateSecret signs: at least 32 random bytes, the same
// on every replica, never the grant key's secret (a state is not a grant).
func NewApprovals(key grant.Key, stateSecret []byte) (*Approvals, error) {
	if key == nil {
		return nil, errors.New("mcpserver: NewApprovals: the grant key is nil")
	}
	if _, err := grant.Issue(key, grant.Grant{Expires: time.Unix(0, 0)}); err != nil {
		return nil, fmt.Errorf("mcpserver: NewApprovals: the key cannot sign grants: %w", err)
	}
	if len(stateSecret) < minStateSecret {
		return nil, fmt.Errorf("mcpserver: NewApprovals: the state secret has %d bytes, fewer than %d", len(stateSecret), minStateSecret)
	}
	return &Approvals{key: key, secret: append([]byte(nil), stateSecret...)}, nil
}

// approvalState is what a request state carries from the question to the
// answer: the call as the policy saw it and who made it. It is signed, so a
// client can neither alter it nor make one.
type approvalState struct {
	Version         int    `json:"v"`
	CallID          string `json:"call_id"`
	Tool            string `json:"tool"`
	ToolVersion     string `json:"tool_version"`
	SetDigest       string `json:"set_digest"`
	ArgumentsDigest string `json:"arguments_digest"`
	Tenant          string `json:"tenant"`
	Principal       string `json:"principal"`
	Expires         int64  `json:"expires"`
	Nonce           string `json:"nonce"`
	// Answers are the client's answers to the handler's own questions of
	// the rounds before (package ask), which the call runs with once
	// approved.
	Answers map[string]json.RawMessage `json:"answers,omitempty"`
	// Memory names the replay store's memory when the state was made
	// (Memory, as runtime.ReplayStore says): a store that lost it since refuses the state.
	Memory string `json:"memory,omitempty"`
}

// stateDomain keeps a state's signature from meaning anything else.
const stateDomain = "keel/mcp-approval-state/v1\x00"

func (a *Approvals) ttl() time.Duration {
	if a.TTL > 0 {
		return a.TTL
	}
	return DefaultApprovalTTL
}

func (a *Approvals) states() signedState { return signedState{secret: a.secret, domain: stateDomain} }

// open reads an approval state keel signed and that has not expired.
func (a *Approvals) open(s string, now time.Time) (approvalState, error) {
	var st approvalState
	if err := a.states().open(s, &st); err != nil || st.Version != 1 || now.Unix() >= st.Expires {
		return approvalState{}, errState
	}
	return st, nil
}

// approvalQuestion is the input request for one call: what a person reads (the
// executor's rendering of the whole call, runtime.ApprovalRequest's
// Question), and a yes or no.
func approvalQuestion(req runtime.ApprovalRequest, arguments json.RawMessage) *mcp.ElicitParams {
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: briefQuestion(req, arguments),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"approve": map[string]any{"type": "boolean", "title": "Approve", "description": "Run this call"},
			},
			"required": []string{"approve"},
		},
	}
}

// briefQuestion is the question as a client shows it: its brief, which,
// when it cut a value, gives the address where the page shows the whole
// call, if there is one.
func briefQuestion(req runtime.ApprovalRequest, arguments json.RawMessage) string {
	text := req.Brief
	if text == "" { // a request the executor did not make: render it here alike
		text, _ = question.Brief(question.Tool{Name: req.Tool, Version: req.Version}, arguments, 0)
	}
	if text != req.Question && req.URL != "" {
		text += "\n\nThe whole call, every value whole: " + req.URL
	}
	return text
}

// canElicit reports whether the client said it takes a form elicitation
// (in this request's _meta, or at initialize): an elicitation capability
// naming no mode is form alone, as before modes existed.
func canElicit(req *mcp.CallToolRequest) bool {
	c := req.ClientCapabilities()
	return c != nil && c.Elicitation != nil && (c.Elicitation.Form != nil || c.Elicitation.URL == nil) && revisionOf(req).elicits()
}

// opensURLs reports whether a client of a revision before 2026-07-28 said
// it takes URL-mode elicitation (2025-11-25): it is sent to the approval
// page by the protocol's own error, which its application shows its person
// instead of handing the address to the model. The 2026-07-28 revision has
// no such error; its clients read the address in the result.
func opensURLs(req *mcp.CallToolRequest) bool {
	if _, perRequest := req.Params.Meta[mcp.MetaKeyProtocolVersion]; perRequest {
		return false
	}
	c := req.ClientCapabilities()
	return c != nil && c.Elicitation != nil && c.Elicitation.URL != nil && revisionOf(req).elicitsURL()
}

// urlRequired is the 2025-11-25 error that sends a client's person to the
// approval page for a call: URL-mode elicitation, whose id is the
// approval's and whose message is the executor's question.
func (a *Approvals) urlRequired(ar *runtime.ApprovalRequest) error {
	data, _ := json.Marshal(urlElicitations{Elicitations: []urlElicitation{{
		Mode: "url", ID: strings.TrimPrefix(ar.URL, a.PageURL), URL: ar.URL, Message: briefQuestion(*ar, nil),
	}}})
	e := protocolError(mcp.CodeURLElicitationRequired)
	e.Data = data
	return e
}

// urlElicitations is the data of a URL-elicitation-required error.
type urlElicitations struct {
	Elicitations []urlElicitation `json:"elicitations"`
}

type urlElicitation struct {
	Mode    string `json:"mode"`
	ID      string `json:"elicitationId"`
	URL     string `json:"url"`
	Message string `json:"message"`
}

// ask is the input-required answer to a call the policy sent for approval,
// or nil when this call's approval is not the client's to give. The caller
// checked that the client takes elicitation.
func (a *Approvals) ask(ctx context.Context, ec runtime.ExecutionContext, r runtime.ToolResult, arguments json.RawMessage, answers map[string]json.RawMessage, spent runtime.ReplayStore) *mcp.CallToolResult {
	if r.Code() != runtime.CodeApprovalRequired || r.Error == nil || r.Error.Approval == nil {
		return nil
	}
	ar := *r.Error.Approval
	if a.Ask != nil && !a.Ask(ctx, ec, ar) {
		return nil
	}
	memory, err := storeMemory(ctx, spent)
	if err != nil {
		return nil // the store cannot say what it remembers: not asked, the call stays approval_required
	}
	var nonce [16]byte
	rand.Read(nonce[:])
	state, err := a.states().seal(approvalState{
		Version: 1, CallID: ar.CallID, Tool: ar.Tool, ToolVersion: ar.Version, SetDigest: ar.SetDigest,
		ArgumentsDigest: ar.ArgumentsDigest, Tenant: ec.Tenant, Principal: ec.Principal,
		Expires: time.Now().Add(a.ttl()).Unix(), Nonce: hex.EncodeToString(nonce[:]), Answers: answers, Memory: memory,
	})
	if err != nil {
		return nil
	}
	if ar.Brief != ar.Question && ar.URL == "" {
		ar.URL = a.waitAtPage(ctx, ec, ar) // where the person reads the whole call
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalInput: approvalQuestion(ar, arguments)},
		RequestState:  state,
	}
}

// viaPage is r, approval_required for a call its client was not asked
// about, routed through the approval page: when an approver approved this
// very call (its caller, tool, version and arguments), it runs now, once,
// with the grant; otherwise it waits at the page, and r says where.
func (a *Approvals) viaPage(ctx context.Context, exec *runtime.Executor, ec runtime.ExecutionContext, call runtime.ToolCall, r runtime.ToolResult) runtime.ToolResult {
	if a.Pending == nil || a.PageURL == "" || r.Error == nil || r.Error.Approval == nil || ec.Grant != "" {
		return r
	}
	req := *r.Error.Approval
	key := approvalstore.Key(ec.Tenant, ec.Principal, req)
	if p, ok, err := a.Pending.TakeApproved(ctx, key); err == nil && ok {
		ec.Grant, call.ID = p.Grant, p.Request.CallID // the grant is bound to the call the approver saw
		return exec.Execute(ctx, ec, call)
	}
	if req.URL = a.waitAtPage(ctx, ec, req); req.URL == "" {
		return r // no address: the call stays approval_required
	}
	e := *r.Error
	e.Approval = &req
	r.Error = &e
	return r
}

// waitAtPage records req as waiting at the approval page, and returns its
// address there ("" without a page, or when the store refused it: one
// caller's bound, the store's).
func (a *Approvals) waitAtPage(ctx context.Context, ec runtime.ExecutionContext, req runtime.ApprovalRequest) string {
	if a.Pending == nil || a.PageURL == "" {
		return ""
	}
	now := time.Now()
	p, err := a.Pending.Pending(ctx, approvalstore.Approval{ID: newApprovalID(), Key: approvalstore.Key(ec.Tenant, ec.Principal, req), Request: req,
		Tenant: ec.Tenant, Principal: ec.Principal, Created: now, Expires: now.Add(a.ttl())})
	if err != nil {
		return ""
	}
	return a.PageURL + p.ID
}

// newApprovalID is an unguessable id for an approval's address.
func newApprovalID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// decide records an approver's decision on approval id, and for an
// approval the grant of exactly the call it shows; false when it was
// decided before.
func (a *Approvals) decide(ctx context.Context, id string, approve bool, approver string) (approvalstore.Approval, bool, error) {
	p, err := a.Pending.Approval(ctx, id)
	if err != nil {
		return approvalstore.Approval{}, false, err
	}
	decision, token := "denied", ""
	if approve {
		g := p.Request.Grant(p.Tenant, p.Principal, p.Expires)
		g.Nonce = "mcp-page-" + p.ID
		if token, err = grant.Issue(a.key, g); err != nil {
			return approvalstore.Approval{}, false, err
		}
		decision = "approved"
	}
	return a.Pending.Decide(ctx, id, decision, approver, token)
}

// approvalAnswer is what a retried call's approval state says: the call
// id it names, the grant a person's yes became ("" for a no, or no answer
// yet), whether a person answered, and the answers to the handler's own
// questions it carries.
type approvalAnswer struct {
	callID, grant string
	asked         bool
	answers       map[string]json.RawMessage
}

// answer reads a retried call's approval state. A state keel did not sign,
// expired, or made for another caller is an error: the call runs nothing,
// and so is an answer to keel's question with no state. Every answer
// spends its state in spent (the executor's replay store, shared by the
// replicas), a no as a yes: a state answered before, on any replica, is
// errAnswered.
func (a *Approvals) answer(ctx context.Context, req *mcp.CallToolRequest, ec runtime.ExecutionContext, spent runtime.ReplayStore) (approvalAnswer, error) {
	p := req.Params
	if p.RequestState == "" {
		if _, ok := p.InputResponses[approvalInput]; ok {
			return approvalAnswer{}, errState // an answer to a question keel did not ask
		}
		return approvalAnswer{}, nil
	}
	st, err := a.open(p.RequestState, time.Now())
	if err != nil || st.Tenant != ec.Tenant || st.Principal != ec.Principal {
		return approvalAnswer{}, errState
	}
	out := approvalAnswer{callID: st.CallID, answers: st.Answers}
	res, ok := p.InputResponses[approvalInput].(*mcp.ElicitResult)
	if !ok {
		return out, nil // not answered: ask again
	}
	out.asked = true
	if digest, err := grant.ArgumentsDigest(orEmpty(p.Arguments)); err != nil || digest != st.ArgumentsDigest || p.Name != st.Tool {
		return out, nil // an answer to another call's question: it spends nothing and grants nothing
	}
	if spent == nil {
		return out, nil // no store to spend the answer in: no grant
	}
	if err := sameMemory(ctx, spent, st.Memory); errors.Is(err, errLost) {
		return approvalAnswer{}, err
	} else if err != nil {
		return out, nil // the store cannot say: the call stays approval_required
	}
	first, err := spent.RedeemCall(ctx, answerDomain+st.Nonce, st.CallID, false, time.Unix(st.Expires, 0))
	if err != nil {
		return out, nil // the store cannot say: the call stays approval_required
	}
	if !first {
		return approvalAnswer{}, errAnswered
	}
	if res.Action != "accept" || res.Content["approve"] != true {
		return out, nil
	}
	out.grant, err = grant.Issue(a.key, grant.Grant{
		Tenant: st.Tenant, Principal: st.Principal, SetDigest: st.SetDigest, CallID: st.CallID,
		Tool: st.Tool, Version: st.ToolVersion, ArgumentsDigest: st.ArgumentsDigest,
		Expires: time.Unix(st.Expires, 0), Nonce: "mcp-approval-" + st.Nonce,
	})
	return out, err
}

// answerDomain keeps the record of an answered state apart from every
// grant's in the replay store.
const answerDomain = "keel/mcp-approval-answer/"

// errAnswered is a request state answered before, on any replica.
var errAnswered = errors.New("mcpserver: a request state answered before")

// answeredData is the data of the error that refuses a state answered
// before: the client asks anew by calling without it.
const answeredData = `{"reason":"request_state_answered"}`

// errLost is a request state made before the replay store lost its
// memory (a Redis restarted empty): its first answer may have been
// forgotten, so it is spent for good.
var errLost = errors.New("mcpserver: a request state made before the replay store lost its memory")

// lostData is the data of the error that refuses such a state: the client
// asks anew by calling without it.
const lostData = `{"reason":"request_state_lost"}`

// invalidState is the protocol error of a request state refused; one
// answered before, or made before the store lost its memory, says so in
// its data.
func invalidState(err error) error {
	e := protocolError(jsonrpc.CodeInvalidParams)
	switch {
	case errors.Is(err, errAnswered):
		e.Data = json.RawMessage(answeredData)
	case errors.Is(err, errLost):
		e.Data = json.RawMessage(lostData)
	}
	return e
}

// storeMemory names the replay store's memory (a store with Memory, as
// runtime.ReplayStore says); "" for a store that names none.
func storeMemory(ctx context.Context, store runtime.ReplayStore) (string, error) {
	ms, ok := store.(interface {
		Memory(ctx context.Context) (string, error)
	})
	if !ok {
		return "", nil
	}
	return ms.Memory(ctx)
}

// sameMemory checks that a state made under memory ("" for none) was made
// under the store's memory as it is: errLost when the store lost it since.
func sameMemory(ctx context.Context, store runtime.ReplayStore, memory string) error {
	if memory == "" {
		return nil
	}
	now, err := storeMemory(ctx, store)
	if err != nil {
		return err
	}
	if now != memory {
		return errLost
	}
	return nil
}
