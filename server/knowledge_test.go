package server_test

import (
	"net/http"
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// list returns the data of a list response, failing unless it is a 200.
func (r response) list(tb testing.TB) []map[string]any {
	tb.Helper()
	if r.status != http.StatusOK {
		tb.Fatalf("status %d: %s", r.status, r.raw)
	}
	items, ok := r.body["data"].([]any)
	if !ok {
		tb.Fatalf("data is not a list: %s", r.raw)
	}
	out := make([]map[string]any, len(items))
	for i, it := range items {
		out[i] = it.(map[string]any)
	}
	return out
}

// object returns the data of a single-resource response, failing unless
// it is a 200.
func (r response) object(tb testing.TB) map[string]any {
	tb.Helper()
	if r.status != http.StatusOK {
		tb.Fatalf("status %d: %s", r.status, r.raw)
	}
	obj, ok := r.body["data"].(map[string]any)
	if !ok {
		tb.Fatalf("data is not an object: %s", r.raw)
	}
	return obj
}

// checkKeys checks that obj has every key of present and none of absent.
func checkKeys(tb testing.TB, what string, obj map[string]any, present, absent []string) {
	tb.Helper()
	for _, k := range present {
		if _, ok := obj[k]; !ok {
			tb.Errorf("%s lacks %q: %v", what, k, obj)
		}
	}
	for _, k := range absent {
		if _, ok := obj[k]; ok {
			tb.Errorf("%s has %q, which it must leave out: %v", what, k, obj)
		}
	}
}

func TestRoadmapIsPublic(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		r := get(t, h, "/api/v1/roadmap", "")
		items := r.list(t)
		if r.header.Get("X-RateLimit-Limit") != "" {
			t.Error("the public roadmap carries rate-limit headers")
		}
		seen := map[string]int{}
		for _, it := range items {
			status := it["status"].(string)
			seen[status]++
			checkKeys(t, "roadmap item", it, []string{"id", "title", "description", "status", "category", "votes"}, nil)
			if status == "released" {
				checkKeys(t, "released item", it, []string{"releasedAt"}, []string{"estimatedRelease"})
			} else {
				checkKeys(t, status+" item", it, []string{"estimatedRelease"}, []string{"releasedAt"})
			}
		}
		for _, s := range []string{"planned", "in_progress", "released"} {
			if seen[s] == 0 {
				t.Errorf("no roadmap item is %s", s)
			}
		}
	})
}

func TestBlog(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "blog@example.com", "pro")

		if r := get(t, h, "/api/v1/knowledge/blog/posts", ""); r.status != 401 {
			t.Errorf("posts without a key: %d", r.status)
		}
		all := get(t, h, "/api/v1/knowledge/blog/posts", key).list(t)
		if len(all) < 8 {
			t.Fatalf("%d posts, want at least 8", len(all))
		}
		featured, tags := 0, map[string]int{}
		for i, p := range all {
			checkKeys(t, "post list item", p, []string{"id", "title", "slug", "excerpt", "category", "tags", "featured", "publishedAt"}, []string{"content"})
			if i > 0 && p["publishedAt"].(string) > all[i-1]["publishedAt"].(string) {
				t.Errorf("posts not newest first at %d", i)
			}
			if p["featured"] == true {
				featured++
			}
			for _, tag := range p["tags"].([]any) {
				tags[tag.(string)]++
			}
		}

		if got := len(get(t, h, "/api/v1/knowledge/blog/posts?featured=true", key).list(t)); got != featured || got == 0 {
			t.Errorf("featured=true: %d posts, want %d", got, featured)
		}
		if got := len(get(t, h, "/api/v1/knowledge/blog/posts?featured=false", key).list(t)); got != len(all) {
			t.Errorf("featured=false: %d posts, want all %d", got, len(all))
		}
		for tag, n := range tags {
			if got := get(t, h, "/api/v1/knowledge/blog/posts?tag="+tag, key).list(t); len(got) != n {
				t.Errorf("tag=%s: %d posts, want %d", tag, len(got), n)
			}
		}
		if got := get(t, h, "/api/v1/knowledge/blog/posts?tag=no-such-tag", key).list(t); len(got) != 0 {
			t.Errorf("unknown tag: %d posts, want none", len(got))
		}

		cats := get(t, h, "/api/v1/knowledge/blog/categories", key).list(t)
		total := 0
		for _, c := range cats {
			checkKeys(t, "blog category", c, []string{"id", "name", "slug", "postCount"}, nil)
			n := int(c["postCount"].(float64))
			total += n
			if got := get(t, h, "/api/v1/knowledge/blog/posts?category="+c["slug"].(string), key).list(t); len(got) != n {
				t.Errorf("category %s: %d posts, postCount says %d", c["slug"], len(got), n)
			}
		}
		if total != len(all) {
			t.Errorf("postCounts add up to %d, want %d", total, len(all))
		}

		post := get(t, h, "/api/v1/knowledge/blog/posts/"+all[0]["slug"].(string), key).object(t)
		checkKeys(t, "single post", post, []string{"id", "title", "slug", "content", "category", "tags", "featured", "publishedAt"}, []string{"excerpt"})
		if post["content"].(string) == "" || post["id"] != all[0]["id"] {
			t.Errorf("single post: %v", post)
		}

		for path, code := range map[string]string{
			"/api/v1/knowledge/blog/posts/no-such-post":     "NOT_FOUND",
			"/api/v1/knowledge/blog/posts?featured=maybe":   "VALIDATION_ERROR",
			"/api/v1/knowledge/blog/posts?category=cooking": "VALIDATION_ERROR",
		} {
			if r := get(t, h, path, key); r.errorCode() != code {
				t.Errorf("%s: %d %s, want %s", path, r.status, r.raw, code)
			}
		}
	})
}

func TestGlossary(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "glossary@example.com", "pro")

		terms := get(t, h, "/api/v1/knowledge/glossary/terms", key).list(t)
		if len(terms) < 60 {
			t.Fatalf("%d terms, want at least 60", len(terms))
		}
		cats := get(t, h, "/api/v1/knowledge/glossary/categories", key).list(t)
		byCat, total := map[string]int{}, 0
		for _, term := range terms {
			checkKeys(t, "term list item", term, []string{"id", "term", "slug", "definition", "categoryId"}, []string{"relatedTerms"})
			byCat[term["categoryId"].(string)]++
		}
		for _, c := range cats {
			checkKeys(t, "glossary category", c, []string{"id", "name", "slug", "termCount"}, nil)
			n := int(c["termCount"].(float64))
			total += n
			if byCat[c["id"].(string)] != n {
				t.Errorf("category %s: termCount %d, but %d terms name it", c["slug"], n, byCat[c["id"].(string)])
			}
		}
		if total != len(terms) {
			t.Errorf("termCounts add up to %d, want %d", total, len(terms))
		}

		term := get(t, h, "/api/v1/knowledge/glossary/terms/"+terms[0]["slug"].(string), key).object(t)
		related, ok := term["relatedTerms"].([]any)
		if !ok || len(related) == 0 {
			t.Fatalf("term %s has no relatedTerms: %v", terms[0]["slug"], term)
		}
		for _, slug := range related {
			if r := get(t, h, "/api/v1/knowledge/glossary/terms/"+slug.(string), key); r.status != 200 {
				t.Errorf("related term %s: %d", slug, r.status)
			}
		}
		if r := get(t, h, "/api/v1/knowledge/glossary/terms/no-such-term", key); r.errorCode() != "NOT_FOUND" {
			t.Errorf("unknown term: %d %s", r.status, r.raw)
		}
	})
}
