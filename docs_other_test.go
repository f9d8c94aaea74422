//go:build !unix

package tradekit_test

import "os/exec"

// ownProcessGroup does nothing where there are no Unix process groups.
func ownProcessGroup(cmd *exec.Cmd) {}

// killProcessGroup kills cmd's process, where there are no Unix process
// groups to kill what it started.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
