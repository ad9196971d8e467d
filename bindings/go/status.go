package rl

import "fmt"

// Status is an rl_status of the C ABI. Its constants (StatusOK,
// StatusInvalidArgument, ...) are generated from rl.h into status_gen.go.
type Status int

// statusNames holds rl_status_name of the linked library for every status
// it knows, read once: a newer library's new statuses get their names too.
var statusNames = func() []string {
	names := make([]string, rlStatusCount)
	for i := range names {
		names[i] = rlStatusName(i)
	}
	return names
}()

// String is the C name of the status, such as "RL_E_TIMEOUT".
func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("RL_STATUS(%d)", int(s))
}

// Description is what the status means, in one line ("the store (Redis)
// could not be reached"), from librl's table (rl_status_description).
func (s Status) Description() string {
	if d, ok := rlStatusDescription(int(s)); ok {
		return d
	}
	return fmt.Sprintf("status %d, which this librl does not know", int(s))
}

// IsOutage is true when the status means the store had an outage
// (StatusTimeout, StatusBackendUnavailable): the failures Config.OnFailure
// and the circuit breaker act on, and rlhttp answers 503 (rl_status_is_outage).
func (s Status) IsOutage() bool {
	return rlStatusIsOutage(int(s))
}
