package rlhttp

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// quota is one limit of a limiter's Limit setting, for the RateLimit-Policy
// header: q units per w.
type quota struct {
	units  int64
	window time.Duration
}

var units = map[string]time.Duration{
	"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second,
	"m": time.Minute, "h": time.Hour, "d": 24 * time.Hour,
}

// parseQuotas reads "100/1m" or "10/s, 1000/h". rl has already validated the
// text when it made the limiter, so this only takes it apart; it errs on
// anything it does not follow rather than guess.
func parseQuotas(limit string) ([]quota, error) {
	var out []quota
	for _, part := range strings.Split(limit, ",") {
		count, window, ok := strings.Cut(strings.TrimSpace(part), "/")
		if !ok {
			return nil, fmt.Errorf("limit %q: no '/' in %q", limit, part)
		}
		n, err := strconv.ParseInt(count, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("limit %q: count %q", limit, count)
		}
		digits := strings.TrimRight(window, "abcdefghijklmnopqrstuvwxyz")
		unit, ok := units[window[len(digits):]]
		if !ok {
			return nil, fmt.Errorf("limit %q: unit of %q", limit, window)
		}
		times := int64(1)
		if digits != "" {
			if times, err = strconv.ParseInt(digits, 10, 64); err != nil {
				return nil, fmt.Errorf("limit %q: window %q", limit, window)
			}
		}
		out = append(out, quota{units: n, window: time.Duration(times) * unit})
	}
	return out, nil
}

// seconds rounds d up to whole seconds, as the headers count them.
func seconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}
