package main

import (
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// watchParent arranges for serve to stop, as on SIGTERM, when the process
// that started it exits (see [exitWithParent]): always with
// --exit-with-parent, never with --exit-with-parent=false, and without
// the flag when that process is `go run`, whose user stops the server by
// stopping go run (with its PID, which is all `go run … &` shows). Any
// other parent, such as a shell, nohup or a service manager, leaves serve
// running after it exits unless asked. on is the flag's value in fs.
func watchParent(fs *flagSet, on bool, log *slog.Logger) error {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "exit-with-parent" })
	ppid := os.Getppid()
	why := "--exit-with-parent"
	if !set {
		on, why = startedByGoRun(ppid), "started by go run"
	}
	if !on {
		return nil
	}
	if err := exitWithParent(ppid); err != nil {
		if !set {
			log.Warn("serve cannot arrange to exit with go run: stop it with its own PID", "err", err)
			return nil
		}
		return fail("serve: --exit-with-parent", err)
	}
	log.Info("serve exits when its parent process does", "parent_pid", ppid, "why", why)
	return nil
}

// startedByGoRun reports whether the process ppid, this one's parent, is
// `go run`, as /proc shows it; false where there is no /proc.
func startedByGoRun(ppid int) bool {
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/cmdline")
	return err == nil && isGoRun(cmdline)
}

// isGoRun reports whether cmdline, the arguments of a process separated
// by NUL bytes as /proc/PID/cmdline holds them, is a `go run` command
// line: a program file named go, its -C DIR flag if given, then run.
func isGoRun(cmdline []byte) bool {
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if len(args) < 2 || filepath.Base(args[0]) != "go" {
		return false
	}
	rest := args[1:]
	switch {
	case rest[0] == "-C" || rest[0] == "--C":
		rest = rest[min(2, len(rest)):]
	case strings.HasPrefix(rest[0], "-C=") || strings.HasPrefix(rest[0], "--C="):
		rest = rest[1:]
	}
	return len(rest) > 0 && rest[0] == "run"
}
