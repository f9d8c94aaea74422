package tradekit_test

import (
	"os/exec"
	"strings"
	"testing"
)

// pureEngines are the packages that must work with no database, no
// network and no logging. The design (docs/design.md, "Pure engines"):
// pure engines import no database package, no `net/http` and no `log` at
// all, and a test in the repository enforces it. This is that test.
var pureEngines = []string{
	"github.com/tradekit/tradekit/indicators",
	"github.com/tradekit/tradekit/indicators/formula",
	"github.com/tradekit/tradekit/calendar",
	"github.com/tradekit/tradekit/ohlcv",
	"github.com/tradekit/tradekit/profiles",
	"github.com/tradekit/tradekit/brokers",
	"github.com/tradekit/tradekit/backtest",
}

// forbidden reports whether a pure engine may not depend on the package
// path. database/sql/driver is allowed: it holds only the interfaces
// (driver.Valuer) that shopspring/decimal and google/uuid implement.
func forbidden(path string) bool {
	switch path {
	case "database/sql", "net/http", "log", "log/slog":
		return true
	}
	for _, prefix := range []string{
		"github.com/uptrace/bun", // bun, its dialects and drivers
		"modernc.org/sqlite",
		"github.com/mattn/go-sqlite3",
		"github.com/jackc/",
		"github.com/lib/pq",
		"github.com/tradekit/tradekit/internal/database",
	} {
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

// TestPureEnginesArePure checks the whole dependency closure of each pure
// engine (go list -deps) for database, net/http and log packages.
func TestPureEnginesArePure(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	for _, pkg := range pureEngines {
		out, err := exec.Command(goTool, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 2 {
			t.Fatalf("go list -deps %s listed %d packages", pkg, len(deps))
		}
		for _, d := range deps {
			if forbidden(d) {
				t.Errorf("%s depends on %s (go list -deps %s)", pkg, d, pkg)
			}
		}
	}
}

// TestForbidden checks the rule itself, so that a typo cannot make the
// purity test pass vacuously.
func TestForbidden(t *testing.T) {
	for _, p := range []string{"database/sql", "net/http", "log", "log/slog", "github.com/uptrace/bun",
		"github.com/jackc/pgx/v5/stdlib", "modernc.org/sqlite", "github.com/tradekit/tradekit/internal/database"} {
		if !forbidden(p) {
			t.Errorf("forbidden(%q) = false", p)
		}
	}
	for _, p := range []string{"database/sql/driver", "net/url", "github.com/shopspring/decimal", "gonum.org/v1/gonum/stat"} {
		if forbidden(p) {
			t.Errorf("forbidden(%q) = true", p)
		}
	}
}
