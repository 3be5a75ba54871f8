// Package redismemory names what a Redis holds: a random name under one
// key, written by the first client that asks, read by the rest, never
// expiring. A Redis that restarted empty holds none, so the next ask
// writes a new one, and what was made under the old name is told apart.
// redisreplay and redistasks keep their names with it.
package redismemory

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/redis/go-redis/v9"
)

// Name returns the name kept under key, writing a new one when there is
// none.
func Name(ctx context.Context, c redis.Cmdable, key string) (string, error) {
	var fresh [16]byte
	rand.Read(fresh[:])
	if err := c.SetNX(ctx, key, hex.EncodeToString(fresh[:]), 0).Err(); err != nil {
		return "", err
	}
	return c.Get(ctx, key).Result()
}
