package runtime

import (
	"context"
	"fmt"
	"time"
)

// RateLimit is a token bucket: Calls per Per on average, and up to Burst
// at once (default Calls).
type RateLimit struct {
	Calls int
	Per   time.Duration
	Burst int
}

func (l RateLimit) check() error {
	if l.Calls <= 0 || l.Per <= 0 || l.Burst < 0 {
		return fmt.Errorf("the rate limit %d per %v (burst %d) needs a positive count and period", l.Calls, l.Per, l.Burst)
	}
	return nil
}

func (l RateLimit) burst() int {
	if l.Burst == 0 {
		return l.Calls
	}
	return l.Burst
}

// RateLimiter takes one call from the bucket of key under limit: true, or
// false and how long until the bucket has one again. A limiter that cannot
// decide (its store is down, full, or slow) returns an error, and the call
// is refused. memstore's is one process's; redisrate's is shared
// by replicas.
type RateLimiter interface {
	Take(ctx context.Context, key string, limit RateLimit) (ok bool, retryAfter time.Duration, err error)
}

// RateLimits are the executor's limits on how often one caller (tenant and
// principal) may call: every call of a registered tool counts against
// PerCaller, and a call of a tool named in PerTool against that limit too.
type RateLimits struct {
	Limiter   RateLimiter
	PerCaller RateLimit
	PerTool   map[string]RateLimit
}

// WithRateLimits refuses a call over a caller's limits as
// rate_limit_exceeded, after its tool and scopes are checked and before
// its arguments are read, with the time to wait in the message; the audit
// records it. A nil limiter, a limit of zero calls or period, or a PerTool
// name the set lacks fails NewExecutor.
func WithRateLimits(l RateLimits) Option {
	return func(e *Executor) {
		if l.Limiter == nil {
			e.refuse("WithRateLimits", "the limiter is nil")
			return
		}
		if err := l.PerCaller.check(); err != nil {
			e.refuse("WithRateLimits", "PerCaller: %v", err)
			return
		}
		for name, lim := range l.PerTool {
			if err := lim.check(); err != nil {
				e.refuse("WithRateLimits", "PerTool[%q]: %v", name, err)
				return
			}
		}
		e.rates = &l
	}
}

// checkRateTools refuses PerTool names the set lacks: a typo would leave a
// tool unlimited.
func (e *Executor) checkRateTools() error {
	if e.rates == nil {
		return nil
	}
	for name := range e.rates.PerTool {
		if e.set.Lookup(name) == nil {
			return fmt.Errorf("WithRateLimits: PerTool names %q, which the tool set lacks", name)
		}
	}
	return nil
}

// rateKey is the bucket of one caller, or of one caller's calls of a tool;
// lengths keep two callers' parts from running together alike.
func rateKey(ec ExecutionContext, tool string) string {
	return fmt.Sprintf("%d:%s|%d:%s|%s", len(ec.Tenant), ec.Tenant, len(ec.Principal), ec.Principal, tool)
}

const msgRateUnchecked = "The rate limit could not be checked; try again in 1 s."

// uncheckedRetry is the wait a call whose limit could not be checked is
// told, in seconds: a store that did not answer may answer the next try.
const uncheckedRetry = 1

// take asks the limiter, which may not panic the call through: a panic is
// an error.
func take(ctx context.Context, l RateLimiter, key string, lim RateLimit) (wait time.Duration, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the rate limiter panicked: %v", p)
		}
	}()
	ok, retry, err := l.Take(ctx, key, lim)
	switch {
	case err != nil:
		return 0, err
	case ok:
		return 0, nil
	default:
		return max(retry, time.Millisecond), nil
	}
}
