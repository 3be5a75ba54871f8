// Package ask lets a handler ask its caller's client for what it needs while
// it runs: a person's answer to a form (Elicit), a completion from the
// client's model (Sample), or the client's roots (Roots).
//
// A call that asks runs in rounds. In the first, each ask finds no answer:
// it records its request and returns ErrAsked, which the handler returns
// (wrapped or not), and the call's result is input_required with every
// request the handler made. The caller's door puts them to the client (MCP:
// an InputRequiredResult, SEP-2322), and the call runs again from the start
// with the answers; each ask then returns its answer, read and checked like
// arguments are. A handler that asks therefore asks before it changes
// anything, and asks the same questions, under the same keys, in every
// round: it is run again, not resumed.
//
// An ask whose kind the client did not declare returns ErrCannotAsk, and a
// handler that returns it ends the call input_unavailable. A handler may
// check first with Accepts.
package ask

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
)

// Request is one input request: an MCP client request the caller's client
// answers, keyed in the call's result by the key the handler gave it.
type Request struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// The requests a handler can make.
const (
	MethodElicit = "elicitation/create"
	MethodSample = "sampling/createMessage"
	MethodRoots  = "roots/list"
)

// Kinds says which requests a caller's client can answer.
type Kinds uint8

// KindOf is the kind of request of a method, 0 for none of them.
func KindOf(method string) Kinds {
	switch method {
	case MethodElicit:
		return Elicitation
	case MethodSample:
		return Sampling
	case MethodRoots:
		return Roots
	}
	return 0
}

const (
	Elicitation Kinds = 1 << iota // a form a person fills (elicitation/create)
	Sampling                      // a completion from the client's model (sampling/createMessage)
	Roots                         // the client's roots (roots/list)
)

// Accepts returns k: a Kinds is an Accepter.
func (k Kinds) Accepts() Kinds { return k }

// Accepter says which requests a caller's client can answer, asked only
// when a handler asks (a door may read the client's capabilities then).
type Accepter interface{ Accepts() Kinds }

// ErrAsked is what an ask returns before its answer came: the handler
// returns it, and the call is input_required.
var ErrAsked = errors.New("ask: the call needs answers from the client; return this error")

// ErrCannotAsk is what an ask returns when the client cannot answer its
// kind: a handler that returns it ends the call input_unavailable, whose
// input names the requests the client could not answer.
var ErrCannotAsk = errors.New("ask: the client cannot answer this kind of request")

// ErrDeclined is what Elicit returns when the person declined or cancelled.
var ErrDeclined = errors.New("ask: the person did not answer")

// Call is a handler's call as ask sees it: the answers its caller gave and
// what its client can answer, and where the requests that have no answer
// go. The executor's handler context is one, under CallKey.
type Call interface {
	Answer(key string) (json.RawMessage, bool)
	Accepts() Kinds
	Ask(key string, r Request)
}

// CallKey is the context key under which a handler's context holds its
// Call.
type CallKey struct{}

// Accepts reports whether the client of ctx's call can answer requests of
// kind k.
func Accepts(ctx context.Context, k Kinds) bool {
	c, ok := ctx.Value(CallKey{}).(Call)
	return ok && c.Accepts()&k == k
}

// errKey is a key that keel keeps for its own questions.
var errKey = errors.New(`ask: a key is a non-empty name that does not start with "keel/"`)

// answer is the answer to key in ctx's call, or the request recorded and
// ErrAsked, or ErrCannotAsk.
func answer(ctx context.Context, key string, kind Kinds, r func() Request) (json.RawMessage, error) {
	if key == "" || strings.HasPrefix(key, "keel/") {
		return nil, errKey
	}
	c, ok := ctx.Value(CallKey{}).(Call)
	if !ok {
		return nil, ErrCannotAsk
	}
	if a, ok := c.Answer(key); ok {
		return a, nil
	}
	if c.Accepts()&kind == 0 {
		c.Ask(key, r()) // what it would have asked: the door names the capability it lacks
		return nil, ErrCannotAsk
	}
	c.Ask(key, r())
	return nil, ErrAsked
}

// again records key's request once more: its answer did not read, and the
// client is asked anew.
func again(ctx context.Context, key string, r Request) error {
	ctx.Value(CallKey{}).(Call).Ask(key, r)
	return ErrAsked
}
