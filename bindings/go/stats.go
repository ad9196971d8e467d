package rl

// #include "shim.h"
import "C"

import (
	"fmt"
	"time"
)

// BreakerState is the state of a store's circuit breaker (rl_breaker_state).
type BreakerState int

const (
	// BreakerClosed: calls go to the store.
	BreakerClosed BreakerState = C.RL_BREAKER_CLOSED
	// BreakerOpen: calls take the limiter's OnFailure at once.
	BreakerOpen BreakerState = C.RL_BREAKER_OPEN
	// BreakerHalfOpen: one probe is in flight.
	BreakerHalfOpen BreakerState = C.RL_BREAKER_HALF_OPEN
)

// String is the state's name as librl gives it (rl_breaker_state_name:
// "closed", "open", "half_open"), or "state_N" for a value this librl
// does not know.
func (b BreakerState) String() string {
	if name := C.rl_breaker_state_name(C.int(b)); name != nil {
		return C.GoString(name)
	}
	return fmt.Sprintf("state_%d", int(b))
}

// Verdicts counts decisions by verdict.
type Verdicts struct {
	Allowed, Denied uint64
}

// Stats is what a store has done since it opened (rl_store_get_stats).
// Counters never go down.
type Stats struct {
	Breaker       BreakerState
	BreakerOpened uint64 // times the breaker opened
	// Decisions by who decided: Decisions[SourceFailOpen].Allowed counts
	// the calls that failed open.
	Decisions map[Source]Verdicts
	// Failures are the calls that ended in an error, by status (every
	// failure status, zeros included).
	Failures map[Status]uint64
	// RoundTrips to the store (none for memory://) and their latency
	// quantiles: the upper bound of a log-linear bucket, within 12.5%.
	RoundTrips                               uint64
	RoundTripP50, RoundTripP95, RoundTripP99 time.Duration
	RoundTripMax                             time.Duration
}

// Healthy is true while the breaker is closed.
func (s Stats) Healthy() bool { return s.Breaker == BreakerClosed }

// Stats reads the store's statistics. After Close it fails with ErrShutdown.
func (s *Store) Stats() (Stats, error) {
	var c C.rl_store_stats
	C.rl_store_stats_init(&c, C.RL_STORE_STATS_VERSION, nil) // RL_STORE_STATS_INIT
	err := s.with(func(store *C.rl_store) error {
		var cerr *C.rl_error
		if st := C.rl_store_get_stats(store, &c, &cerr); st != C.RL_OK {
			return takeError(st, cerr)
		}
		return nil
	})
	if err != nil {
		return Stats{}, err
	}
	out := Stats{
		Breaker:       BreakerState(c.breaker_state),
		BreakerOpened: uint64(c.breaker_opened),
		Decisions:     make(map[Source]Verdicts, C.RL_SOURCE_COUNT),
		Failures:      make(map[Status]uint64, C.RL_STATUS_COUNT),
		RoundTrips:    uint64(c.round_trips),
		RoundTripP50:  time.Duration(c.round_trip_p50_us) * time.Microsecond,
		RoundTripP95:  time.Duration(c.round_trip_p95_us) * time.Microsecond,
		RoundTripP99:  time.Duration(c.round_trip_p99_us) * time.Microsecond,
		RoundTripMax:  time.Duration(c.round_trip_max_us) * time.Microsecond,
	}
	for i := 0; i < C.RL_SOURCE_COUNT && i < len(c.allowed); i++ {
		out.Decisions[Source(i)] = Verdicts{Allowed: uint64(c.allowed[i]), Denied: uint64(c.denied[i])}
	}
	for i := 1; i < C.RL_STATUS_COUNT && i < len(c.failures); i++ {
		out.Failures[Status(i)] = uint64(c.failures[i])
	}
	return out, nil
}

// Healthy is true while the store's circuit breaker is closed (always for
// memory://); false once the store is closed.
func (s *Store) Healthy() bool {
	stats, err := s.Stats()
	return err == nil && stats.Healthy()
}

// Metrics is the store's statistics in the Prometheus text exposition
// format (version 0.0.4), as rl renders them; "" once the store is closed.
// rlhttp.MetricsHandler serves it.
func (s *Store) Metrics() string {
	var text string
	s.with(func(store *C.rl_store) error {
		if buf := C.rl_store_metrics(store); buf != nil {
			text = C.GoString(buf)
			C.rl_string_free(buf)
		}
		return nil
	})
	return text
}
