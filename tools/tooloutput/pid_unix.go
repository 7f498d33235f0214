//go:build unix

package tooloutput

import (
	"errors"
	"syscall"
)

// processAlive reports whether pid is a running process. A process we may
// not signal (EPERM) is alive: only a definite "no such process" frees its
// directory.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || !errors.Is(err, syscall.ESRCH)
}
