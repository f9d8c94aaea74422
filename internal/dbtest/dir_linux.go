package dbtest

import (
	"os"
	"syscall"
)

// shm is Linux's shared-memory file system, a tmpfs on most systems.
const shm = "/dev/shm"

// serverParent returns the directory to make the throwaway server's
// directory in: /dev/shm when it has room, for the server's data need not
// survive and a memory file system spares the disk's latency (CREATE
// DATABASE … TEMPLATE, which every test pays, took 0.5–0.9 s on the
// project's virtual disk under load and a fraction of that in memory);
// otherwise "" (the caller's default directory for temporary files). A container's
// /dev/shm is often 64 MiB, too small for a package's run.
func serverParent() string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(shm, &st); err != nil {
		return ""
	}
	if uint64(st.Bavail)*uint64(st.Bsize) < 2<<30 {
		return ""
	}
	if fi, err := os.Stat(shm); err != nil || !fi.IsDir() || fi.Mode().Perm()&0o002 == 0 {
		return "" // not writable by everyone: perhaps not by us
	}
	return shm
}
