// Package redistasks is a taskstore.Store and an mcpserver.CancelSignals
// on Redis, for several replicas of one MCP server: a task made on one is
// read, answered and cancelled on any, and a client's cancel of a call
// reaches the replica where the call runs. Each task is one key holding its record as JSON, which
// Redis forgets at the task's expiry. A create first takes a place among
// its owner's unexpired tasks (a sorted set per owner, bounded by
// Options.MaxTasksPerOwner), then is one SET NX, acknowledged before the
// server answers with the task; an update is an optimistic
// transaction (WATCH, read, MULTI SET), retried when another replica
// changed the task in between. It lives in its own package so that
// mcpserver keeps no Redis dependency, and imports only the task store's
// contract (mcpserver/taskstore), not the server.
package redistasks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keelgen/keel/internal/redismemory"
	"github.com/keelgen/keel/mcpserver/taskstore"
)

// Defaults of Options.
const (
	DefaultPrefix  = "keel:task:"
	DefaultTimeout = 2 * time.Second
	// DefaultRetries is how many times an update is tried when other
	// replicas keep changing the task under it (each failed try is another
	// replica's update that went through).
	DefaultRetries = 64
	// DefaultCancelTTL is how long a cancel is kept for the replica whose
	// call it names to find (it looks every quarter second).
	DefaultCancelTTL = time.Minute
)

// Options configure a Store.
type Options struct {
	// Prefix is put before each task id to make its key (default
	// DefaultPrefix).
	Prefix string
	// Timeout bounds one operation (default DefaultTimeout).
	Timeout time.Duration
	// Retries bounds the tries of one update (default DefaultRetries).
	Retries int
	// MaxTasksPerOwner bounds one owner's unexpired tasks (default
	// taskstore.DefaultMaxPerOwner); past it a create is
	// taskstore.ErrTooManyTasks.
	MaxTasksPerOwner int
}

// Store is a taskstore.Store backed by Redis; it is an
// mcpserver.CancelSignals too (its test checks both).
type Store struct {
	client   redis.UniversalClient
	prefix   string
	timeout  time.Duration
	retries  int
	maxOwner int
}

var _ taskstore.MemoryStore = (*Store)(nil)

// Memory names what the store holds (taskstore.MemoryStore): a random name
// kept under the key Prefix+"memory", written by the first replica that
// asks and read by the rest, with no expiry. A Redis that restarted empty
// holds none, so the next ask writes a new one: a task made under the old
// name and not found reads failed, its outcome unknown, not "unknown task".
func (s *Store) Memory(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	name, err := redismemory.Name(ctx, s.client, s.prefix+"memory")
	if err != nil {
		return "", fmt.Errorf("redistasks: %w", err)
	}
	return name, nil
}

// New returns a store on client (a *redis.Client, *redis.ClusterClient or
// any redis.UniversalClient: an update needs WATCH).
func New(client redis.UniversalClient, opts Options) (*Store, error) {
	if client == nil {
		return nil, errors.New("redistasks: the client is nil")
	}
	if opts.Timeout < 0 || opts.Retries < 0 || opts.MaxTasksPerOwner < 0 {
		return nil, errors.New("redistasks: the timeout, retries and tasks per owner may not be negative")
	}
	if opts.MaxTasksPerOwner == 0 {
		opts.MaxTasksPerOwner = taskstore.DefaultMaxPerOwner
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Retries == 0 {
		opts.Retries = DefaultRetries
	}
	return &Store{client: client, prefix: opts.Prefix, timeout: opts.Timeout, retries: opts.Retries, maxOwner: opts.MaxTasksPerOwner}, nil
}

// CreateTask stores t until t.Expires; a task of the same id is an error,
// and so, taskstore.ErrTooManyTasks, is one whose owner holds
// MaxTasksPerOwner unexpired tasks.
func (s *Store) CreateTask(ctx context.Context, t taskstore.Record) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	owner := s.ownerKey(t.Owner)
	placed, err := reserve.Run(ctx, s.client, []string{owner}, time.Now().UnixMilli(), s.maxOwner, t.ID, t.Expires.UnixMilli()).Int()
	switch {
	case err != nil:
		return fmt.Errorf("redistasks: create: %w", err)
	case placed == 0:
		return taskstore.ErrTooManyTasks
	case placed < 0:
		return fmt.Errorf("redistasks: a task with the id %q exists", t.ID)
	}
	ok, err := s.client.SetArgs(ctx, s.prefix+t.ID, b, redis.SetArgs{Mode: "NX", ExpireAt: t.Expires}).Result()
	if err != nil || ok != "OK" {
		s.client.ZRem(context.WithoutCancel(ctx), owner, t.ID) // give the place back
	}
	switch {
	case errors.Is(err, redis.Nil):
		return fmt.Errorf("redistasks: a task with the id %q exists", t.ID)
	case err != nil:
		return fmt.Errorf("redistasks: create: %w", err)
	case ok != "OK":
		return fmt.Errorf("redistasks: create: Redis answered %q", ok)
	}
	return nil
}

