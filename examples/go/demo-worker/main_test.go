package main

import (
	"testing"

	rl "github.com/rl-dev/rl/bindings/go"
)

func TestWorkerCountsWhatTheLimitAdmits(t *testing.T) {
	r, err := run("memory://", rl.Config{Algorithm: rl.GCRA, Name: "demo", Limit: "100/1h"}, "shared", 400)
	if err != nil {
		t.Fatal(err)
	}
	if r.Worker != "go" || r.Admitted != 100 || r.Denied != 300 || len(r.RetryAfterMS) != 2 {
		t.Fatalf("got %+v", r)
	}
	if lo, hi := r.RetryAfterMS[0], r.RetryAfterMS[1]; lo <= 0 || lo > hi || hi > 36000 {
		t.Fatalf("retry_after_ms %v is not [smallest, largest] within one emission interval", r.RetryAfterMS)
	}
}
