//go:build tools

// Package tools pins keelgen, so go generate builds the generator at the
// version go.mod names. Modules on Go 1.24 or later can use the tool
// directive instead (go get -tool github.com/keelgen/keel/cmd/keelgen) and
// run it as "go tool keelgen"; keel's own go.mod does both.
package tools

import _ "github.com/keelgen/keel/cmd/keelgen"
