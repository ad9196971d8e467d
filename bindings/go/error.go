package rl

// Error is a failure reported by rl: the C status and the message that names
// what was wrong. Compare with the sentinels through errors.Is:
//
//	if errors.Is(err, rl.ErrShutdown) { ... }
//
// Being denied is not an error: it is a Decision with Allowed false.
type Error struct {
	Status  Status
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "rl: " + e.Status.String()
	}
	return "rl: " + e.Status.String() + ": " + e.Message
}

// Is reports whether target is an *Error with the same Status, so that
// errors.Is(err, rl.ErrTimeout) holds whatever the message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Status == e.Status
}

func newError(status Status, message string) *Error {
	return &Error{Status: status, Message: message}
}
