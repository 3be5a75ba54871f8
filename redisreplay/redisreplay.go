// Package redisreplay is a runtime.ReplayStore on Redis, for several
// replicas of one harness: a grant is used up once across all of them.
// Each redeem is one atomic SET NX with the grant's expiry, so the marker
// lives exactly as long as the grant could be presented. A store that does
// not answer in time, or answers an error, refuses the grant: the call
// stays approval_required. It lives in its own package so that runtime
// keeps no Redis dependency.
package redisreplay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults of Options.
const (
	DefaultPrefix  = "keel:grant:"
	DefaultTimeout = time.Second
)

// Options configure a Store.
type Options struct {
	// Prefix is put before each nonce to make its key (default DefaultPrefix).
	Prefix string
	// Timeout bounds one redeem (default DefaultTimeout); past it the grant
	// is refused.
	Timeout time.Duration
}

// Store is a runtime.ReplayStore backed by Redis.
type Store struct {
	client  redis.Cmdable
	prefix  string
	timeout time.Duration
}

// New returns a store on client (a *redis.Client, *redis.ClusterClient or
// any redis.Cmdable).
func New(client redis.Cmdable, opts Options) (*Store, error) {
	if client == nil {
		return nil, errors.New("redisreplay: the client is nil")
	}
	if opts.Timeout < 0 {
		return nil, errors.New("redisreplay: the timeout may not be negative")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	return &Store{client: client, prefix: opts.Prefix, timeout: opts.Timeout}, nil
}

// Redeem marks nonce used until expires, atomically: true the first time
// across every replica that shares the Redis, false after. An error (Redis
// down, a timeout) means the grant must be refused.
func (s *Store) Redeem(ctx context.Context, nonce string, expires time.Time) (bool, error) {
	ttl := time.Until(expires).Truncate(time.Millisecond)
	if ttl <= 0 {
		return false, nil // expired: the executor refuses it before asking
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	// The client may not honour the context (go-redis does only with
	// ContextTimeoutEnabled), so the deadline is kept here: a late answer is
	// dropped, and the grant refused.
	answer := make(chan setResult, 1)
	go func() {
		ok, err := s.client.SetNX(ctx, s.prefix+nonce, 1, ttl).Result()
		answer <- setResult{ok, err}
	}()
	select {
	case a := <-answer:
		if a.err != nil {
			return false, fmt.Errorf("redisreplay: %w", a.err)
		}
		return a.ok, nil
	case <-ctx.Done():
		return false, fmt.Errorf("redisreplay: no answer: %w", context.Cause(ctx))
	}
}

type setResult struct {
	ok  bool
	err error
}
