// bench/frameworks' net/http server: /bare, /limited behind rlhttp's
// middleware, /store: the microseconds one acquire of the same limiter
// takes, as the middleware makes it, timed in the app.
//
//	RL_URL=redis://... frameworks   # prints "listening on http://127.0.0.1:PORT"
package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/rl-dev/rl/bench/go/internal/fwlimiter"
	rl "github.com/rl-dev/rl/bindings/go"
	"github.com/rl-dev/rl/bindings/go/rlhttp"
)

func main() {
	store, lim, err := fwlimiter.Open(context.Background(), os.Getenv("RL_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	defer lim.Close()

	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	mux := http.NewServeMux()
	mux.Handle("/bare", ok)
	mux.Handle("/limited", rlhttp.Middleware(lim, rlhttp.Options{
		Key: func(r *http.Request) string { return r.Header.Get("X-Api-Key") }})(ok))
	mux.HandleFunc("/store", func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		// The context rlhttp acquires with: the same synchronous call.
		if _, err := lim.Acquire(rl.DeadlineOnly(r.Context()), r.Header.Get("X-Api-Key"), 1); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, float64(time.Since(began).Nanoseconds())/1000)
	})

	port := os.Getenv("PORT")
	if port == "" {
		port = "0"
	}
	lis, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s\n", lis.Addr())
	log.Fatal(http.Serve(lis, mux))
}
