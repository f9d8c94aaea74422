package server

// The accessors below let the tests (package server_test) reach a
// server's services; they are compiled only into the test binary.

import (
	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/studies"
)

// Authenticator returns the server's API-key authenticator, through which
// a key revoked in this process stops working at once.
func (s *Server) Authenticator() *billing.Authenticator {
	return s.auth
}

// Connections returns the server's broker connection service.
func (s *Server) Connections() *connect.Service {
	return s.connect
}

// Paper returns the server's built-in paper broker.
func (s *Server) Paper() *paper.Broker {
	return s.paper
}

// Studies returns the server's indicator service.
func (s *Server) Studies() *studies.Service {
	return s.studies
}

// Routes returns the method and pattern of every route of the service.
func Routes() [][2]string {
	var out [][2]string
	for _, r := range (&Server{}).routeTable() {
		out = append(out, [2]string{r.method, r.path})
	}
	return out
}

// RouteParam is a parameter that a route declares, in the OpenAPI
// document's terms.
type RouteParam struct {
	Name     string
	In       string // "path" or "query"
	Required bool
	Type     string // string, integer, number, boolean, or array
	ItemType string // the type of an array's items
	Format   string // uuid or date for those kinds, else ""
	Enum     []string
	// Min and Max are the bounds of the rules min, gte or gt and max, lte
	// or lt, "" for none; exclusive for gt and lt.
	Min, Max                   string
	ExclusiveMin, ExclusiveMax bool
	Default                    *string
}

// RouteParams returns the parameters of every route, keyed by method and
// pattern ("GET /api/v1/market-data/assets/:id").
func RouteParams() map[string][]RouteParam {
	out := map[string][]RouteParam{}
	for _, r := range (&Server{}).routeTable() {
		ps := []RouteParam{}
		for _, f := range r.params.fields {
			p := RouteParam{Name: f.name, In: "query", Required: f.required || f.inPath, Enum: f.oneof,
				Min: f.lower, Max: f.upper, ExclusiveMin: f.lowerGT, ExclusiveMax: f.upperLT, Default: f.def}
			if f.inPath {
				p.In = "path"
			}
			p.Type, p.Format = openAPIType(f.kind)
			if f.slice {
				p.ItemType, p.Type = p.Type, "array"
			}
			ps = append(ps, p)
		}
		out[r.method+" "+r.path] = ps
	}
	return out
}

// openAPIType returns the OpenAPI type and format of a parameter kind.
func openAPIType(k paramKind) (typ, format string) {
	switch k {
	case kindBool:
		return "boolean", ""
	case kindInt:
		return "integer", ""
	case kindFloat, kindDecimal:
		return "number", ""
	case kindUUID:
		return "string", "uuid"
	case kindDate:
		return "string", "date"
	}
	return "string", ""
}

// Alerts returns the server's alerts service, to run evaluation and
// delivery passes.
func (s *Server) Alerts() *alerts.Service {
	return s.alerts
}
