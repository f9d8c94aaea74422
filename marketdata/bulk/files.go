package bulk

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/marketdata"
)

// sourceFile is one input file of a bulk import.
type sourceFile struct {
	path string
	size int64
	// symbol is the symbol the file name gives (SYMBOL.csv[.gz]), used when
	// the file has no symbol or ticker column.
	symbol string
	// stop asks the reader to stop: the file failed.
	stop atomic.Bool
	// layout is the file's header, and line the number of the next line
	// to read: both are the reader's.
	layout *layout
	line   int
}

// Files returns the files [Import] reads for path: path
// itself when it is a file, or every *.csv and *.csv.gz file (any case)
// under the directory path, walked in lexical order, hidden files and
// directories skipped. The error wraps [tradekit.ErrInvalid] when a
// directory holds no such file.
func Files(path string) ([]string, error) {
	files, err := listFiles(path)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.path
	}
	return out, nil
}

func listFiles(path string) ([]*sourceFile, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("bulk: %w", err)
	}
	if !info.IsDir() {
		return []*sourceFile{{path: path, size: info.Size(), symbol: fileSymbol(path)}}, nil
	}
	var out []*sourceFile
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != path && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || fileSymbol(p) == "" {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, &sourceFile{path: p, size: info.Size(), symbol: fileSymbol(p)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bulk: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bulk: %s: no .csv or .csv.gz file in the directory: %w", path, tradekit.ErrInvalid)
	}
	return out, nil
}

// fileSymbol returns the symbol a file name gives, SYMBOL of SYMBOL.csv or
// SYMBOL.csv.gz (any case; upper-cased), or "" for another name.
func fileSymbol(path string) string {
	base := filepath.Base(path)
	lower := strings.ToLower(base)
	lower = strings.TrimSuffix(lower, ".gz")
	if !strings.HasSuffix(lower, ".csv") {
		return ""
	}
	return marketdata.NormalizeSymbol(base[:len(lower)-len(".csv")])
}
