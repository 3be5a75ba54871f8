package redisapprovals_test

import (
	"log"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/redisapprovals"
	"github.com/keelgen/keel/runtime/grant"
)

// Approvals waiting on one replica, shown and decided on any: the
// approval page's store on Redis. (Not run by go test: it needs a Redis
// server; the package's tests start one.)
func Example() {
	key, err := os.ReadFile("grant.key") // at least 32 random bytes, shared by the replicas
	if err != nil {
		log.Fatal(err)
	}
	state, err := os.ReadFile("state.key")
	if err != nil {
		log.Fatal(err)
	}
	approvals, err := mcpserver.NewApprovals(grant.HMACKey(key), state)
	if err != nil {
		log.Fatal(err)
	}
	if approvals.Pending, err = redisapprovals.New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}), redisapprovals.Options{}); err != nil {
		log.Fatal(err)
	}
	_ = mcpserver.Options{Approvals: approvals} // with runtime.WithApprovals(grant.HMACKey(key), ...) on the executor
}
