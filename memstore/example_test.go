package memstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/keelgen/keel/memstore"
)

// A grant's nonce is redeemed once: the executor (runtime.WithApprovals)
// asks the replay store, and a second presentation of the same grant is
// refused. One process's memory serves one replica; redisreplay serves
// several.
func ExampleReplayStore() {
	store := memstore.NewReplayStore()
	expires := time.Now().Add(time.Minute)
	first, _ := store.Redeem(context.Background(), "grant-nonce-7", expires)
	again, _ := store.Redeem(context.Background(), "grant-nonce-7", expires)
	fmt.Println(first, again)
	// Output:
	// true false
}
