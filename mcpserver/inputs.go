package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/internal/execinfo"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/grant"
)

// A handler's own input requests (package ask) go to the client as an
// InputRequiredResult (SEP-2322) whose request state carries the call it
// belongs to, who made it, and the answers of the rounds before; the
// client sends the call again with it and this round's answers, and the
// handler runs again with them all. The state is signed, bound to the call
// and its caller, expires, and is spent on its first use.

// inputs signs the request state of handlers' input requests.
type inputs struct {
	secret []byte
	ttl    time.Duration
	spent  runtime.ReplayStore // where a state's first use is recorded: the executor's, or this process's
}

// inputStatePrefix tells an input state from an approval's.
const inputStatePrefix = "i1."

// inputDomain keeps an input state's signature from meaning anything else.
const inputDomain = "keel/mcp-input-state/v1\x00"

// DefaultInputTTL is how long a handler's input request stays answerable.
const DefaultInputTTL = 10 * time.Minute

// inputState is what an input round's request state carries.
type inputState struct {
	CallID          string                     `json:"call_id"`
	Tool            string                     `json:"tool"`
	ArgumentsDigest string                     `json:"arguments_digest"`
	Tenant          string                     `json:"tenant"`
	Principal       string                     `json:"principal"`
	Expires         int64                      `json:"expires"`
	Nonce           string                     `json:"nonce"`
	Answers         map[string]json.RawMessage `json:"answers,omitempty"`
	Memory          string                     `json:"memory,omitempty"` // the replay store's, when made (Memory, as runtime.ReplayStore says)
}

// newInputs signs with secret, or, without one, the approvals' state
// secret, or else a random one of this process (states then read only on
// the replica that made them).
func newInputs(secret []byte, a *Approvals, exec *runtime.Executor) *inputs {
	switch {
	case len(secret) > 0:
		secret = append([]byte(nil), secret...)
	case a != nil:
		secret = a.secret
	default:
		secret = make([]byte, 32)
		rand.Read(secret)
	}
	spent, ok := execinfo.Replay(exec).(runtime.ReplayStore)
	if !ok {
		spent = memstore.NewReplayStore()
	}
	return &inputs{secret: secret, ttl: DefaultInputTTL, spent: spent}
}

func (in *inputs) states() signedState {
	return signedState{secret: in.secret, domain: inputDomain, prefix: inputStatePrefix}
}

// open reads an input state keel signed and that has not expired.
func (in *inputs) open(s string, now time.Time) (inputState, error) {
	var st inputState
	if err := in.states().open(s, &st); err != nil || now.Unix() >= st.Expires {
		return inputState{}, errState
	}
	return st, nil
}

// isInputState reports whether a request state is an input round's.
func isInputState(s string) bool { return strings.HasPrefix(s, inputStatePrefix) }

// resume reads an input round's state for call: the call it belongs to
// (its id), and the answers of the rounds before. A state keel did not
// sign, expired, made for another caller or call is errState; one used
// before, on any replica sharing spent, is errAnswered.
func (in *inputs) resume(ctx context.Context, state string, ec runtime.ExecutionContext, call runtime.ToolCall, spent runtime.ReplayStore) (inputState, error) {
	st, err := in.open(state, time.Now())
	if err != nil || st.Tenant != ec.Tenant || st.Principal != ec.Principal || st.Tool != call.Name {
		return inputState{}, errState
	}
	if digest, err := grant.ArgumentsDigest(orEmpty(call.Arguments)); err != nil || digest != st.ArgumentsDigest {
		return inputState{}, errState
	}
	if err := sameMemory(ctx, spent, st.Memory); errors.Is(err, errLost) {
		return inputState{}, err
	} else if err != nil {
		return inputState{}, errState // the store cannot say: nothing runs
	}
	first, err := spent.RedeemCall(ctx, inputDomain+st.Nonce, st.CallID, false, time.Unix(st.Expires, 0))
	if err != nil {
		return inputState{}, errState // the store cannot say: nothing runs
	}
	if !first {
		return inputState{}, errAnswered
	}
	return st, nil
}

