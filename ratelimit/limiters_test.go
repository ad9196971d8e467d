package main

import (
	"math"
	"testing"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

// An envoy-counting limiter's capacity per unit: its one-number value
// packs until 2100; a limit at or above half of it counts under 2^40.
func TestCountingCapacity(t *testing.T) {
	for unit, bits := range map[pb.RateLimitResponse_RateLimit_Unit]int{
		pb.RateLimitResponse_RateLimit_SECOND: 21, pb.RateLimitResponse_RateLimit_MINUTE: 26,
		pb.RateLimitResponse_RateLimit_HOUR: 32, pb.RateLimitResponse_RateLimit_DAY: 37,
		pb.RateLimitResponse_RateLimit_WEEK: 40, pb.RateLimitResponse_RateLimit_MONTH: 40,
		pb.RateLimitResponse_RateLimit_YEAR: 40,
	} {
		c := int64(1) << bits
		if got := countingCapacity(&Rule{Unit: unit, RequestsPerUnit: 10}); got != c {
			t.Errorf("%v: capacity %d, want 2^%d", unit, got, bits)
		}
		window := uint64(4102444800/unitSeconds[unit]) + 2
		if window*uint64(c+1) >= 1<<53 {
			t.Errorf("%v: 2^%d does not pack in 2100", unit, bits)
		}
		if c/2 <= math.MaxUint32 {
			if got := countingCapacity(&Rule{Unit: unit, RequestsPerUnit: uint32(c / 2)}); got != 1<<40 {
				t.Errorf("%v: a limit of half the capacity counts under %d, want 2^40", unit, got)
			}
		}
		if got, want := countingCost(&Rule{Unit: unit, RequestsPerUnit: 10}, math.MaxUint32), min(c/2, math.MaxUint32); got != want {
			t.Errorf("%v: 2^32-1 hits record %d, want %d", unit, got, want)
		}
	}
}
