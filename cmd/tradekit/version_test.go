package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionLine checks the line of `tradekit version` for builds that
// recorded everything, some things and nothing.
func TestVersionLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"a tagged module", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "8662874a1b2c3d4e5f60718293a4b5c6d7e8f901"}, {Key: "vcs.time", Value: "2026-12-09T10:00:00Z"},
			{Key: "vcs.modified", Value: "false"}}},
			true, "tradekit v1.4.0 (revision 8662874a1b2c, 2026-12-09T10:00:00Z)"},
		{"a modified clone", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "8662874a1b2c3d4e5f60718293a4b5c6d7e8f901"}, {Key: "vcs.modified", Value: "true"}}},
			true, "tradekit (devel) (revision 8662874a1b2c, modified)"},
		{"no VCS stamp", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "tradekit (devel) (revision (devel))"},
		{"no build info", nil, false, "tradekit (devel) (revision (devel))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionLine(tt.info, tt.ok); got != tt.want {
				t.Errorf("versionLine = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVersionCommand runs `tradekit version` and `tradekit --version`:
// one line on stdout, the line of this binary's build info.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	info, ok := debug.ReadBuildInfo()
	want := versionLine(info, ok) + "\n"
	for _, arg := range []string{"version", "--version", "-version"} {
		stdout, stderr, status := cliMain(t, nil, "", arg)
		if status != 0 || stdout != want || stderr != "" {
			t.Errorf("tradekit %s: status %d, stdout %q, stderr %q; want 0 and %q", arg, status, stdout, stderr, want)
		}
	}
	if !strings.HasPrefix(want, "tradekit ") {
		t.Errorf("version line %q", want)
	}
}

// TestUnknownCommand checks that an unknown command gets one line of
// error and a hint, not the whole usage.
func TestUnknownCommand(t *testing.T) {
	t.Parallel()
	stdout, stderr, status := cliMain(t, nil, "", "bogus")
	want := "tradekit: unknown command \"bogus\"; run 'tradekit help' for the list of commands\n"
	if status != 1 || stdout != "" || stderr != want {
		t.Errorf("tradekit bogus: status %d, stdout %q, stderr %q; want 1, nothing and %q", status, stdout, stderr, want)
	}
}
