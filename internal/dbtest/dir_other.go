//go:build !linux

package dbtest

// serverParent returns the directory to make the throwaway server's
// directory in: "", the caller's default directory for temporary files.
func serverParent() string { return "" }
