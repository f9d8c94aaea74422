package bulk

// ExportParseFastDec returns the canonical text fastDec gives s, or "" when
// fastDec refuses s.
func ExportParseFastDec(s string) string {
	var d fastDec
	if !d.parse([]byte(s)) {
		return ""
	}
	return string(d.text)
}
