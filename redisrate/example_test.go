package redisrate_test

import (
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keelgen/keel/redisrate"
	"github.com/keelgen/keel/runtime"
)

// One caller's limit held across every replica of a harness: each replica
// makes its executor with a limiter on the same Redis. (Not run by go test:
// it needs a Redis server; the package's tests start one.)
func Example() {
	limiter, err := redisrate.New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}), redisrate.Options{})
	if err != nil {
		log.Fatal(err)
	}
	limits := runtime.WithRateLimits(runtime.RateLimits{
		Limiter:   limiter,
		PerCaller: runtime.RateLimit{Calls: 60, Per: time.Minute},
		PerTool:   map[string]runtime.RateLimit{"create_ticket": {Calls: 5, Per: time.Hour}},
	})
	_ = limits // runtime.NewExecutor(set, limits), or generated.NewExecutor(limits)
}
