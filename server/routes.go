package server

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
)

// access says what a route asks of its callers.
type access int

const (
	public access = iota // no API key, no rate limit
	keyed                // an API key, counted against its owner's plan
)

// routeKey names a route by method and pattern.
type routeKey struct{ method, path string }

// route is one route of the service.
type route struct {
	method string
	path   string // bunrouter's pattern: ":name" matches one segment
	access access
	endpoint
}

// routeTable lists every route of the service, here and nowhere else.
func (s *Server) routeTable() []route {
	return []route{
		{"GET", "/healthz", public, bindNone(s, s.handleHealth)},
		{"GET", "/readyz", public, bindNone(s, s.handleReady)},
		{"GET", "/api/v1/roadmap", public, bindNone(s, s.handleRoadmapList)},
		{"GET", "/api/v1/openapi.json", public, bindNone(s, s.handleOpenAPI)},
		{"GET", "/api/v1/brokers/oauth/callback", public, bind(s, s.handleOAuthCallback)},

		{"GET", "/api/v1/billing/plans", keyed, bindNone(s, s.handlePlanList)},

		// Market data (spec 4.1–4.5).
		{"GET", "/api/v1/market-data/assets", keyed, bind(s, s.handleAssetList)},
		{"GET", "/api/v1/market-data/assets/symbol/:symbol", keyed, bind(s, s.handleAssetBySymbol)},
		{"GET", "/api/v1/market-data/assets/:id", keyed, bind(s, s.handleAssetGet)},
		{"GET", "/api/v1/market-data/assets/:id/profile", keyed, bind(s, s.handleAssetProfile)},
		{"GET", "/api/v1/market-data/assets/:id/fundamentals", keyed, bind(s, s.handleAssetFundamentals)},
		{"GET", "/api/v1/market-data/assets/:id/actions", keyed, bind(s, s.handleAssetActions)},
		{"GET", "/api/v1/market-data/industries", keyed, bind(s, s.handleIndustryList)},
		{"GET", "/api/v1/market-data/industries/:id", keyed, bind(s, s.handleIndustryGet)},
		{"GET", "/api/v1/market-data/industries/:id/children", keyed, bind(s, s.handleIndustryChildren)},
		{"GET", "/api/v1/market-data/industries/:id/assets", keyed, bind(s, s.handleIndustryAssets)},
		{"GET", "/api/v1/market-data/indexes", keyed, bindNone(s, s.handleIndexList)},
		{"GET", "/api/v1/market-data/indexes/symbol/:symbol", keyed, bind(s, s.handleIndexBySymbol)},
		{"GET", "/api/v1/market-data/indexes/:id", keyed, bind(s, s.handleIndexGet)},
		{"GET", "/api/v1/market-data/indexes/:id/assets", keyed, bind(s, s.handleIndexAssets)},
		{"GET", "/api/v1/market-data/prices/asset/:assetId", keyed, bind(s, s.handlePriceList)},
		{"GET", "/api/v1/market-data/prices/asset/:assetId/latest", keyed, bind(s, s.handlePriceLatest)},
		{"GET", "/api/v1/market-data/prices/:id", keyed, bind(s, s.handlePriceGet)},
		{"GET", "/api/v1/market-data/exchanges", keyed, bindNone(s, s.handleExchangeList)},
		{"GET", "/api/v1/market-data/feeds", keyed, bindNone(s, s.handleFeedList)},
		{"GET", "/api/v1/market-data/exchanges/symbol/:symbol", keyed, bind(s, s.handleExchangeBySymbol)},
		{"GET", "/api/v1/market-data/exchanges/:id", keyed, bind(s, s.handleExchangeGet)},
		{"GET", "/api/v1/market-data/exchanges/:id/holidays", keyed, bind(s, s.handleExchangeHolidays)},

		// Indicators (spec 4.7).
		{"GET", "/api/v1/indicators/asset/:assetId", keyed, bind(s, s.handleIndicatorSeries)},
		{"GET", "/api/v1/indicators/asset/:assetId/summary", keyed, bind(s, s.handleIndicatorSummary)},
		{"GET", "/api/v1/indicators/asset/:assetId/multi-timeframe", keyed, bind(s, s.handleIndicatorOverlays)},
		{"GET", "/api/v1/indicators/custom", keyed, bindNone(s, s.handleCustomList)},
		{"POST", "/api/v1/indicators/custom", keyed, bind(s, s.handleCustomCreate)},
		{"POST", "/api/v1/backtests", keyed, bind(s, s.handleBacktestRun)},
		{"GET", "/api/v1/backtests/:hash", keyed, bind(s, s.handleBacktestGet)},
		{"DELETE", "/api/v1/backtests/:hash", keyed, bind(s, s.handleBacktestDelete)},
		{"PATCH", "/api/v1/indicators/custom/:id", keyed, bind(s, s.handleCustomUpdate)},
		{"DELETE", "/api/v1/indicators/custom/:id", keyed, bind(s, s.handleCustomDelete)},
		{"POST", "/api/v1/indicators/custom/:id/evaluate", keyed, bind(s, s.handleCustomEvaluate)},

		// Asset profiles (spec 4.8).
		{"GET", "/api/v1/asset-profiles", keyed, bind(s, s.handleAssetProfileList)},
		{"GET", "/api/v1/asset-profiles/:assetId", keyed, bind(s, s.handleAssetProfileGet)},

		// Brokers (spec 4.10) and the portfolios of connected accounts.
		{"GET", "/api/v1/brokers/providers", keyed, bindNone(s, s.handleProviderList)},
		{"GET", "/api/v1/brokers/connections", keyed, bindNone(s, s.handleConnectionList)},
		{"POST", "/api/v1/brokers/connections", keyed, bind(s, s.handleConnectionCreate)},
		{"DELETE", "/api/v1/brokers/connections/:id", keyed, bind(s, s.handleConnectionDelete)},
		{"POST", "/api/v1/brokers/connections/:id/sync", keyed, bind(s, s.handleConnectionSync)},
		{"GET", "/api/v1/brokers/connections/:id/logs", keyed, bind(s, s.handleConnectionLogs)},
		{"GET", "/api/v1/brokers/guardrails", keyed, bindNone(s, s.handleGuardrailsGet)},
		{"PATCH", "/api/v1/brokers/guardrails", keyed, bind(s, s.handleGuardrailsPatch)},
		{"GET", "/api/v1/copy-trading/leaders", keyed, bind(s, s.handleLeaderList)},
		{"GET", "/api/v1/copy-trading/leaders/:slug", keyed, bind(s, s.handleLeaderGet)},
		{"GET", "/api/v1/copy-trading/leaders/:slug/transactions", keyed, bind(s, s.handleLeaderTransactions)},
		{"GET", "/api/v1/copy-trading/following", keyed, bindNone(s, s.handleFollowingList)},
		{"POST", "/api/v1/copy-trading/follow", keyed, bind(s, s.handleFollowCreate)},
		{"PATCH", "/api/v1/copy-trading/follow/:id", keyed, bind(s, s.handleFollowPatch)},
		{"DELETE", "/api/v1/copy-trading/follow/:id", keyed, bind(s, s.handleFollowDelete)},
		{"PATCH", "/api/v1/copy-trading/follow/:id/sync", keyed, bind(s, s.handleFollowSync)},
		{"POST", "/api/v1/copy-trading/publish", keyed, bind(s, s.handlePublish)},
		{"DELETE", "/api/v1/copy-trading/publish", keyed, bindNone(s, s.handleUnpublish)},
		{"GET", "/api/v1/copy-trading/strategies", keyed, bindNone(s, s.handleStrategyList)},
		{"POST", "/api/v1/copy-trading/strategies", keyed, bind(s, s.handleStrategyCreate)},
		{"DELETE", "/api/v1/copy-trading/strategies/:id", keyed, bind(s, s.handleStrategyDelete)},
		{"GET", "/api/v1/notifications", keyed, bind(s, s.handleNotificationList)},
		{"POST", "/api/v1/notifications/:id/read", keyed, bind(s, s.handleNotificationRead)},
		{"GET", "/api/v1/brokers/orders", keyed, bind(s, s.handleOrderList)},
		{"POST", "/api/v1/brokers/orders", keyed, bind(s, s.handleOrderCreate)},
		{"GET", "/api/v1/brokers/orders/:id", keyed, bind(s, s.handleOrderGet)},
		{"DELETE", "/api/v1/brokers/orders/:id", keyed, bind(s, s.handleOrderDelete)},
		{"GET", "/api/v1/watchlists", keyed, bindNone(s, s.handleWatchlistList)},
		{"POST", "/api/v1/watchlists", keyed, bind(s, s.handleWatchlistCreate)},
		{"GET", "/api/v1/watchlists/:id", keyed, bind(s, s.handleWatchlistGet)},
		{"PATCH", "/api/v1/watchlists/:id", keyed, bind(s, s.handleWatchlistPatch)},
		{"DELETE", "/api/v1/watchlists/:id", keyed, bind(s, s.handleWatchlistDelete)},
		{"POST", "/api/v1/watchlists/:id/assets", keyed, bind(s, s.handleWatchlistAdd)},
		{"DELETE", "/api/v1/watchlists/:id/assets/:assetId", keyed, bind(s, s.handleWatchlistRemove)},
		{"GET", "/api/v1/alerts", keyed, bindNone(s, s.handleAlertList)},
		{"POST", "/api/v1/alerts", keyed, bind(s, s.handleAlertCreate)},
		{"GET", "/api/v1/alerts/:id", keyed, bind(s, s.handleAlertGet)},
		{"DELETE", "/api/v1/alerts/:id", keyed, bind(s, s.handleAlertDelete)},
		{"GET", "/api/v1/webhooks", keyed, bindNone(s, s.handleWebhookList)},
		{"POST", "/api/v1/webhooks", keyed, bind(s, s.handleWebhookCreate)},
		{"DELETE", "/api/v1/webhooks/:id", keyed, bind(s, s.handleWebhookDelete)},
		{"GET", "/api/v1/webhooks/:id/deliveries", keyed, bind(s, s.handleDeliveryList)},
		{"GET", "/api/v1/portfolios", keyed, bindNone(s, s.handlePortfolioList)},
		{"GET", "/api/v1/portfolios/:id", keyed, bind(s, s.handlePortfolioGet)},
		{"GET", "/api/v1/portfolios/:id/history", keyed, bind(s, s.handlePortfolioHistory)},

		// Knowledge (spec 4.6).
		{"GET", "/api/v1/knowledge/blog/posts", keyed, bind(s, s.handlePostList)},
		{"GET", "/api/v1/knowledge/blog/posts/:slug", keyed, bind(s, s.handlePostGet)},
		{"GET", "/api/v1/knowledge/blog/categories", keyed, bindNone(s, s.handleBlogCategoryList)},
		{"GET", "/api/v1/knowledge/glossary/categories", keyed, bindNone(s, s.handleGlossaryCategoryList)},
		{"GET", "/api/v1/knowledge/glossary/terms", keyed, bindNone(s, s.handleTermList)},
		{"GET", "/api/v1/knowledge/glossary/terms/:slug", keyed, bind(s, s.handleTermGet)},
	}
}

