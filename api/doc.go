// Package api holds the OpenAPI 3.1 document of Tradekit's HTTP interface:
// every path under /api/v1 and the health endpoints, with their
// parameters and rules, response schemas, error statuses, the bearer
// security scheme and the rate-limit and request-id headers.
//
// openapi.yaml in this directory is the one source of the description. The
// server serves it as JSON at GET /api/v1/openapi.json; the server's tests
// validate every request they make and every response they receive
// against it, and check that it lists exactly the router's routes; the Go
// client in package client is generated from it.
package api
