// Package redisapprovals is an approvalstore.Store on Redis, for several
// replicas of one MCP server: a call that waits for an approver on one is
// shown, decided and handed to its call again on any. An approval is one
// hash (its record, the decision, the approver, the grant, whether its
// call ran), which Redis forgets when it expires; a call's key names its
// latest approval; sorted sets hold the approvals waiting: all of them (for
// the bound), each tenant's (what the page lists) and each caller's (for
// the bound on one caller, approvalstore.MaxPerCaller). Every change
// is one Lua script, so two replicas never both decide one approval or
// both hand its grant to a call. Every key shares one hash tag, so the
// scripts run on a cluster too. It lives in its own package so that
// mcpserver keeps no Redis dependency.
package redisapprovals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keelgen/keel/mcpserver/approvalstore"
)

// Defaults of Options.
const (
	DefaultPrefix  = "keel:{approvals}:"
	DefaultTimeout = 2 * time.Second
	// DefaultMaxWaiting bounds the approvals waiting at once; past it a
	// call stays approval_required without an address, rather than fill
	// Redis.
	DefaultMaxWaiting = 1 << 16
)

// Options configure a Store.
type Options struct {
	// Prefix is put before every key (default DefaultPrefix). It holds a
	// hash tag ({...}), so that every key is on one cluster slot.
	Prefix string
	// Timeout bounds one operation (default DefaultTimeout).
	Timeout time.Duration
	// MaxWaiting bounds the approvals waiting at once (default
	// DefaultMaxWaiting).
	MaxWaiting int
	// MaxPerCaller bounds the approvals one caller (tenant and principal)
	// has waiting at once (default approvalstore.MaxPerCaller).
	MaxPerCaller int
}

// Store is an approvalstore.Store backed by Redis.
type Store struct {
	client       redis.UniversalClient
	prefix       string
	timeout      time.Duration
	maxWaiting   int
	maxPerCaller int
}

var _ approvalstore.Store = (*Store)(nil)

