//go:build !unix

package tooloutput

// processAlive cannot tell here, so every run directory is kept.
func processAlive(int) bool { return true }
