package mcp

import (
	"syscall"
	"unsafe"
)

func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// Values from <sys/wait.h>; the syscall package does not name them all.
const (
	pPID    = 1
	wExited = 0x4
	wNoWait = 0x1000000
)

// waitExit returns when process pid has exited, without reaping it: the
// stdio transport owns cmd.Wait, and we only need to learn of the death as
// it happens rather than at the next health probe.
func waitExit(pid int) {
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), wExited|wNoWait, 0, 0)
		if errno != syscall.EINTR {
			return
		}
	}
}

const canWaitExit = true
