package server

import "testing"

// TestIsMultipart checks that every spelling of a multipart Content-Type
// that Go's parsers would accept is caught, and nothing else.
func TestIsMultipart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ct   string
		want bool
	}{
		{"multipart/form-data; boundary=x", true},
		{"MULTIPART/FORM-DATA; boundary=x", true},
		{"  multipart/mixed", true},
		{"multipart/related; boundary=\"unterminated", true},
		{"multipart/", true},
		{"application/x-www-form-urlencoded", false},
		{"application/json; charset=utf-8", false},
		{"text/plain; note=multipart/form-data", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isMultipart(tt.ct); got != tt.want {
			t.Errorf("isMultipart(%q) = %v, want %v", tt.ct, got, tt.want)
		}
	}
}
