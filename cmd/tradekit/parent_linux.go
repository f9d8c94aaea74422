//go:build linux

package main

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// exitWithParent asks the kernel to send this process SIGTERM when its
// parent process, ppid, exits (prctl PR_SET_PDEATHSIG), even when the
// parent is killed with SIGKILL: serve then stops as on any SIGTERM, its
// requests in flight finishing. If the parent has exited already, it
// sends the SIGTERM itself.
func exitWithParent(ppid int) error {
	errc := make(chan error, 1)
	go func() {
		// The kernel keeps the setting with the thread that asks for it
		// and forgets it when that thread exits: this goroutine holds its
		// thread for the life of the process.
		runtime.LockOSThread()
		errc <- unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGTERM), 0, 0, 0)
		select {}
	}()
	if err := <-errc; err != nil {
		return fmt.Errorf("prctl PR_SET_PDEATHSIG: %w", err)
	}
	if os.Getppid() != ppid {
		// The parent exited before the kernel was asked: no signal comes.
		return unix.Kill(os.Getpid(), unix.SIGTERM)
	}
	return nil
}
