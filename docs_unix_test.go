//go:build unix

package tradekit_test

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes cmd the leader of a process group of its own, so
// that killProcessGroup reaches what it starts in the background.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup kills whatever is left of the process group that cmd,
// once run, led.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
