package dbtest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Server is a throwaway PostgreSQL server in a temporary directory,
// listening on a loopback port. Its zero value is not usable; see
// [StartServer].
type Server struct {
	bin  string // directory holding initdb, pg_ctl and postgres
	dir  string // the temporary directory: data/, the log and the socket
	port int
	proc processUser // whom the server runs as
	opts string      // further server options, appended to Start's
}

// StartServer initialises and starts a throwaway PostgreSQL server with
// fsync off (its data is not meant to survive). The caller must Close it.
func StartServer() (*Server, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(cmp.Or(serverParent(), tempDir), "tradekit-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir}
	if s.proc, err = serverUser(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if s.port, err = freePort(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.run("initdb", "-D", s.data(), "-U", "postgres", "--auth=trust",
		"--encoding=UTF8", "--no-locale", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// DSN returns the DSN of the named database on s.
func (s *Server) DSN(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, database)
}

// Start starts the server (again, after [Server.Stop]) and waits until it
// accepts connections.
func (s *Server) Start() error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off "+
		"-c synchronous_commit=off -c full_page_writes=off -c max_connections=300", s.port, s.dir)
	if s.opts != "" {
		opts += " " + s.opts
	}
	return s.run("pg_ctl", "start", "-w", "-t", "60", "-D", s.data(), "-l", filepath.Join(s.dir, "server.log"), "-o", opts)
}

// Stop stops the server, cutting open connections as an outage would
// (a fast shutdown: committed data survives).
func (s *Server) Stop() error {
	return s.run("pg_ctl", "stop", "-w", "-m", "fast", "-D", s.data())
}

// Close stops the server and removes its files.
func (s *Server) Close() {
	s.Stop()
	os.RemoveAll(s.dir)
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

func (s *Server) run(name string, args ...string) error {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	s.proc.apply(cmd)
	if err := cmd.Run(); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
		return fmt.Errorf("dbtest: %s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.Bytes(), log)
	}
	return nil
}

// findBinaries returns the directory of the newest PostgreSQL server
// binaries: Debian's /usr/lib/postgresql/N/bin, or the directory of initdb
// on PATH.
func findBinaries() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("dbtest: PostgreSQL server binaries (initdb, pg_ctl) not found")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
