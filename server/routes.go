package server

import (
	"net/http"

	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
)

// routes lists every route of the service.
func (s *Server) routes() http.Handler {
	r := bunrouter.New(
		bunrouter.WithNotFoundHandler(s.errorHandler(func(w http.ResponseWriter, req bunrouter.Request) error {
			return errorf(tradekit.ErrNotFound, "no route %s %s", req.Method, req.URL.Path)
		})),
		bunrouter.WithMethodNotAllowedHandler(s.errorHandler(func(w http.ResponseWriter, req bunrouter.Request) error {
			return errorf(errMethodNotAllowed, "%s is not allowed on %s", req.Method, req.URL.Path)
		})),
	)
	r.GET("/healthz", s.handleHealth)
	r.GET("/readyz", s.errorHandler(s.handleReady))

	// Public routes: no API key, no rate limit.
	r.WithGroup("/api/v1", func(g *bunrouter.Group) {
		g = g.Use(s.errorHandler)
		g.GET("/roadmap", s.handleRoadmapList)
	})

	// Everything else needs a key and counts against the plan's limits.
	r.WithGroup("/api/v1", func(g *bunrouter.Group) {
		g = g.Use(s.errorHandler, s.authenticate)
		g.GET("/billing/plans", s.handlePlanList)

		// Market data (spec 4.1–4.5).
		g.GET("/market-data/assets", s.handleAssetList)
		g.GET("/market-data/assets/symbol/:symbol", s.handleAssetBySymbol)
		g.GET("/market-data/assets/:id", s.handleAssetGet)
		g.GET("/market-data/assets/:id/profile", s.handleAssetProfile)
		g.GET("/market-data/assets/:id/fundamentals", s.handleAssetFundamentals)
		g.GET("/market-data/industries", s.handleIndustryList)
		g.GET("/market-data/industries/:id", s.handleIndustryGet)
		g.GET("/market-data/industries/:id/children", s.handleIndustryChildren)
		g.GET("/market-data/industries/:id/assets", s.handleIndustryAssets)
		g.GET("/market-data/indexes", s.handleIndexList)
		g.GET("/market-data/indexes/symbol/:symbol", s.handleIndexBySymbol)
		g.GET("/market-data/indexes/:id", s.handleIndexGet)
		g.GET("/market-data/indexes/:id/assets", s.handleIndexAssets)
		g.GET("/market-data/prices/asset/:assetId", s.handlePriceList)
		g.GET("/market-data/prices/asset/:assetId/latest", s.handlePriceLatest)
		g.GET("/market-data/prices/:id", s.handlePriceGet)
		g.GET("/market-data/exchanges", s.handleExchangeList)
		g.GET("/market-data/exchanges/symbol/:symbol", s.handleExchangeBySymbol)
		g.GET("/market-data/exchanges/:id", s.handleExchangeGet)
		g.GET("/market-data/exchanges/:id/holidays", s.handleExchangeHolidays)

		g.GET("/indicators/asset/:assetId", s.handleIndicatorSeries)
		g.GET("/indicators/asset/:assetId/summary", s.handleIndicatorSummary)
		g.GET("/indicators/asset/:assetId/multi-timeframe", s.handleIndicatorOverlays)
		g.GET("/indicators/custom", s.handleCustomList)
		g.POST("/indicators/custom", s.handleCustomCreate)
		g.PATCH("/indicators/custom/:id", s.handleCustomUpdate)
		g.DELETE("/indicators/custom/:id", s.handleCustomDelete)
		g.POST("/indicators/custom/:id/evaluate", s.handleCustomEvaluate)

		// Asset profiles (spec 4.8).
		g.GET("/asset-profiles", s.handleAIProfileList)
		g.GET("/asset-profiles/:assetId", s.handleAIProfileGet)

		g.GET("/knowledge/blog/posts", s.handlePostList)
		g.GET("/knowledge/blog/posts/:slug", s.handlePostGet)
		g.GET("/knowledge/blog/categories", s.handleBlogCategoryList)
		g.GET("/knowledge/glossary/categories", s.handleGlossaryCategoryList)
		g.GET("/knowledge/glossary/terms", s.handleTermList)
		g.GET("/knowledge/glossary/terms/:slug", s.handleTermGet)
	})
	return r
}
