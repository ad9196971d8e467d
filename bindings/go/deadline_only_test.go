package rl

import (
	"context"
	"testing"
	"time"
)

type ctxKey struct{}

// A context loses its cancelation (so that a lone acquire may block on the
// handler's thread) and keeps its values and its deadline, which the store
// ends the call by.
func TestDeadlineOnlyDropsCancelationKeepsDeadline(t *testing.T) {
	deadline := time.Now().Add(time.Hour)
	parent, cancel := context.WithDeadline(context.WithValue(context.Background(), ctxKey{}, "v"), deadline)
	defer cancel()
	ctx := DeadlineOnly(parent)
	if ctx.Done() != nil {
		t.Fatal("the acquire's context can be canceled: it takes the asynchronous path")
	}
	if ctx.Value(ctxKey{}) != "v" {
		t.Fatal("the acquire's context lost the values")
	}
	if got, ok := ctx.Deadline(); !ok || !got.Equal(deadline) {
		t.Fatalf("deadline %v %v, want %v", got, ok, deadline)
	}
	plain, cancelPlain := context.WithCancel(context.Background())
	defer cancelPlain()
	if _, ok := DeadlineOnly(plain).Deadline(); ok {
		t.Fatal("a context without a deadline got one")
	}
}

// A context already ended is passed as it is: the call fails with its error.
func TestDeadlineOnlyPassesAnEndedContext(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	cancel()
	if ctx := DeadlineOnly(parent); ctx != parent {
		t.Fatal("an ended context was replaced")
	}
}
