// The Go worker of scripts/demo: hammers one key through one shared limit
// and prints what it was admitted as one line of JSON.
//
//	go run ./demo-worker URL NAME LIMIT KEY ATTEMPTS
//	go run ./demo-worker redis://127.0.0.1:6379 demo "100/1h" shared 400
//
// Errors go to stderr with exit code 1.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	rl "github.com/rl-dev/rl/bindings/go"
)

type report struct {
	Worker       string  `json:"worker"`
	PID          int     `json:"pid"`
	Admitted     int     `json:"admitted"`
	Denied       int     `json:"denied"`
	RetryAfterMS []int64 `json:"retry_after_ms"` // [smallest, largest], or empty
}

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: demo-worker URL NAME LIMIT KEY ATTEMPTS")
		os.Exit(1)
	}
	url, name, limit, key := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	attempts, err := strconv.Atoi(os.Args[5])
	if err == nil && attempts < 0 {
		err = fmt.Errorf("%d is negative", attempts)
	}
	if err != nil {
		fail(fmt.Errorf("ATTEMPTS: %v", err))
	}
	r, err := run(url, rl.Config{Algorithm: rl.GCRA, Name: name, Limit: limit}, key, attempts)
	if err != nil {
		fail(err)
	}
	line, _ := json.Marshal(r)
	fmt.Println(string(line))
}

func run(url string, cfg rl.Config, key string, attempts int) (report, error) {
	ctx := context.Background()
	r := report{Worker: "go", PID: os.Getpid(), RetryAfterMS: []int64{}}
	store, err := rl.Open(ctx, url)
	if err != nil {
		return r, err
	}
	defer store.Close()
	lim, err := store.Limiter(cfg)
	if err != nil {
		return r, err
	}
	defer lim.Close()
	var least, most time.Duration = -1, -1
	for i := 0; i < attempts; i++ {
		d, err := lim.Acquire(ctx, key, 1)
		if err != nil {
			return r, err
		}
		if d.Allowed {
			r.Admitted++
			continue
		}
		r.Denied++
		if least < 0 || d.RetryAfter < least {
			least = d.RetryAfter
		}
		most = max(most, d.RetryAfter)
	}
	if r.Denied > 0 {
		r.RetryAfterMS = []int64{least.Milliseconds(), most.Milliseconds()}
	}
	return r, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "demo-worker:", err)
	os.Exit(1)
}
