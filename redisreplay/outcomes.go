package redisreplay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keelgen/keel/runtime"
)

// The store is also a runtime.OutcomeStore: what each write call did, by
// idempotency key, shared by every replica. A key is the prefix,
// "outcome:" and the executor's key (hex); its hash holds the claim's
// token (t), the arguments' digest (d) and, once the call ended, its
// result (r), and Redis forgets it at its lease or its keep. Each step is
// one script, so two replicas never both claim a key.
func (s *Store) outcomeKey(key string) string { return s.prefix + "outcome:" + key }

// claimScript stores a claim unless the key holds one (or a result); with
// takeover, a running claim of the same digest is replaced. It returns
// nothing when it stored the claim, else what the key holds: token,
// digest, result, milliseconds to live, whether there is a result.
var claimScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 't', 'd', 'r')
if cur[1] then
  if ARGV[4] ~= '1' or cur[3] or cur[2] ~= ARGV[2] then
    return {cur[1], cur[2], cur[3] or '', redis.call('PTTL', KEYS[1]), cur[3] and 1 or 0}
  end
  redis.call('DEL', KEYS[1])
end
redis.call('HSET', KEYS[1], 't', ARGV[1], 'd', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return false
`)

// finishScript ends the claim of a token: keeps the result for its
// milliseconds, or clears the key; a key that is not that claim's is left.
var finishScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 't') ~= ARGV[1] or redis.call('HEXISTS', KEYS[1], 'r') == 1 then
  return 0
end
if ARGV[2] == '0' then
  redis.call('DEL', KEYS[1])
  return 1
end
redis.call('HSET', KEYS[1], 'r', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`)

// Claim stores claim under key unless the key holds a claim or a result
// (runtime.OutcomeStore). A claim that Redis stored after the store gave
// up waiting holds the key until its lease ends: the call was refused, and
// its retries are call_in_progress until then.
func (s *Store) Claim(ctx context.Context, key string, claim runtime.Outcome, takeover bool) (*runtime.Outcome, error) {
	ttl := ttlMillis(claim.Until)
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	flag := "0"
	if takeover {
		flag = "1"
	}
	v, err := claimScript.Run(ctx, s.client, []string{s.outcomeKey(key)}, claim.Token, claim.Digest, ttl, flag).Slice()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("redisreplay: claim: %w", err)
	}
	if len(v) != 5 {
		return nil, fmt.Errorf("redisreplay: claim: an answer of %d parts", len(v))
	}
	token, _ := v[0].(string)
	digest, _ := v[1].(string)
	result, _ := v[2].(string)
	pttl, _ := v[3].(int64)
	held := &runtime.Outcome{Token: token, Digest: digest, Until: time.Now().Add(time.Duration(pttl) * time.Millisecond)}
	if has, _ := v[4].(int64); has == 1 {
		held.Result = []byte(result)
	}
	return held, nil
}

// Finish records result under key for its time, or clears the key for a
// nil result, when the key holds token's claim (runtime.OutcomeStore).
func (s *Store) Finish(ctx context.Context, key, token string, result []byte, until time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	keep, ttl := "1", ttlMillis(until)
	if result == nil {
		keep = "0"
	}
	if err := finishScript.Run(ctx, s.client, []string{s.outcomeKey(key)}, token, keep, result, ttl).Err(); err != nil {
		return fmt.Errorf("redisreplay: finish: %w", err)
	}
	return nil
}

// ttlMillis is the milliseconds to until, at least one: a time already
// past lives for a moment, as a key Redis forgets at once.
func ttlMillis(until time.Time) int64 { return max(time.Until(until).Milliseconds(), 1) }
