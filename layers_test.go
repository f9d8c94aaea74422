package tradekit_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the module's import path.
const module = "github.com/tradekit/tradekit"

// importers lists, for the packages at the top of the layers, the only
// packages that may import them (docs/design.md, "Dependency
// direction"): the shell (server, dashboard) is imported only by what
// runs it, and copytrading, which sits above the broker and market-data
// packages, only by the shell and the program.
var importers = map[string][]string{
	"server":      {"cmd/tradekit"},
	"dashboard":   {"server", "cmd/tradekit"},
	"copytrading": {"server", "dashboard", "cmd/tradekit"},
}

// TestDependencyDirection checks the direct imports of every package of
// the module (tests aside) against importers, so that dependencies keep
// pointing one way: cmd → server → domain packages.
func TestDependencyDirection(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list imports: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		for _, imp := range fields[1:] {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			if allowed, restricted := importers[rel]; restricted && !slices.Contains(allowed, pkg) {
				t.Errorf("%s imports %s, which only %s may import: call down, not up (docs/design.md)",
					pkg, rel, strings.Join(allowed, ", "))
			}
		}
	}
}
