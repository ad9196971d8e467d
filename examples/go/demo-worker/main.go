// The Go worker of scripts/demo: hammers one key through one shared limit
// and prints what it was admitted as one line of JSON.
//
//	go run -tags rl_repo ./demo-worker URL NAME LIMIT KEY ATTEMPTS
//	go run -tags rl_repo ./demo-worker redis://127.0.0.1:6379 demo "100/1h" shared 400
//
// It opens its store and limiter, prints "ready", and waits for the start
// signal (a line on stdin, or its end) before its first call, so that every
// worker of the demo starts at the same instant (examples/README.md).
// Errors go to stderr with exit code 1.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	FirstCallUS  int64   `json:"first_call_us"`  // wall clock, comparable across processes
	LastReturnUS int64   `json:"last_return_us"` // wall clock
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
	lim, closeAll, err := open(url, rl.Config{Algorithm: rl.GCRA, Name: name, Limit: limit}, key)
	if err != nil {
		fail(err)
	}
	defer closeAll()
	fmt.Println("ready")
	waitForStart(os.Stdin)
	r, err := hammer(lim, key, attempts)
	if err != nil {
		closeAll()
		fail(err)
	}
	line, _ := json.Marshal(r)
	fmt.Println(string(line))
}

// open makes the limiter, and a peek (which records nothing) makes the
// first round trip, so that connecting happens before "ready".
func open(url string, cfg rl.Config, key string) (*rl.Limiter, func(), error) {
	ctx := context.Background()
	store, err := rl.Open(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	lim, err := store.Limiter(cfg)
	if err == nil {
		_, err = lim.Peek(ctx, key, 0)
	}
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return lim, func() { lim.Close(); store.Close() }, nil
}

// waitForStart returns at the start signal: a line on r, or its end.
func waitForStart(r io.Reader) {
	_, _ = bufio.NewReader(r).ReadString('\n')
}

func hammer(lim *rl.Limiter, key string, attempts int) (report, error) {
	ctx := context.Background()
	r := report{Worker: "go", PID: os.Getpid(), RetryAfterMS: []int64{}}
	var least, most time.Duration = -1, -1
	r.FirstCallUS = time.Now().UnixMicro()
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
	r.LastReturnUS = time.Now().UnixMicro()
	if r.Denied > 0 {
		r.RetryAfterMS = []int64{least.Milliseconds(), most.Milliseconds()}
	}
	return r, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "demo-worker:", err)
	os.Exit(1)
}