// router returns the router of the routes, every one behind the error
// envelope and the keyed ones behind authentication and rate limits.
func (s *Server) router(routes []route) http.Handler {
	noRoute := s.errorHandler(s.handleNoRoute)
	r := bunrouter.New(bunrouter.WithNotFoundHandler(noRoute), bunrouter.WithMethodNotAllowedHandler(noRoute))
	groups := map[access]*bunrouter.Group{
		public: r.NewGroup("", bunrouter.Use(s.labelRoute, s.errorHandler)),
		keyed:  r.NewGroup("", bunrouter.Use(s.labelRoute, s.errorHandler, s.authenticate)),
	}
	for _, rt := range routes {
		groups[rt.access].Handle(rt.method, rt.path, rt.handle)
	}
	return r
}

// handleNoRoute answers a path no route has: 405 with the Allow header
// when the path has routes for other methods, 404 otherwise. The router's
// own 405 misses a path whose parameter segment is followed by more
// segments (bunrouter v1.0.23: GET /indicators/custom/:id/evaluate, which
// only POST has, is a "not found"), so the routes are matched here.
//
// GET / (and HEAD /), which is no route of the API, is answered by
// [Server.handleRoot].
func (s *Server) handleNoRoute(w http.ResponseWriter, req bunrouter.Request) error {
	if req.URL.Path == "/" && (req.Method == http.MethodGet || req.Method == http.MethodHead) {
		return s.handleRoot(w, req)
	}
	path := req.URL.EscapedPath()
	var allow []string
	for _, rt := range s.routes {
		if matchPath(rt.path, path) && !slices.Contains(allow, rt.method) {
			allow = append(allow, rt.method)
		}
	}
	if len(allow) == 0 {
		return errorf(tradekit.ErrNotFound, "no route %s %s", req.Method, tradekit.Quote(req.URL.Path))
	}
	slices.Sort(allow)
	w.Header().Set("Allow", strings.Join(allow, ", "))
	return errorf(errMethodNotAllowed, "%s is not allowed on this path; it allows %s", clip(req.Method), strings.Join(allow, ", "))
}

