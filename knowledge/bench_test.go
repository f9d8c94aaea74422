package knowledge

import (
	"io/fs"
	"testing"
)

// BenchmarkLoad measures parsing and validating the whole embedded pack
// (what the first call to Load costs) and a later, cached call.
func BenchmarkLoad(b *testing.B) {
	sub, err := fs.Sub(embedded, "content")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := Parse(sub); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := Load(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPosts measures a filtered post listing, the work of one request.
func BenchmarkPosts(b *testing.B) {
	p, err := Load()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = p.Posts(PostFilter{Tag: "atr"})
	}
}
