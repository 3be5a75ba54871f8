package grant_test

import (
	"fmt"
	"time"

	"github.com/keelgen/keel/runtime/grant"
)

// A person approved one exact call: the approver issues a grant bound to
// it, and the executor (runtime.WithApprovals, same key) checks it; here
// Parse reads it back. Another key reads nothing.
func Example() {
	key := grant.HMACKey([]byte("an example secret of at least 32 bytes!"))
	digest, err := grant.ArgumentsDigest([]byte(`{"order_id": "ORD-7", "amount": 45}`))
	if err != nil {
		panic(err)
	}
	token, err := grant.Issue(key, grant.Grant{
		Tenant: "acme", Principal: "alice", CallID: "call-7", Tool: "refund", Version: "1.0.0",
		ArgumentsDigest: digest, Expires: time.Now().Add(10 * time.Minute), Nonce: "n-7",
	})
	if err != nil {
		panic(err)
	}
	g, err := grant.Parse(key, token)
	fmt.Println(g.Tool, g.CallID, g.ArgumentsDigest == digest, err)
	_, err = grant.Parse(grant.HMACKey([]byte("another secret, also of 32 bytes or more")), token)
	fmt.Println(err != nil)
	// Output:
	// refund call-7 true <nil>
	// true
}
