package main

import (
	"strings"
	"testing"
)

func TestIsGoRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"go", "run", "./cmd/tradekit", "serve"}, true},
		{[]string{"/usr/local/go/bin/go", "run", "-race", "./cmd/tradekit", "serve"}, true},
		{[]string{"go", "-C", "/src/tradekit", "run", "./cmd/tradekit", "serve"}, true},
		{[]string{"go", "-C=/src/tradekit", "run", "./cmd/tradekit"}, true},
		{[]string{"go", "test", "./cmd/tradekit"}, false},
		{[]string{"go", "-C", "run"}, false}, // -C's directory is named run
		{[]string{"go"}, false},
		{[]string{"-bash"}, false},
		{[]string{"/bin/sh", "-c", "go run ./cmd/tradekit serve"}, false},
		{[]string{"gopls", "run"}, false},
		{[]string{"/usr/bin/systemd", "--user"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		// /proc/PID/cmdline ends every argument with a NUL byte.
		cmdline := []byte(strings.Join(tt.args, "\x00") + "\x00")
		if got := isGoRun(cmdline); got != tt.want {
			t.Errorf("isGoRun(%q) = %t, want %t", tt.args, got, tt.want)
		}
	}
}
