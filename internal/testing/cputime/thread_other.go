//go:build !(linux || darwin || freebsd || openbsd)

package cputime

import "time"

var origin = time.Now()

// thread falls back to the wall clock where no thread CPU clock is read.
func thread() time.Duration { return time.Since(origin) }
