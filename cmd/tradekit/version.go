package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// version runs `tradekit version` (also `tradekit --version`): it prints
// the binary's module version and VCS revision, as the Go toolchain
// recorded them in the build (see [versionLine]).
func (e *env) version(args []string) error {
	if len(args) > 0 {
		if isHelp(args[0]) {
			return e.help("usage: tradekit version\n\nPrint the module version and VCS revision of this binary, as recorded by the Go build;\n\"(devel)\" stands for what the build does not know.")
		}
		return fmt.Errorf("version: unexpected argument %q", args[0])
	}
	info, ok := debug.ReadBuildInfo()
	fmt.Fprintln(e.stdout, versionLine(info, ok))
	return nil
}

// versionLine returns the line `tradekit version` prints for the build
// info of the binary (ok false when it has none): the module version and
// the VCS revision, its time and whether the tree had uncommitted
// changes, e.g.
//
//	tradekit v1.4.0 (revision 8662874a1b2c, 2026-12-09T10:00:00Z)
//	tradekit (devel) (revision 8662874a1b2c, 2026-12-09T10:00:00Z, modified)
//	tradekit (devel) (revision (devel))
//
// "(devel)" stands for what the build did not record: a version when the
// binary was not built from a tagged module (go build in a clone), a
// revision when it was built outside a VCS checkout or with
// -buildvcs=false.
func versionLine(info *debug.BuildInfo, ok bool) string {
	const unknown = "(devel)"
	version, revision := unknown, unknown
	var extra []string
	if ok && info != nil {
		if v := info.Main.Version; v != "" {
			version = v
		}
		var modified bool
		var when string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
				if len(revision) > 12 {
					revision = revision[:12]
				}
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if when != "" {
			extra = append(extra, when)
		}
		if modified {
			extra = append(extra, "modified")
		}
	}
	return fmt.Sprintf("tradekit %s (revision %s)", version, strings.Join(append([]string{revision}, extra...), ", "))
}