// required is the InputRequiredResult of a call whose handler asked: its
// requests, and a state carrying the answers it has, less the ones asked
// again.
func (in *inputs) required(ctx context.Context, ec runtime.ExecutionContext, call runtime.ToolCall, r runtime.ToolResult) (*mcp.CallToolResult, error) {
	requests := make(mcp.InputRequestMap, len(r.Error.Input))
	for key, req := range r.Error.Input {
		ir, err := inputRequest(req)
		if err != nil {
			return nil, err
		}
		requests[key] = ir
	}
	digest, err := grant.ArgumentsDigest(orEmpty(call.Arguments))
	if err != nil {
		return nil, err
	}
	var nonce [16]byte
	rand.Read(nonce[:])
	memory, err := storeMemory(ctx, in.spent)
	if err != nil {
		return nil, err // the store cannot say what it remembers: no state it could not check
	}
	st := inputState{CallID: call.ID, Tool: call.Name, ArgumentsDigest: digest, Tenant: ec.Tenant, Principal: ec.Principal,
		Expires: time.Now().Add(in.ttl).Unix(), Nonce: hex.EncodeToString(nonce[:]), Memory: memory}
	for key, a := range call.Answers {
		if _, again := r.Error.Input[key]; !again {
			if st.Answers == nil {
				st.Answers = map[string]json.RawMessage{}
			}
			st.Answers[key] = a
		}
	}
	state, err := in.states().seal(st)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{InputRequests: requests, RequestState: state}, nil
}

// errInputRequest is a handler's request the protocol cannot carry.
var errInputRequest = errors.New("mcpserver: an input request of a method MCP does not define")

// inputRequest is a handler's request as the SDK carries it.
func inputRequest(r ask.Request) (mcp.InputRequest, error) {
	var ir mcp.InputRequest
	switch r.Method {
	case ask.MethodElicit:
		ir = new(mcp.ElicitParams)
	case ask.MethodSample:
		ir = new(mcp.CreateMessageParams)
	case ask.MethodRoots:
		ir = new(mcp.ListRootsParams)
	default:
		return nil, errInputRequest
	}
	if err := json.Unmarshal(r.Params, ir); err != nil {
		return nil, err
	}
	return ir, nil
}

// answersOf are the client's answers in p for a handler, by key: every one
// but keel's own (keel/approval), each as the JSON the client sent it.
func answersOf(p *mcp.CallToolParamsRaw, earlier map[string]json.RawMessage) map[string]json.RawMessage {
	if len(p.InputResponses) == 0 && len(earlier) == 0 {
		return nil
	}
	answers := make(map[string]json.RawMessage, len(earlier)+len(p.InputResponses))
	for key, a := range earlier {
		answers[key] = a
	}
	for key, a := range p.InputResponses {
		if strings.HasPrefix(key, "keel/") {
			continue
		}
		if b, err := json.Marshal(a); err == nil {
			answers[key] = b
		}
	}
	return answers
}

// clientKinds says which requests the client of a call can answer, read
// from its capabilities only when a handler asks. A client of a revision
// before 2026-07-28 is asked over its session; one without (Stateless)
// declared none keel knows of.
type clientKinds struct{ req *mcp.CallToolRequest }

func (c clientKinds) Accepts() ask.Kinds { return accepts(c.req) }

// accepts says which requests the client of req declared it answers.
func accepts(req *mcp.CallToolRequest) ask.Kinds {
	c := req.ClientCapabilities()
	if c == nil {
		return 0
	}
	var k ask.Kinds
	if c.Elicitation != nil && (c.Elicitation.Form != nil || c.Elicitation.URL == nil) && revisionOf(req).elicits() {
		k |= ask.Elicitation
	}
	if c.Sampling != nil {
		k |= ask.Sampling
	}
	if c.RootsV2 != nil {
		k |= ask.Roots
	}
	return k
}

// orEmpty is args as the executor reads absent arguments.
func orEmpty(args json.RawMessage) json.RawMessage {
	if t := strings.TrimSpace(string(args)); t == "" || t == "null" {
		return json.RawMessage(`{}`)
	}
	return args
}

// unavailable is the error of a call whose handler needs requests the
// client did not declare it answers: -32021, naming their capabilities.
func unavailable(r runtime.ToolResult) error {
	required := map[string]map[string]any{}
	for _, req := range r.Error.Input {
		switch ask.KindOf(req.Method) {
		case ask.Elicitation:
			required["elicitation"] = map[string]any{}
		case ask.Sampling:
			required["sampling"] = map[string]any{}
		case ask.Roots:
			required["roots"] = map[string]any{}
		}
	}
	return missingCapabilities(required)
}
