//go:build !linux

package main

import "errors"

// exitWithParent would make this process exit with its parent process,
// ppid; it is supported on Linux only, and returns an error elsewhere.
func exitWithParent(ppid int) error {
	return errors.New("supported on Linux only")
}
