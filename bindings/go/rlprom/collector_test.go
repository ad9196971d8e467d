package rlprom_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	rl "github.com/rl-dev/rl/bindings/go"
	"github.com/rl-dev/rl/bindings/go/rlprom"
)

func open(t *testing.T, url string) *rl.Store {
	t.Helper()
	store, err := rl.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// allowed+denied gcra acquires of one key under a limit of allowed/h.
func decide(t *testing.T, store *rl.Store, allowed, denied int) {
	t.Helper()
	limiter, err := store.Limiter(rl.Config{Limit: fmt.Sprintf("%d/h", allowed), Name: fmt.Sprintf("prom-%d", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < allowed+denied; i++ {
		if _, err := limiter.Acquire(context.Background(), "k", 1); err != nil {
			t.Fatal(err)
		}
	}
}

// The registry served by promhttp on a loopback HTTP server, as Prometheus scrapes it.
func scrape(t *testing.T, registry *prometheus.Registry) string {
	t.Helper()
	server := httptest.NewServer(promhttp.HandlerFor(registry, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	defer server.Close()
	res, err := http.Get(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s: %s", res.Status, body)
	}
	return string(body)
}

func contains(t *testing.T, text string, lines ...string) {
	t.Helper()
	for _, line := range lines {
		if !strings.Contains(text, "\n"+line+"\n") {
			t.Errorf("the scrape lacks %q:\n%s", line, text)
		}
	}
}

func redisURL(t *testing.T) string {
	url := os.Getenv("RL_TEST_REDIS_URL")
	if url == "" {
		t.Skip("RL_TEST_REDIS_URL is not set (run under scripts/with-redis)")
	}
	return url
}

func TestOneStoreIsScrapedWithExactCounts(t *testing.T) {
	for _, url := range []string{"memory://", ""} {
		if url == "" {
			url = redisURL(t)
		}
		store := open(t, url)
		decide(t, store, 3, 2)
		registry := prometheus.NewRegistry()
		registry.MustRegister(rlprom.NewCollector(store))
		text := scrape(t, registry)
		contains(t, text,
			`rl_decisions_total{source="store",verdict="allowed"} 3`,
			`rl_decisions_total{source="store",verdict="denied"} 2`,
			`# TYPE rl_breaker_state gauge`)
		if !strings.HasPrefix(url, "memory") {
			contains(t, text, `rl_store_round_trip_seconds_count 5`)
		}
	}
}

func TestSeveralStoresShareOneRegistryByLabel(t *testing.T) {
	edge := open(t, "memory://")
	main := open(t, redisURL(t))
	decide(t, edge, 1, 0)
	decide(t, main, 2, 1)
	collector, err := rlprom.NewCollectorOf(map[string]*rl.Store{"edge": edge, "main": main}, "store")
	if err != nil {
		t.Fatal(err)
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(collector)
	contains(t, scrape(t, registry),
		`rl_decisions_total{source="store",store="edge",verdict="allowed"} 1`,
		`rl_decisions_total{source="store",store="main",verdict="allowed"} 2`,
		`rl_decisions_total{source="store",store="main",verdict="denied"} 1`)
}

func TestBadArgumentsAreRefused(t *testing.T) {
	if _, err := rlprom.NewCollectorOf(nil, "store"); err == nil || !strings.Contains(err.Error(), "at least one store") {
		t.Errorf("no stores: %v", err)
	}
	if _, err := rlprom.NewCollectorOf(map[string]*rl.Store{"x": nil}, "store"); err == nil || !strings.Contains(err.Error(), `store "x" is nil`) {
		t.Errorf("a nil store: %v", err)
	}
	if _, err := rlprom.NewCollectorOf(map[string]*rl.Store{"x": new(rl.Store)}, "bad-label"); err == nil || !strings.Contains(err.Error(), "valid label name") {
		t.Errorf("a bad label: %v", err)
	}
}
