// Package cputime measures the CPU time a piece of code costs, for the
// tests that compare the cost of two sizes of input (linear, not
// quadratic). On a shared machine another process delays a measured call
// but does not add to its CPU time, so a ratio of two measurements stays
// near the code's own where a ratio of wall-clock times strays.
package cputime

import (
	"runtime"
	"time"
)

// Of returns the CPU time f costs the thread that runs it. The goroutine is
// locked to its thread meanwhile, so the clock read before and after is the
// same thread's; f must do its work on the calling goroutine.
func Of(f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := thread()
	f()
	return thread() - start
}

// Fastest returns the least CPU time of n calls of f: noise only adds.
func Fastest(n int, f func()) time.Duration {
	best := time.Duration(1<<63 - 1)
	for range n {
		best = min(best, Of(f))
	}
	return best
}
