package marketdata_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileLines is the most lines a non-test Go file of marketdata, or of
// a package under it, may have: a longer one holds more than one concern
// and is split by concern.
const maxFileLines = 600

// TestFileSizes checks that no non-test Go file under marketdata/ is
// longer than maxFileLines.
func TestFileSizes(t *testing.T) {
	t.Parallel()
	n := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		lines := bytes.Count(data, []byte{'\n'})
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		if lines > maxFileLines {
			t.Errorf("%s has %d lines, more than %d: split it by concern", filepath.Join("marketdata", path), lines, maxFileLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Fatalf("found only %d Go files under marketdata", n)
	}
}
