package rlhttp

// The middleware on a store outage (nothing listens on port 1), under each
// OnFailure, and the metrics handler.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	rl "github.com/rl-dev/rl/bindings/go"
)

type outageAnswer struct {
	code   int
	passed bool
	source rl.Source
	header http.Header
}

func answerDuringOutage(t *testing.T, onFailure rl.OnFailure) outageAnswer {
	return answerDuringOutageWith(t, onFailure, Options{})
}

func answerDuringOutageWith(t *testing.T, onFailure rl.OnFailure, opts Options) outageAnswer {
	t.Helper()
	store, err := rl.Open(context.Background(), "redis://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	lim, err := store.Limiter(rl.Config{Limit: "1/1m", Name: "api", OnFailure: onFailure})
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	var a outageAnswer
	next := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		a.passed = true
		d, ok := DecisionFrom(r.Context())
		if !ok {
			t.Error("no decision in the request's context")
		}
		a.source = d.Source
	})
	rec := httptest.NewRecorder()
	Middleware(lim, opts)(next).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	a.code, a.header = rec.Code, rec.Header()
	return a
}

func TestOutageFailOpenLetsThroughWithoutRateLimitHeaders(t *testing.T) {
	a := answerDuringOutage(t, rl.FailOpen)
	if a.code != 200 || !a.passed || a.source != rl.SourceFailOpen {
		t.Fatalf("%+v, want 200 from fail_open", a)
	}
	if a.header.Get("RateLimit") != "" || a.header.Get("RateLimit-Policy") != "" {
		t.Fatalf("headers %v: nothing was counted", a.header)
	}
}

func TestOutageFailLocalDecidesInProcessWithHeaders(t *testing.T) {
	a := answerDuringOutage(t, rl.FailLocal)
	if a.code != 200 || !a.passed || a.source != rl.SourceLocal {
		t.Fatalf("%+v, want 200 from local", a)
	}
	if got := a.header.Get("RateLimit"); got != `"api";r=0;t=60` {
		t.Fatalf("RateLimit = %q", got)
	}
}

func TestOutageFailClosedIs503Not429(t *testing.T) {
	a := answerDuringOutage(t, rl.FailClosed)
	if a.code != http.StatusServiceUnavailable || a.passed {
		t.Fatalf("%+v, want 503", a)
	}
}

// An outage is the middleware's 503 whatever OnError does, as in the Node
// middleware: OnError is for the other failures.
func TestOutageIs503WithoutOnError(t *testing.T) {
	called := false
	onError := func(w http.ResponseWriter, _ *http.Request, _ error) { called = true }
	a := answerDuringOutageWith(t, rl.FailClosed, Options{OnError: onError})
	if a.code != http.StatusServiceUnavailable || called {
		t.Fatalf("%+v (OnError called: %v), want the middleware's 503", a, called)
	}
}

func TestMetricsHandlerServesTheStoresPrometheusText(t *testing.T) {
	store, err := rl.Open(context.Background(), "memory://")
	if err != nil {
		t.Fatal(err)
	}
	lim, err := store.Limiter(rl.Config{Limit: "1/1m"})
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	lim.Acquire(context.Background(), "k", 1)
	handler := MetricsHandler(store)
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" {
		t.Fatalf("%d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if body := rec.Body.String(); body != store.Metrics() ||
		!strings.Contains(body, `rl_decisions_total{verdict="allowed",source="store"} 1`) {
		t.Fatalf("body:\n%s", body)
	}
	store.Close()
	rec = httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("closed store: %d", rec.Code)
	}
}
