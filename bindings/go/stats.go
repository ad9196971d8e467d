package rl

import (
	"fmt"
	"time"
)

// BreakerState is the state of a store's circuit breaker (rl_breaker_state).
type BreakerState int

const (
	// BreakerClosed: calls go to the store.
	BreakerClosed BreakerState = rlBreakerClosed
	// BreakerOpen: calls take the limiter's OnFailure at once.
	BreakerOpen BreakerState = rlBreakerOpen
	// BreakerHalfOpen: one probe is in flight.
	BreakerHalfOpen BreakerState = rlBreakerHalfOpen
)

// String is the state's name as librl gives it (rl_breaker_state_name:
// "closed", "open", "half_open"), or "state_N" for a value this librl
// does not know.
func (b BreakerState) String() string {
	if name, ok := rlBreakerStateName(int(b)); ok {
		return name
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
	// Leases of every limiter of the store (Config lease=auto).
	Leases LeaseStats
}

// LeaseStats counts what the leases of a store's limiters did
// (docs/algorithms.md, "Leases").
type LeaseStats struct {
	Taken         uint64 // slices the store granted
	UnitsLeased   uint64 // units in them
	UnitsUnused   uint64 // units left in slices when their lease ended
	UnitsReturned uint64 // of those, units handed back to the store
	// Decisions made from a slice with no store call (also counted in
	// Decisions[SourceStore].Allowed).
	Decisions uint64
}

// Healthy is true while the breaker is closed.
func (s Stats) Healthy() bool { return s.Breaker == BreakerClosed }

// Stats reads the store's statistics. After Close it fails with ErrShutdown.
func (s *Store) Stats() (Stats, error) {
	var c storeStats
	err := s.with(func(store *nativeStore) (err error) {
		c, err = rlStoreGetStats(store)
		return err
	})
	if err != nil {
		return Stats{}, err
	}
	out := Stats{
		Breaker:       BreakerState(c.breakerState),
		BreakerOpened: c.breakerOpened,
		Decisions:     make(map[Source]Verdicts, rlSourceCount),
		Failures:      make(map[Status]uint64, rlStatusCount),
		RoundTrips:    c.roundTrips,
		RoundTripP50:  time.Duration(c.p50Us) * time.Microsecond,
		RoundTripP95:  time.Duration(c.p95Us) * time.Microsecond,
		RoundTripP99:  time.Duration(c.p99Us) * time.Microsecond,
		RoundTripMax:  time.Duration(c.maxUs) * time.Microsecond,
		Leases: LeaseStats{Taken: c.leases[0], UnitsLeased: c.leases[1], UnitsUnused: c.leases[2],
			UnitsReturned: c.leases[3], Decisions: c.leases[4]},
	}
	for i := 0; i < rlSourceCount && i < len(c.allowed); i++ {
		out.Decisions[Source(i)] = Verdicts{Allowed: c.allowed[i], Denied: c.denied[i]}
	}
	for i := 1; i < rlStatusCount && i < len(c.failures); i++ {
		out.Failures[Status(i)] = c.failures[i]
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
	s.with(func(store *nativeStore) error {
		text = rlStoreMetrics(store)
		return nil
	})
	return text
}
