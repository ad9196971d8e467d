package rlhttp

import (
	"context"
	"testing"
	"time"
)

type ctxKey struct{}

// A request's context without a deadline loses its cancelation (so that a
// lone acquire may block on the handler's thread) and keeps its values.
func TestAcquireContextDropsCancelationWithoutDeadline(t *testing.T) {
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	defer cancel()
	ctx := acquireContext(parent)
	if ctx.Done() != nil {
		t.Fatal("the acquire's context can be canceled: it takes the asynchronous path")
	}
	if ctx.Value(ctxKey{}) != "v" {
		t.Fatal("the acquire's context lost the request's values")
	}
}

// A deadline is kept: the store ends the call by it.
func TestAcquireContextKeepsDeadline(t *testing.T) {
	parent, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if ctx := acquireContext(parent); ctx != parent {
		t.Fatal("a context with a deadline was replaced")
	}
}
