// An HTTP server limited per client IP by rl's net/http middleware:
//
//	go run -tags rl_repo ./http-server -store memory:// -limit 5/10s -addr 127.0.0.1:8080
//	curl -i http://127.0.0.1:8080/   # the sixth call within 10s is a 429
//
// With -store redis://127.0.0.1:6379 every instance of the server shares
// the same limits; -on-failure open|local|closed chooses what a Redis
// outage gives (docs/failure.md). GET /metrics serves the store's
// Prometheus metrics.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"

	rl "github.com/rl-dev/rl/bindings/go"
	"github.com/rl-dev/rl/bindings/go/rlhttp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	storeURL := flag.String("store", "memory://", "rl store URL")
	limit := flag.String("limit", "5/10s", "requests per window per client")
	onFailure := flag.String("on-failure", "closed", "what a store outage gives: closed, open or local")
	flag.Parse()

	store, err := rl.Open(context.Background(), *storeURL)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	lim, err := store.Limiter(rl.Config{Algorithm: rl.GCRA, Limit: *limit, Name: "http-example",
		OnFailure: rl.OnFailure(*onFailure)})
	if err != nil {
		log.Fatal(err)
	}
	defer lim.Close()

	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello, %s\n", rlhttp.ClientIP(r))
	})
	http.Handle("/", rlhttp.Middleware(lim, rlhttp.Options{})(hello))
	http.Handle("/metrics", rlhttp.MetricsHandler(store))
	log.Printf("listening on http://%s (limit %s per client)", *addr, *limit)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
