//go:build unix

package mcp

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// groupProc is one stdio server process, the leader of its own process
// group so that everything it spawns can be signalled at once.
type groupProc struct {
	cmd *exec.Cmd
}

// isolate puts the command in a new process group; on Linux the kernel
// also kills the leader if we die without cleaning up (a backstop: only
// Close reaches grandchildren).
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(cmd.SysProcAttr)
}

func (p *groupProc) pid() int {
	if p == nil || p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// signal sends sig to the whole group. A group that is already gone is
// not an error.
func (p *groupProc) signal(sig syscall.Signal) error {
	pid := p.pid()
	if pid <= 0 {
		return nil
	}
	if err := syscall.Kill(-pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// terminate asks the group to stop with SIGTERM, gives the leader grace to
// exit (exited closes when it has), then SIGKILLs the group regardless, so
// that a grandchild ignoring SIGTERM or outliving its parent cannot stay.
func (p *groupProc) terminate(exited <-chan struct{}, grace time.Duration) {
	_ = p.signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
	}
	_ = p.signal(syscall.SIGKILL)
}
