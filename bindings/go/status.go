package rl

// #include "shim.h"
import "C"

import "fmt"

// Status is an rl_status of the C ABI. Its constants (StatusOK,
// StatusInvalidArgument, ...) are generated from rl.h into status_gen.go.
type Status int

// statusNames holds rl_status_name of the linked library for every status
// it knows, read once: a newer library's new statuses get their names too.
var statusNames = func() []string {
	names := make([]string, C.RL_STATUS_COUNT)
	for i := range names {
		names[i] = C.GoString(C.rl_status_name(C.int(i)))
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
