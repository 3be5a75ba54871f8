package redistasks_test

import (
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/redistasks"
)

// Tasks that any replica of an MCP server reads, answers and cancels, and
// cancels that reach the replica running the call. (Not run by go test: it
// needs a Redis server; the package's tests start one.)
func Example() {
	store, err := redistasks.New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}), redistasks.Options{})
	if err != nil {
		log.Fatal(err)
	}
	opts := mcpserver.Options{Tasks: &mcpserver.Tasks{Store: store}}
	http := mcpserver.HTTPOptions{Stateless: true, CancelSignals: store}
	_, _ = opts, http // mcpserver.HTTPHandler(mcpserver.New(exec, opts), http)
}
