package rlhttp

import (
	"net/http"

	rl "github.com/rl-dev/rl/bindings/go"
)

// MetricsContentType is the Content-Type of the Prometheus text exposition format.
const MetricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// MetricsHandler serves store.Metrics(), rl's Prometheus text, for a
// scraper: mux.Handle("/metrics", rlhttp.MetricsHandler(store)). A closed
// store answers 503.
func MetricsHandler(store *rl.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		text := store.Metrics()
		if text == "" {
			http.Error(w, "rl store closed", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", MetricsContentType)
		w.Write([]byte(text))
	})
}
