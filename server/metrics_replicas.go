package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tradekit/tradekit/internal/database"
)

// The descriptions of the read-replica metrics.
var (
	dbQueriesDesc = prometheus.NewDesc("tradekit_db_queries_total",
		"Read-only market-data queries run, by target: primary or replica. A query that failed on a replica and was retried on the primary counts on both.",
		[]string{"target"}, nil)
	replicaLagDesc = prometheus.NewDesc("tradekit_db_replica_lag_seconds",
		"How far each read replica was behind the primary at its last check, measured by WAL position (see serve --replica-max-lag).",
		[]string{"replica"}, nil)
	replicaUpDesc = prometheus.NewDesc("tradekit_db_replica_up",
		"Whether each read replica answers reads (1): reachable, a standby, and within the lag bound.",
		[]string{"replica"}, nil)
)

// replicaCollector reads the counts and the replicas' health from the
// router when scraped. The replica label is the replica's host, port and
// database, from the fixed set serve was given.
type replicaCollector struct{ r *database.Replicas }

// Describe implements prometheus.Collector.
func (c replicaCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- dbQueriesDesc
	ch <- replicaLagDesc
	ch <- replicaUpDesc
}

// Collect implements prometheus.Collector.
func (c replicaCollector) Collect(ch chan<- prometheus.Metric) {
	primary, replicas := c.r.Queries()
	ch <- prometheus.MustNewConstMetric(dbQueriesDesc, prometheus.CounterValue, float64(primary), database.TargetPrimary)
	ch <- prometheus.MustNewConstMetric(dbQueriesDesc, prometheus.CounterValue, float64(replicas), database.TargetReplica)
	for _, st := range c.r.Status() {
		up := 0.0
		if st.Healthy {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(replicaLagDesc, prometheus.GaugeValue, st.Lag.Seconds(), st.Name)
		ch <- prometheus.MustNewConstMetric(replicaUpDesc, prometheus.GaugeValue, up, st.Name)
	}
}