// New returns a store on client.
func New(client redis.UniversalClient, opts Options) (*Store, error) {
	if client == nil {
		return nil, errors.New("redisapprovals: the client is nil")
	}
	if opts.Timeout < 0 || opts.MaxWaiting < 0 || opts.MaxPerCaller < 0 {
		return nil, errors.New("redisapprovals: the timeout and the waiting bounds may not be negative")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if open := strings.IndexByte(opts.Prefix, '{'); open < 0 || !strings.Contains(opts.Prefix[open:], "}") {
		return nil, fmt.Errorf("redisapprovals: the prefix %q holds no hash tag ({...}): the scripts touch several keys, which must share a cluster slot", opts.Prefix)
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxWaiting == 0 {
		opts.MaxWaiting = DefaultMaxWaiting
	}
	if opts.MaxPerCaller == 0 {
		opts.MaxPerCaller = approvalstore.MaxPerCaller
	}
	return &Store{client: client, prefix: opts.Prefix, timeout: opts.Timeout, maxWaiting: opts.MaxWaiting, maxPerCaller: opts.MaxPerCaller}, nil
}

func (s *Store) approvalKey(id string) string { return s.prefix + "a:" + id }
func (s *Store) callKey(key string) string    { return s.prefix + "k:" + key }
func (s *Store) waitingKey() string           { return s.prefix + "waiting" }

// tenantKey and callerKey are the indexes of one tenant's and one caller's
// waiting approvals.
func (s *Store) tenantKey(tenant string) string { return s.prefix + "t:" + tenant }
func (s *Store) callerKey(tenant, principal string) string {
	return s.prefix + "c:" + approvalstore.Caller(tenant, principal)
}

// errFull is the store's answer when MaxWaiting approvals wait.
var errFull = errors.New("redisapprovals: as many approvals wait as the store allows")

// pending records the approval ARGV[1] (its record ARGV[2], expiring at
// ARGV[3], Unix ms; its question ARGV[7], which the record's JSON leaves
// out) for the call KEYS[1], unless an undecided one waits for that call
// already: the id of the one that waits. It indexes it in the sorted sets
// of every waiting approval (KEYS[3]), of its tenant's (KEYS[4]) and of its
// caller's (KEYS[5]), whose names its hash keeps for decide. false when
// ARGV[6] approvals wait already, "!caller" when ARGV[8] of its caller's do
// (ARGV[4] is now; ARGV[5] the prefix).
var pending = redis.NewScript(`
local id = redis.call('GET', KEYS[1])
if id and redis.call('HGET', ARGV[5] .. 'a:' .. id, 'decision') == '' then return id end
for i = 3, 5 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[4]) end
if redis.call('ZCARD', KEYS[5]) >= tonumber(ARGV[8]) then return '!caller' end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) then return false end
redis.call('HSET', KEYS[2], 'record', ARGV[2], 'question', ARGV[7], 'decision', '', 'approver', '', 'grant', '', 'used', '0', 'tenant', KEYS[4], 'caller', KEYS[5])
redis.call('PEXPIREAT', KEYS[2], ARGV[3])
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[3])
for i = 3, 5 do
  redis.call('ZADD', KEYS[i], ARGV[3], ARGV[1])
  if i > 3 and redis.call('PEXPIRETIME', KEYS[i]) < tonumber(ARGV[3]) then redis.call('PEXPIREAT', KEYS[i], ARGV[3]) end
end
return ARGV[1]
`)

// Pending records p, or returns the approval that waits for p's call.
func (s *Store) Pending(ctx context.Context, p approvalstore.Approval) (approvalstore.Approval, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	rec := p
	rec.Decision, rec.Approver, rec.Grant, rec.Used = "", "", "", false
	b, err := json.Marshal(rec)
	if err != nil {
		return approvalstore.Approval{}, err
	}
	keys := []string{s.callKey(p.Key), s.approvalKey(p.ID), s.waitingKey(), s.tenantKey(p.Tenant), s.callerKey(p.Tenant, p.Principal)}
	id, err := pending.Run(ctx, s.client, keys,
		p.ID, b, p.Expires.UnixMilli(), time.Now().UnixMilli(), s.prefix, s.maxWaiting, p.Request.Question, s.maxPerCaller).Text()
	switch {
	case errors.Is(err, redis.Nil):
		return approvalstore.Approval{}, errFull
	case err == nil && id == "!caller":
		return approvalstore.Approval{}, approvalstore.ErrCallerFull
	case err != nil:
		return approvalstore.Approval{}, fmt.Errorf("redisapprovals: pending: %w", err)
	case id == p.ID:
		return rec, nil
	}
	return s.read(ctx, id)
}

// Approval returns approval id, or approvalstore.ErrNoApproval.
func (s *Store) Approval(ctx context.Context, id string) (approvalstore.Approval, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.read(ctx, id)
}

func (s *Store) read(ctx context.Context, id string) (approvalstore.Approval, error) {
	h, err := s.client.HGetAll(ctx, s.approvalKey(id)).Result()
	if err != nil {
		return approvalstore.Approval{}, fmt.Errorf("redisapprovals: read: %w", err)
	}
	if len(h) == 0 {
		return approvalstore.Approval{}, approvalstore.ErrNoApproval
	}
	var a approvalstore.Approval
	if err := json.Unmarshal([]byte(h["record"]), &a); err != nil {
		return approvalstore.Approval{}, fmt.Errorf("redisapprovals: the approval %q is not an approval record: %w", id, err)
	}
	if !time.Now().Before(a.Expires) {
		return approvalstore.Approval{}, approvalstore.ErrNoApproval
	}
	a.Request.Question = h["question"]
	a.Decision, a.Approver, a.Grant, a.Used = h["decision"], h["approver"], h["grant"], h["used"] == "1"
	return a, nil
}

// decide records a decision on KEYS[1] once: 0 when there is no such
// approval, 1 when it was decided before, 2 when this decided it.
var decide = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HGET', KEYS[1], 'decision') ~= '' then return 1 end
redis.call('HSET', KEYS[1], 'decision', ARGV[1], 'approver', ARGV[2], 'grant', ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[4])
for _, index in ipairs(redis.call('HMGET', KEYS[1], 'tenant', 'caller')) do
  if index then redis.call('ZREM', index, ARGV[4]) end
end
return 2
`)

// Decide records decision on approval id once, on any replica.
func (s *Store) Decide(ctx context.Context, id, decision, approver, grant string) (approvalstore.Approval, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	n, err := decide.Run(ctx, s.client, []string{s.approvalKey(id), s.waitingKey()}, decision, approver, grant, id).Int()
	if err != nil {
		return approvalstore.Approval{}, false, fmt.Errorf("redisapprovals: decide: %w", err)
	}
	if n == 0 {
		return approvalstore.Approval{}, false, approvalstore.ErrNoApproval
	}
	a, err := s.read(ctx, id)
	return a, n == 2 && err == nil, err
}

// take marks the approved, unused approval of the call KEYS[1] used and
// returns its id; false when there is none (ARGV[1] is the prefix).
var take = redis.NewScript(`
local id = redis.call('GET', KEYS[1])
if not id then return false end
local a = ARGV[1] .. 'a:' .. id
if redis.call('HGET', a, 'decision') ~= 'approved' or redis.call('HGET', a, 'used') ~= '0' then return false end
redis.call('HSET', a, 'used', '1')
return id
`)

// TakeApproved hands out the approved approval of key once, on any
// replica.
func (s *Store) TakeApproved(ctx context.Context, key string) (approvalstore.Approval, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	id, err := take.Run(ctx, s.client, []string{s.callKey(key)}, s.prefix).Text()
	switch {
	case errors.Is(err, redis.Nil):
		return approvalstore.Approval{}, false, nil
	case err != nil:
		return approvalstore.Approval{}, false, fmt.Errorf("redisapprovals: take: %w", err)
	}
	a, err := s.read(ctx, id)
	if err != nil {
		return approvalstore.Approval{}, false, err
	}
	return a, true, nil
}

// Waiting lists the undecided, unexpired approvals of tenant's callers,
// oldest first, from the tenant's index.
func (s *Store) Waiting(ctx context.Context, tenant string, max int) ([]approvalstore.Approval, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	ids, err := s.client.ZRangeArgs(ctx, redis.ZRangeArgs{Key: s.tenantKey(tenant), ByScore: true,
		Start: fmt.Sprint(time.Now().UnixMilli()), Stop: "+inf", Count: int64(max)}).Result()
	if err != nil {
		return nil, fmt.Errorf("redisapprovals: waiting: %w", err)
	}
	out := []approvalstore.Approval{}
	for _, id := range ids {
		a, err := s.read(ctx, id)
		if errors.Is(err, approvalstore.ErrNoApproval) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if a.Decision == "" {
			out = append(out, a)
		}
	}
	return out, nil
}
