package server

// The accessors below let the tests (package server_test) reach a
// server's services; they are compiled only into the test binary.

import (
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
