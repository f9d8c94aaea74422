//go:build unix

package dbtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// processUser is the user the PostgreSQL processes run as; the zero value
// is the current user.
type processUser struct {
	cred *syscall.Credential
}

// serverUser returns the user to run PostgreSQL as, and gives it dir.
// PostgreSQL refuses to run as root, so as root it is the postgres user.
func serverUser(dir string) (processUser, error) {
	if os.Geteuid() != 0 {
		return processUser{}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return processUser{}, fmt.Errorf("dbtest: running as root needs a 'postgres' user to run the server: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return processUser{}, err
	}
	return processUser{&syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}, nil
}

// apply makes cmd run as u.
func (u processUser) apply(cmd *exec.Cmd) {
	if u.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.cred}
	}
}

// own gives u the file at path.
func (u processUser) own(path string) error {
	if u.cred == nil {
		return nil
	}
	return os.Chown(path, int(u.cred.Uid), int(u.cred.Gid))
}
