package dashboard_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/dashboard"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/studies"
)

// TestNewRequires checks that New refuses, naming the field, a
// configuration that lacks a store or service the pages it enables need:
// the dashboard builds none of its own.
func TestNewRequires(t *testing.T) {
	t.Parallel()
	// The stores and services are never called: New panics first.
	billingStore, trading, market := &billing.Store{}, &connect.Store{}, &marketdata.Store{}
	status := func(error) int { return http.StatusBadRequest }
	tests := []struct {
		name string
		cfg  dashboard.Config
		want string // the field the panic names
	}{
		{"no billing", dashboard.Config{}, "Config.Billing"},
		{"brokers without trading", dashboard.Config{Billing: billingStore, Brokers: &connect.Service{}, Status: status}, "Config.Trading"},
		{"brokers without status", dashboard.Config{Billing: billingStore, Brokers: &connect.Service{}, Trading: trading}, "Config.Status"},
		{"copy without trading", dashboard.Config{Billing: billingStore, Copy: &copytrading.Service{}}, "Config.Trading"},
		{"alerts without studies", dashboard.Config{Billing: billingStore, Alerts: &alerts.Service{}, Market: market}, "Config.Studies"},
		{"alerts without market", dashboard.Config{Billing: billingStore, Alerts: &alerts.Service{}, Studies: &studies.Service{}}, "Config.Market"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				got := fmt.Sprint(recover())
				if !strings.HasPrefix(got, "dashboard: ") || !strings.Contains(got, tt.want+" is nil") {
					t.Errorf("New panicked with %q, want a dashboard panic naming %s", got, tt.want)
				}
			}()
			dashboard.New(tt.cfg)
		})
	}
}
