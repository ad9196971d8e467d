package rlhttp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	rl "github.com/rl-dev/rl/bindings/go"
)

func TestMiddlewareAnswers429WithRateLimitHeaders(t *testing.T) {
	store, err := rl.Open(context.Background(), "memory://?clock=manual")
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	lim, err := store.Limiter(rl.Config{Limit: "2/1m", Name: "api"})
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("hello")) })
	handler := Middleware(lim, Options{})(ok)

	get := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = "192.0.2.1:5555"
		handler.ServeHTTP(rec, req)
		return rec
	}
	first := get()
	if first.Code != 200 || first.Body.String() != "hello" {
		t.Fatalf("first: %d %q", first.Code, first.Body.String())
	}
	if got := first.Header().Get("RateLimit-Policy"); got != `"api";q=2;w=60` {
		t.Fatalf("RateLimit-Policy = %q", got)
	}
	if got := first.Header().Get("RateLimit"); got != `"api";r=1;t=30` {
		t.Fatalf("RateLimit = %q", got)
	}
	get()
	third := get()
	if third.Code != http.StatusTooManyRequests {
		t.Fatalf("third: %d, want 429", third.Code)
	}
	if got := third.Header().Get("Retry-After"); got != "30" {
		t.Fatalf("Retry-After = %q, want 30", got)
	}
	if got := third.Header().Get("RateLimit"); got != `"api";r=0;t=60` {
		t.Fatalf("RateLimit = %q", got)
	}
	store.AdvanceClock(30 * time.Second)
	if rec := get(); rec.Code != 200 {
		t.Fatalf("30s later: %d", rec.Code)
	}
}

// A failure that is not an outage (here a closed store) goes to OnError,
// 500 by default, as the Node middleware passes it to next(err); only an
// outage is 503 (failure_test.go).
func TestMiddlewareSendsOtherFailuresToOnError(t *testing.T) {
	store, _ := rl.Open(context.Background(), "memory://")
	lim, _ := store.Limiter(rl.Config{Limit: "2/1m"})
	defer lim.Close()
	store.Close()
	rec := httptest.NewRecorder()
	Middleware(lim, Options{})(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("got %d, want 500", rec.Code)
	}
	var got error
	onError := func(w http.ResponseWriter, _ *http.Request, err error) {
		got = err
		w.WriteHeader(http.StatusTeapot)
	}
	rec = httptest.NewRecorder()
	Middleware(lim, Options{OnError: onError})(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusTeapot || !errors.Is(got, rl.ErrShutdown) {
		t.Fatalf("got %d and %v, want OnError's answer to ErrShutdown", rec.Code, got)
	}
}

func TestRateLimitNamesTheDecidingLimitWhenLimitsShareAValue(t *testing.T) {
	store, err := rl.Open(context.Background(), "memory://?clock=manual")
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	lim, err := store.Limiter(rl.Config{Limit: "1/s, 1/1h"})
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	handler := Middleware(lim, Options{})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	get := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		return rec
	}
	if got := get().Header().Get("RateLimit"); got != `"default-0";r=0;t=3600` {
		t.Fatalf("first RateLimit = %q (a tie names the first limit)", got)
	}
	store.AdvanceClock(2 * time.Second) // 1/s is full again, 1/1h is not: it decides
	rec := get()
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d", rec.Code)
	}
	if got := rec.Header().Get("RateLimit"); got != `"default-1";r=0;t=3598` {
		t.Fatalf("RateLimit = %q, want the 1/1h limit named", got)
	}
}
