package tradekit_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docFiles returns README.md and docs/*.md, the pages a clone shows.
func docFiles(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		tb.Fatal(err)
	}
	return append([]string{"README.md"}, files...)
}

// TestDocsNoSharedLinks checks that no page links or points to
// ../shared/…, which lies outside the repository: a clone lacks it.
func TestDocsNoSharedLinks(t *testing.T) {
	t.Parallel()
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "../shared") {
				t.Errorf("%s:%d points outside the repository: %s", file, i+1, strings.TrimSpace(line))
			}
		}
	}
}

var (
	// shellUse matches a use of a shell variable: $NAME or ${NAME…}.
	shellUse = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)
	// shellAssign matches an assignment NAME=… at the start of a command.
	shellAssign = regexp.MustCompile(`(?:^|[\s;&|(])(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=`)
	// shellFor matches the variable of a for loop.
	shellFor = regexp.MustCompile(`\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b`)
)

// environment lists variables a shell or the reader's environment
// provides, which no page needs to assign.
var environment = []string{"HOME", "PATH", "PWD", "USER", "TMPDIR"}

// shellBlocks returns the lines of the ```sh blocks of src.
func shellBlocks(src string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(src, "\n") {
		switch {
		case !in && (strings.HasPrefix(line, "```sh") || strings.HasPrefix(line, "```bash")):
			in = true
		case in && strings.HasPrefix(line, "```"):
			in = false
		case in:
			out = append(out, line)
		}
	}
	return out
}

// assigned returns the variables that lines assign.
func assigned(lines []string) map[string]bool {
	set := map[string]bool{}
	for _, line := range lines {
		code, _, _ := strings.Cut(line, " #")
		for _, re := range []*regexp.Regexp{shellAssign, shellFor} {
			for _, m := range re.FindAllStringSubmatch(code, -1) {
				set[m[1]] = true
			}
		}
	}
	return set
}

// TestDocsShellVariables checks that every shell variable the ```sh
// blocks of README.md and docs/*.md use is assigned in a block of the
// same page or in README's (First calls sets KEY and H, which the other
// pages say they carry over), so each example runs as written. It is a
// heuristic: an assignment anywhere in the page counts, before or after.
func TestDocsShellVariables(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	fromReadme := assigned(shellBlocks(string(readme)))
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := shellBlocks(string(b))
		known := assigned(lines)
		for _, line := range lines {
			code, _, _ := strings.Cut(line, " #")
			for _, m := range shellUse.FindAllStringSubmatch(code, -1) {
				if v := m[1]; !known[v] && !fromReadme[v] && !slices.Contains(environment, v) {
					t.Errorf("%s uses $%s, which no example assigns: %s", file, v, strings.TrimSpace(line))
				}
			}
		}
	}
}

// TestShellHeuristics checks the patterns the docs tests rely on.
func TestShellHeuristics(t *testing.T) {
	t.Parallel()
	got := assigned([]string{`KEY=$(bin/tradekit keys create | tail -1)`, `for SYM in A B; do X=1; done`,
		`export TRADEKIT_DB=x.db`, `curl "$URL?a=b"   # not=an assignment`})
	for _, v := range []string{"KEY", "SYM", "X", "TRADEKIT_DB"} {
		if !got[v] {
			t.Errorf("assigned misses %s", v)
		}
	}
	if got["a"] || got["not"] {
		t.Errorf("assigned took a query or a comment for an assignment: %v", got)
	}
	if uses := shellUse.FindAllStringSubmatch(`curl "$H" ${ID}/x $1`, -1); len(uses) != 2 || uses[0][1] != "H" || uses[1][1] != "ID" {
		t.Errorf("uses %q", uses)
	}
}
