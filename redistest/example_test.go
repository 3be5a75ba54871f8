package redistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/keelgen/keel/redisreplay"
	"github.com/keelgen/keel/redistest"
)

// A test of a store on a real redis-server: one per test, on a loopback
// port, stopped when the test ends; Pause, Resume, Kill and Restart inject
// the faults a deployment meets. (Compiled, not run, by go test: it is a
// test's body, and needs redis-server; the package's own tests run one.)
func Example() {
	testGrantsOnRedis := func(t *testing.T) {
		rdb := redistest.Start(t)
		store, err := redisreplay.New(rdb.Client(), redisreplay.Options{Timeout: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ctx, expires := context.Background(), time.Now().Add(time.Minute)
		if ok, err := store.Redeem(ctx, "nonce-1", expires); !ok || err != nil {
			t.Fatalf("the first redeem: %v %v", ok, err)
		}
		rdb.Pause() // SIGSTOP: the store times out, and a grant it cannot check is refused
		if ok, _ := store.Redeem(ctx, "nonce-2", expires); ok {
			t.Fatal("a grant redeemed while Redis could not answer")
		}
		rdb.Resume()
	}
	_ = testGrantsOnRedis // func TestGrantsOnRedis(t *testing.T) { ... }
}
