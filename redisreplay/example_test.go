package redisreplay_test

import (
	"log"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/keelgen/keel/redisreplay"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
)

// A grant used once across every replica: each replica's executor checks
// grants against one Redis. (Not run by go test: it needs a Redis server;
// the package's tests start one.)
func Example() {
	secret, err := os.ReadFile("grant.key") // at least 32 random bytes, shared by the approvers
	if err != nil {
		log.Fatal(err)
	}
	store, err := redisreplay.New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}), redisreplay.Options{})
	if err != nil {
		log.Fatal(err)
	}
	approvals := runtime.WithApprovals(grant.HMACKey(secret), store)
	_ = approvals // runtime.NewExecutor(set, approvals), or generated.NewExecutor(approvals)
}