// rootLinks is the answer of GET / to an API client: where the API, its
// OpenAPI document and the dashboard are.
type rootLinks struct {
	API       string `json:"api"`
	OpenAPI   string `json:"openapi"`
	Dashboard string `json:"dashboard"`
}

// handleRoot answers GET /, the address people type first: a browser
// (Accept naming text/html) is sent to the dashboard with 303 See Other;
// any other client gets 200 and [rootLinks] in the data envelope, rather
// than a 404.
func (s *Server) handleRoot(w http.ResponseWriter, req bunrouter.Request) error {
	if acceptsHTML(req.Header.Get("Accept")) {
		http.Redirect(w, req.Request, "/dashboard/", http.StatusSeeOther)
		return nil
	}
	return s.writeData(w, rootLinks{API: "/api/v1", OpenAPI: "/api/v1/openapi.json", Dashboard: "/dashboard/"})
}

// acceptsHTML reports whether an Accept header names text/html with a
// quality above 0.
func acceptsHTML(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		media, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(media), "text/html") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
				q, err := strconv.ParseFloat(v, 64)
				return err == nil && q > 0
			}
		}
		return true
	}
	return false
}

// matchPath reports whether the escaped path matches the route pattern,
// segment by segment, a ":name" segment matching any non-empty one.
func matchPath(pattern, path string) bool {
	for {
		p, pRest, pMore := strings.Cut(pattern, "/")
		x, xRest, xMore := strings.Cut(path, "/")
		if pMore != xMore {
			return false
		}
		if p != x && !(strings.HasPrefix(p, ":") && x != "") {
			return false
		}
		if !pMore {
			return true
		}
		pattern, path = pRest, xRest
	}
}

// labelRoute names the request's metrics and span by its route's
// pattern, never by its path, so that ids in paths never become label
// values. The router's 405s, which run behind the middleware of the
// path's group, keep the fixed label of unmatched requests.
func (s *Server) labelRoute(next bunrouter.HandlerFunc) bunrouter.HandlerFunc {
	return func(w http.ResponseWriter, req bunrouter.Request) error {
		if s.routeSet[routeKey{req.Method, req.Route()}] {
			setRoute(req.Request, req.Route())
		}
		return next(w, req)
	}
}
