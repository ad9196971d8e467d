package main

import (
	"testing"

	rl "github.com/rl-dev/rl/bindings/go"
)

func TestWorkerCountsWhatTheLimitAdmits(t *testing.T) {
	lim, closeAll, err := open("memory://", rl.Config{Algorithm: rl.GCRA, Name: "demo", Limit: "100/1h"}, "shared")
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	r, err := hammer(lim, "shared", 400)
	if err != nil {
		t.Fatal(err)
	}
	if r.Worker != "go" || r.Admitted != 100 || r.Denied != 300 || len(r.RetryAfterMS) != 2 {
		t.Fatalf("got %+v", r)
	}
	if lo, hi := r.RetryAfterMS[0], r.RetryAfterMS[1]; lo <= 0 || lo > hi || hi > 36000 {
		t.Fatalf("retry_after_ms %v is not [smallest, largest] within one emission interval", r.RetryAfterMS)
	}
	if r.FirstCallUS <= 0 || r.LastReturnUS < r.FirstCallUS {
		t.Fatalf("first_call_us %d, last_return_us %d: not a wall-clock interval", r.FirstCallUS, r.LastReturnUS)
	}
}
