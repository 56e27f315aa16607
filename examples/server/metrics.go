package main

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/postgres"
)

// metrics are the Prometheus series served on -metrics-addr. The domain
// packages know nothing of Prometheus: each feeds one of these through a
// plain callback (httpapi.Options.OnRequest, webhooks.Options.OnAttempt,
// storage.Due.OnLag and OnRun, storage.WithUpdateHook, and on PostgreSQL
// the store's own counters, postgres.DB.Stats), wired in serve.
//
//	corebank_http_requests_total{method,route,status}
//	corebank_http_request_duration_seconds{method,route,status}  histogram
//	corebank_webhook_deliveries_total{outcome}      succeeded, failed, stopped
//	corebank_due_lag_seconds{kind}                  how late the oldest due item of each kind ran, last run
//	corebank_due_items_total{kind}                  due items this server handed a job (its leases, its transactions)
//	corebank_storage_update_duration_seconds{result}  histogram, result ok or error
//	corebank_postgres_commits_total                 PostgreSQL only: transactions committed (Updates sharing one count once)
//	corebank_postgres_retries_total                 PostgreSQL only: transactions lost to a serialization failure or deadlock and run again
//	corebank_postgres_round_trips_total             PostgreSQL only: round trips to the database
//	corebank_rate_limited_total{limit_type}         requests refused 429 by -rate-limit (api_key, client_address) or -auth-fail-limit (failed_auth)
//
// plus the Go runtime's and the process's standard series. route is the
// route pattern's path ("/accounts/{id}", or "unmatched"), so the label
// set stays as small as the route table.
type metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	deliveries *prometheus.CounterVec
	dueLag     *prometheus.GaugeVec
	dueItems   *prometheus.CounterVec
	updates    *prometheus.HistogramVec

	// rateLimited counts the 429s of the rate limits (httpapi.Limits).
	rateLimited *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corebank_http_requests_total",
			Help: "HTTP requests answered, by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "corebank_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by method, route pattern and status.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route", "status"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corebank_webhook_deliveries_total",
			Help: "Webhook delivery attempts, by outcome: succeeded (2xx), failed (a retry may follow), stopped (ended unsent).",
		}, []string{"outcome"}),
		dueLag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "corebank_due_lag_seconds",
			Help: "How late the oldest due item of each kind was when the last due run reached it (0: nothing was due).",
		}, []string{"kind"}),
		dueItems: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corebank_due_items_total",
			Help: "Due items this server handed a job, by kind: each item once per due time across the servers on one store, so the servers' sums count the cluster's due work.",
		}, []string{"kind"}),
		updates: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "corebank_storage_update_duration_seconds",
			Help:    "Time of each storage write transaction, its work and commit, by result (ok or error).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"result"}),
	}
	for _, outcome := range []string{"succeeded", "failed", "stopped"} {
		m.deliveries.WithLabelValues(outcome) // exported at 0 from the start
	}
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "corebank_rate_limited_total",
		Help: "Requests refused 429 by this server's rate limits, by limit_type: api_key and client_address (-rate-limit), failed_auth (-auth-fail-limit).",
	}, []string{"limit_type"})
	for _, typ := range []string{httpapi.LimitTypeKey, httpapi.LimitTypeAddress, httpapi.LimitTypeFailedAuth} {
		m.rateLimited.WithLabelValues(typ) // exported at 0 from the start
	}
	m.reg.MustRegister(m.rateLimited)
	m.reg.MustRegister(m.requests, m.latency, m.deliveries, m.dueLag, m.dueItems, m.updates,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// postgres exports db's counters (postgres.DB.Stats), read at each scrape.
func (m *metrics) postgres(db *postgres.DB) {
	counter := func(name, help string, v func(postgres.Stats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(v(db.Stats())) })
	}
	m.reg.MustRegister(
		counter("corebank_postgres_commits_total",
			"PostgreSQL transactions this server committed (Updates grouped into one count once).",
			func(s postgres.Stats) uint64 { return s.Commits }),
		counter("corebank_postgres_retries_total",
			"PostgreSQL transactions this server lost to a serialization failure or deadlock and ran again.",
			func(s postgres.Stats) uint64 { return s.Retries }),
		counter("corebank_postgres_round_trips_total",
			"Round trips this server's transactions made to PostgreSQL.",
			func(s postgres.Stats) uint64 { return s.RoundTrips }),
	)
}

// handler serves the registry in the Prometheus text format at /metrics.
func (m *metrics) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	return mux
}

// request is httpapi.Options.OnRequest.
func (m *metrics) request(i httpapi.RequestInfo) {
	status := strconv.Itoa(i.Status)
	m.requests.WithLabelValues(i.Method, i.Route, status).Inc()
	m.latency.WithLabelValues(i.Method, i.Route, status).Observe(i.Duration.Seconds())
}

// limited is httpapi.Limits.OnLimited.
func (m *metrics) limited(limitType string) { m.rateLimited.WithLabelValues(limitType).Inc() }

// delivery is webhooks.Options.OnAttempt.
func (m *metrics) delivery(outcome string) { m.deliveries.WithLabelValues(outcome).Inc() }

// lag is storage.Due.OnLag.
func (m *metrics) lag(kind string, lag time.Duration) {
	m.dueLag.WithLabelValues(kind).Set(lag.Seconds())
}

// dueItem is storage.Due.OnRun.
func (m *metrics) dueItem(kind string, _ storage.DueItem) { m.dueItems.WithLabelValues(kind).Inc() }

// update is storage.WithUpdateHook's callback.
func (m *metrics) update(took time.Duration, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.updates.WithLabelValues(result).Observe(took.Seconds())
}