// reserve takes a place for task ARGV[3], expiring at ARGV[4] (Unix ms),
// among the unexpired tasks of the owner whose sorted set is KEYS[1], at
// most ARGV[2] of them at ARGV[1] (Unix ms): 1 when placed, 0 when the
// owner has no place left, -1 when the id is already there. The set lives
// until its last task expires. One key, so it runs on a cluster too; the
// task's own key is set after it.
var reserve = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[3]) then return -1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[3])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return 1
`)

// ownerKey is the Redis key of an owner's tasks: the owner hashed, so
// its bytes bound nothing in Redis.
func (s *Store) ownerKey(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return s.prefix + "owner:" + hex.EncodeToString(sum[:])
}

// Task returns the task id, or taskstore.ErrNoTask.
func (s *Store) Task(ctx context.Context, id string) (taskstore.Record, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.read(ctx, s.client, id)
}

func (s *Store) read(ctx context.Context, c redis.Cmdable, id string) (taskstore.Record, error) {
	b, err := c.Get(ctx, s.prefix+id).Bytes()
	if errors.Is(err, redis.Nil) {
		return taskstore.Record{}, taskstore.ErrNoTask
	}
	if err != nil {
		return taskstore.Record{}, fmt.Errorf("redistasks: read: %w", err)
	}
	var t taskstore.Record
	if err := json.Unmarshal(b, &t); err != nil {
		return taskstore.Record{}, fmt.Errorf("redistasks: the task %q is not a task record: %w", id, err)
	}
	if !time.Now().Before(t.Expires) { // ended early (withdrawn), its key not yet gone
		return taskstore.Record{}, taskstore.ErrNoTask
	}
	return t, nil
}

// UpdateTask applies change to the task id in one optimistic transaction,
// tried again when another replica changed the task first; the key keeps
// its expiry, unless the change moved Expires earlier: the key and the
// task's place among its owner's then expire at the new time.
func (s *Store) UpdateTask(ctx context.Context, id string, change func(*taskstore.Record) bool) (taskstore.Record, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	key := s.prefix + id
	var out taskstore.Record
	for range s.retries {
		err := s.client.Watch(ctx, func(tx *redis.Tx) error {
			t, err := s.read(ctx, tx, id)
			if err != nil {
				return err
			}
			before := t
			if !change(&t) {
				out = before
				return nil
			}
			t.ID = id
			b, err := json.Marshal(t)
			if err != nil {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				if t.Expires.Before(before.Expires) {
					// The key lingers a moment past an Expires already gone (a
					// past expiry is no SET option); Task reads Expires too.
					p.SetArgs(ctx, key, b, redis.SetArgs{ExpireAt: later(t.Expires, time.Now().Add(time.Second))})
					p.ZAddXX(ctx, s.ownerKey(t.Owner), redis.Z{Score: float64(t.Expires.UnixMilli()), Member: id})
					return nil
				}
				p.SetArgs(ctx, key, b, redis.SetArgs{KeepTTL: true})
				return nil
			})
			if err == nil {
				out = t
			}
			return err
		}, key)
		if errors.Is(err, redis.TxFailedErr) {
			// Another replica changed it, so one update went through: read
			// it again after a short random wait, so that two replicas
			// updating one task in step do not keep colliding.
			if err := sleep(ctx, time.Duration(rand.Int64N(int64(retryWait)))); err != nil {
				return taskstore.Record{}, fmt.Errorf("redistasks: update: %w", err)
			}
			continue
		}
		return out, err
	}
	return taskstore.Record{}, fmt.Errorf("redistasks: the task %q kept changing under %d updates", id, s.retries)
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// retryWait bounds the random wait before an update is tried again.
const retryWait = time.Millisecond

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cancelKey is the Redis key of a cancel: the caller's key hashed, so a
// client's request id bounds nothing in Redis.
func (s *Store) cancelKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return s.prefix + "cancel:" + hex.EncodeToString(sum[:])
}

// SignalCancel records that the calls named key were cancelled at at, for
// DefaultCancelTTL.
func (s *Store) SignalCancel(ctx context.Context, key string, at time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.client.Set(ctx, s.cancelKey(key), at.UnixNano(), DefaultCancelTTL).Err(); err != nil {
		return fmt.Errorf("redistasks: signal a cancel: %w", err)
	}
	return nil
}

// CancelSignalled returns when the calls named key were last cancelled, or
// zero.
func (s *Store) CancelSignalled(ctx context.Context, key string) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	n, err := s.client.Get(ctx, s.cancelKey(key)).Int64()
	switch {
	case errors.Is(err, redis.Nil):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("redistasks: read a cancel: %w", err)
	}
	return time.Unix(0, n), nil
}
