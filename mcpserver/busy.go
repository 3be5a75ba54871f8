package mcpserver

import (
	"sync"

	"github.com/keelgen/keel/runtime"
)

// Defaults of Options' caps on calls running at once.
const (
	// DefaultMaxCalls caps the tools/call requests running at once on a
	// server, every caller's together.
	DefaultMaxCalls = 1024
	// DefaultMaxCallsPerCaller caps those of one caller (tenant and
	// principal), so one caller cannot take every slot.
	DefaultMaxCallsPerCaller = 256
)

// busyRetry is the wait, in seconds, a call refused for the caps is told.
const busyRetry = 1

// calls counts the calls running, in all and per caller: a call past a cap
// is refused before it runs (rate_limit_exceeded, with a wait), and a
// slot is given back when its call ends.
type calls struct {
	max, perCaller int

	mu       sync.Mutex
	running  int
	byCaller map[string]int
}

func newCalls(max, perCaller int) *calls {
	if max <= 0 {
		max = DefaultMaxCalls
	}
	if perCaller <= 0 {
		perCaller = DefaultMaxCallsPerCaller
	}
	return &calls{max: max, perCaller: min(perCaller, max), byCaller: map[string]int{}}
}

// take takes a slot for a call of ec's caller; false when a cap is
// reached. The returned func gives it back.
func (c *calls) take(ec runtime.ExecutionContext) (release func(), ok bool) {
	who := lengthPrefixed(ec.Tenant) + ec.Principal
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running >= c.max || c.byCaller[who] >= c.perCaller {
		return nil, false
	}
	c.running++
	c.byCaller[who]++
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.running--
		if c.byCaller[who]--; c.byCaller[who] == 0 {
			delete(c.byCaller, who)
		}
	}, true
}
