package database

import (
	"io/fs"
	"strings"
	"testing"
)

// TestMigrationVersionsAreUnique checks that no two migrations of a
// dialect share a version (the file name's part before "_"): bun's
// migrate keys migrations by it, so of two files with one version only
// the last runs and the other is silently skipped. It also checks that
// both dialects have the same migrations.
func TestMigrationVersionsAreUnique(t *testing.T) {
	t.Parallel()
	names := map[string][]string{}
	for _, dialect := range []string{"sqlite", "postgres"} {
		files, err := fs.Glob(migrationFiles, "migrations/"+dialect+"/*.sql")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]string{}
		for _, f := range files {
			base := f[strings.LastIndex(f, "/")+1:]
			version, _, _ := strings.Cut(base, "_")
			kind := ".up.sql"
			if strings.HasSuffix(base, ".down.sql") {
				kind = ".down.sql"
			}
			if other, ok := seen[version+kind]; ok {
				t.Errorf("%s: %s and %s share the version %s", dialect, other, base, version)
			}
			seen[version+kind] = base
			names[dialect] = append(names[dialect], base)
		}
	}
	if a, b := strings.Join(names["sqlite"], "\n"), strings.Join(names["postgres"], "\n"); a != b {
		t.Errorf("the dialects' migrations differ:\nsqlite:\n%s\npostgres:\n%s", a, b)
	}
}
