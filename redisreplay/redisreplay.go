// Package redisreplay is a runtime.ReplayStore on Redis, for several
// replicas of one harness: a grant is used up once across all of them.
// Each redeem is one atomic SET NX that lives until the grant's expiry plus
// a skew margin, so the marker outlives the grant on every replica whose
// clock is off by less than the margin. A store that does not answer in
// time, or answers an error, refuses the grant: the call stays
// approval_required; if Redis then answers that it did record the marker,
// the store removes it again, so the refused grant is not spent. The
// store is also a runtime.OutcomeStore (outcomes.go): what each write call
// did, so a retry on any replica gets it instead of running again. It
// lives in its own package so that runtime keeps no Redis dependency.
package redisreplay

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keelgen/keel/internal/redismemory"
)

// Defaults of Options.
const (
	DefaultPrefix  = "keel:grant:"
	DefaultTimeout = time.Second
	// DefaultSkewMargin is how long a marker outlives its grant's expiry,
	// on the clock of the replica that wrote it: it covers any two
	// replicas whose clocks differ by less.
	DefaultSkewMargin = 5 * time.Minute
)

// Options configure a Store.
type Options struct {
	// Prefix is put before each nonce to make its key (default DefaultPrefix).
	Prefix string
	// Timeout bounds one redeem (default DefaultTimeout); past it the grant
	// is refused.
	Timeout time.Duration
	// SkewMargin is how long a marker outlives its grant (default
	// DefaultSkewMargin; zero means the default, never no margin).
	SkewMargin time.Duration
}

// Store is a runtime.ReplayStore backed by Redis.
type Store struct {
	client  redis.Cmdable
	prefix  string
	timeout time.Duration
	margin  time.Duration
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
	if opts.SkewMargin < 0 {
		return nil, errors.New("redisreplay: the skew margin may not be negative")
	}
	if opts.SkewMargin == 0 {
		opts.SkewMargin = DefaultSkewMargin
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	return &Store{client: client, prefix: opts.Prefix, timeout: opts.Timeout, margin: opts.SkewMargin}, nil
}

// Redeem marks nonce used until expires (and the skew margin after),
// atomically: true the first time across every replica that shares the
// Redis, false after. An error (Redis down, a timeout) means the grant must
// be refused.
func (s *Store) Redeem(ctx context.Context, nonce string, expires time.Time) (bool, error) {
	return s.redeem(ctx, nonce, "1", false, expires)
}

// RedeemCall is Redeem that records callID as the call that redeemed the
// grant: with retry (a durable engine's later try of that call), a nonce
// already recorded for callID is redeemed again, on any replica; never one
// recorded for another call, or by Redeem.
func (s *Store) RedeemCall(ctx context.Context, nonce, callID string, retry bool, expires time.Time) (bool, error) {
	return s.redeem(ctx, nonce, "call:"+callID, retry, expires)
}

func (s *Store) redeem(ctx context.Context, nonce, marker string, retry bool, expires time.Time) (bool, error) {
	until := time.Until(expires)
	if until <= 0 {
		return false, nil // expired: the executor refuses it before asking
	}
	ttl := (until + s.margin).Truncate(time.Millisecond)
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	// The client may not honour the context (go-redis does only with
	// ContextTimeoutEnabled), so the deadline is kept here: a late answer is
	// dropped, and the grant refused. The SET runs on a context of its own,
	// so a late answer still arrives and a marker it recorded is removed:
	// the call was refused, so the grant was not used. Only a marker this
	// very SET NX recorded is removed; on an error nothing is, since the
	// marker may be another replica's. A retry that finds the marker its
	// call recorded wrote nothing, so there is nothing to remove.
	var state atomic.Int32 // 0 waiting, 1 answered in time, 2 given up
	answer := make(chan setResult, 1)
	key := s.prefix + nonce
	go func() {
		setCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), s.timeout+lateAnswer)
		defer stop()
		ok, err := s.client.SetNX(setCtx, key, marker, ttl).Result()
		set := ok && err == nil
		if !ok && err == nil && retry {
			// The marker never changes once set, so reading it after the
			// SET NX is as good as one atomic step; one that expired in
			// between reads as redis.Nil, and the grant is refused.
			var by string
			switch by, err = s.client.Get(setCtx, key).Result(); {
			case errors.Is(err, redis.Nil):
				err = nil
			case err == nil:
				ok = by == marker
			}
		}
		if state.CompareAndSwap(0, 1) {
			answer <- setResult{ok, err}
			return
		}
		if set {
			s.client.Del(setCtx, key)
		}
	}()
	select {
	case a := <-answer:
		if a.err != nil {
			return false, fmt.Errorf("redisreplay: %w", a.err)
		}
		return a.ok, nil
	case <-ctx.Done():
		if !state.CompareAndSwap(0, 2) {
			a := <-answer // answered just in time
			if a.err != nil {
				return false, fmt.Errorf("redisreplay: %w", a.err)
			}
			return a.ok, nil
		}
		return false, fmt.Errorf("redisreplay: no answer: %w", context.Cause(ctx))
	}
}

// Memory names what the store remembers (as runtime.ReplayStore says): a random
// name kept under the key Prefix+"memory", written by the first replica
// that asks and read by the rest, with no expiry. A Redis that restarted
// empty holds none, so the next ask writes a new one, and every grant and
// request state issued under the old name is refused: their markers may
// be gone. With persistence that keeps every write (appendfsync always)
// the name, and the markers, survive a restart.
func (s *Store) Memory(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	name, err := redismemory.Name(ctx, s.client, s.prefix+"memory")
	if err != nil {
		return "", fmt.Errorf("redisreplay: %w", err)
	}
	return name, nil
}

// lateAnswer is how long past the timeout a redeem still waits for Redis
// in the background, to remove a marker of a grant it refused.
const lateAnswer = 10 * time.Second

type setResult struct {
	ok  bool
	err error
}

// The store is also an mcpserver.TaintStore: which conversations received
// text from outside, shared by every replica, each mark a key that Redis
// forgets at its ttl. A conversation's key is the prefix, "taint:" and its
// name (no nonce has a colon).
func (s *Store) taintKey(conversation string) string { return s.prefix + "taint:" + conversation }

// Taint marks conversation for ttl.
func (s *Store) Taint(ctx context.Context, conversation string, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.client.Set(ctx, s.taintKey(conversation), "1", ttl).Err(); err != nil {
		return fmt.Errorf("redisreplay: taint: %w", err)
	}
	return nil
}

// Tainted reports whether conversation is marked; an error is to be read
// as marked.
func (s *Store) Tainted(ctx context.Context, conversation string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	n, err := s.client.Exists(ctx, s.taintKey(conversation)).Result()
	if err != nil {
		return true, fmt.Errorf("redisreplay: tainted: %w", err)
	}
	return n == 1, nil
}

// Forget drops conversation's mark.
func (s *Store) Forget(ctx context.Context, conversation string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.client.Del(ctx, s.taintKey(conversation)).Err(); err != nil {
		return fmt.Errorf("redisreplay: forget: %w", err)
	}
	return nil
}
