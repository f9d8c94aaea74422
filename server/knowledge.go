package server

import (
	"net/http"
	"slices"
	"strings"

	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/knowledge"
)

// postListParams are the parameters of GET /api/v1/knowledge/blog/posts.
type postListParams struct {
	Category string `query:"category"`
	Tag      string `query:"tag"`
	Featured bool   `query:"featured"`
}

// handlePostList serves GET /api/v1/knowledge/blog/posts: published posts,
// newest first, filtered by category, tag and featured=true.
func (s *Server) handlePostList(w http.ResponseWriter, req bunrouter.Request, p *postListParams) error {
	f := knowledge.PostFilter{Category: p.Category, Tag: p.Tag, FeaturedOnly: p.Featured, Before: s.now()}
	if f.Category != "" {
		var known []string
		for _, c := range s.knowledge.BlogCategories() {
			known = append(known, c.Slug)
		}
		if !slices.Contains(known, f.Category) {
			return invalidParam("category", "unknown blog category %s; the categories are %s", tradekit.Quote(f.Category), strings.Join(known, ", "))
		}
	}
	return s.writeData(w, s.knowledge.Posts(f))
}

// handlePostGet serves GET /api/v1/knowledge/blog/posts/:slug.
func (s *Server) handlePostGet(w http.ResponseWriter, req bunrouter.Request, p *slugParams) error {
	post, err := s.knowledge.Post(p.Slug)
	if err != nil || post.PublishedAt.After(s.now()) {
		return errorf(tradekit.ErrNotFound, "no blog post %s", tradekit.Quote(p.Slug))
	}
	return s.writeData(w, post)
}

// handleBlogCategoryList serves GET /api/v1/knowledge/blog/categories.
func (s *Server) handleBlogCategoryList(w http.ResponseWriter, req bunrouter.Request) error {
	return s.writeData(w, s.knowledge.BlogCategories())
}

// handleGlossaryCategoryList serves GET /api/v1/knowledge/glossary/categories.
func (s *Server) handleGlossaryCategoryList(w http.ResponseWriter, req bunrouter.Request) error {
	return s.writeData(w, s.knowledge.GlossaryCategories())
}

// handleTermList serves GET /api/v1/knowledge/glossary/terms.
func (s *Server) handleTermList(w http.ResponseWriter, req bunrouter.Request) error {
	return s.writeData(w, s.knowledge.Terms())
}

// handleTermGet serves GET /api/v1/knowledge/glossary/terms/:slug.
func (s *Server) handleTermGet(w http.ResponseWriter, req bunrouter.Request, p *slugParams) error {
	t, err := s.knowledge.Term(p.Slug)
	if err != nil {
		return errorf(tradekit.ErrNotFound, "no glossary term %s", tradekit.Quote(p.Slug))
	}
	return s.writeData(w, t)
}

// handleRoadmapList serves GET /api/v1/roadmap, a public route.
func (s *Server) handleRoadmapList(w http.ResponseWriter, req bunrouter.Request) error {
	return s.writeData(w, s.knowledge.Roadmap())
}
