//go:build unix && !linux

package mcp

import "syscall"

func setPdeathsig(*syscall.SysProcAttr) {}

// waitExit is not available here: a dead server is found by the health
// probe or by the next call instead.
func waitExit(int) { select {} }

const canWaitExit = false
