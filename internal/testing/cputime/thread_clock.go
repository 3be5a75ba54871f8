//go:build linux || darwin || freebsd || openbsd

package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

// thread reads the calling thread's CPU clock.
func thread() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic("cputime: the thread's CPU clock: " + err.Error())
	}
	return time.Duration(ts.Nano())
}
