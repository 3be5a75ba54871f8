// Package redisrate is a runtime.RateLimiter on Redis, for several replicas
// of one harness: a caller's limit holds across all of them. Each take is
// one atomic script run (GCRA, github.com/go-redis/redis_rate). A Redis that
// does not answer in time, or answers an error, refuses the call, as
// redisreplay refuses a grant: a limiter that cannot decide denies. It
// lives in its own package so that runtime keeps no Redis dependency.
package redisrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/keelgen/keel/runtime"
)

// Defaults of Options.
const (
	DefaultPrefix  = "keel:rate:"
	DefaultTimeout = time.Second
)

// Options configure a Limiter.
type Options struct {
	// Prefix is put before each caller's key (default DefaultPrefix).
	Prefix string
	// Timeout bounds one take (default DefaultTimeout); past it the call is
	// refused.
	Timeout time.Duration
}

// Limiter is a runtime.RateLimiter backed by Redis.
type Limiter struct {
	gcra    *redis_rate.Limiter
	prefix  string
	timeout time.Duration
}

// client is what redis_rate runs its script with: a *redis.Client,
// *redis.ClusterClient or *redis.Ring.
type client interface {
	redis.Scripter
	Del(ctx context.Context, keys ...string) *redis.IntCmd
}

// New returns a limiter on c.
func New(c client, opts Options) (*Limiter, error) {
	if c == nil {
		return nil, errors.New("redisrate: the client is nil")
	}
	if opts.Timeout < 0 {
		return nil, errors.New("redisrate: the timeout may not be negative")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	return &Limiter{gcra: redis_rate.NewLimiter(c), prefix: opts.Prefix, timeout: opts.Timeout}, nil
}

// Take takes one call from key's bucket.
func (l *Limiter) Take(ctx context.Context, key string, limit runtime.RateLimit) (bool, time.Duration, error) {
	if limit.Calls <= 0 || limit.Per <= 0 || limit.Burst < 0 {
		return false, 0, fmt.Errorf("redisrate: the limit %d per %v needs a positive count and period", limit.Calls, limit.Per)
	}
	burst := limit.Burst
	if burst == 0 {
		burst = limit.Calls
	}
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	// The client may not honour the context (go-redis does only with
	// ContextTimeoutEnabled), so the deadline is kept here: a late answer
	// is dropped and the call refused. A token it took stays taken, which
	// errs on the side of the limit.
	type answer struct {
		res *redis_rate.Result
		err error
	}
	done := make(chan answer, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil { // a reply of another shape: the library type-asserts it
				done <- answer{err: fmt.Errorf("an unreadable reply: %v", p)}
			}
		}()
		res, err := l.gcra.Allow(context.WithoutCancel(ctx), l.prefix+key, redis_rate.Limit{Rate: limit.Calls, Burst: burst, Period: limit.Per})
		done <- answer{res, err}
	}()
	select {
	case a := <-done:
		if a.err != nil {
			return false, 0, fmt.Errorf("redisrate: %w", a.err)
		}
		if a.res.Allowed > 0 {
			return true, 0, nil
		}
		return false, a.res.RetryAfter, nil
	case <-ctx.Done():
		return false, 0, fmt.Errorf("redisrate: no answer: %w", context.Cause(ctx))
	}
}
