package oidcverify_test

import (
	"context"
	"log"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/mcpserver/oidcverify"
)

// Bearer tokens from an OpenID provider, checked on every request of the
// server's Streamable HTTP. (Not run by go test: it needs the provider;
// the package's tests start one on loopback.)
func Example() {
	verify, err := oidcverify.New(context.Background(), oidcverify.Options{
		Issuer:   "https://login.example.com",
		Resource: "https://tools.example.com/mcp",
	})
	if err != nil {
		log.Fatal(err)
	}
	http := mcpserver.HTTPOptions{Verifier: verify}
	_ = http // mcpserver.HTTPHandler(server, http)
}
