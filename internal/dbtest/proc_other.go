//go:build !unix

package dbtest

import "os/exec"

// processUser is the user the PostgreSQL processes run as: the current
// one, on systems without Unix credentials.
type processUser struct{}

func serverUser(dir string) (processUser, error) { return processUser{}, nil }

func (processUser) apply(*exec.Cmd) {}

func (processUser) own(string) error { return nil }
