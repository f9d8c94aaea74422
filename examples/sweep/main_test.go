package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestDocumentedCommands runs the commands of the package comment.
func TestDocumentedCommands(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("generates the demo data set")
	}
	for _, args := range [][]string{
		nil,
		{"-index", "TKXGL25", "-fast", "5,10,20,50", "-slow", "100,200", "-max-positions", "10"},
	} {
		var out bytes.Buffer
		if err := run(args, &out); err != nil {
			t.Fatalf("run(%q): %v", args, err)
		}
		if lines := strings.Count(out.String(), "\n"); !strings.Contains(out.String(), "Sharpe") || lines < 6 {
			t.Errorf("run(%q):\n%s", args, out.String())
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-fast", "x"}, `-fast: "x" is not`},
		{[]string{"-fast", "200", "-slow", "100"}, "no combination"},
		{[]string{"-index", "NOPE"}, `no demo index "NOPE"`},
	} {
		if err := run(c.args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q): %v, want %q", c.args, err, c.want)
		}
	}
}
