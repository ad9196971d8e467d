// Package rlhttp is net/http middleware over an rl.Limiter: it answers 429
// Too Many Requests when the limiter denies, and tells clients their quota
// with the RateLimit-Policy and RateLimit header fields of the IETF draft
// "RateLimit header fields for HTTP" and Retry-After.
//
// The header fields are librl's (rl.HeaderRenderer, docs/http-headers.md):
// the Node and Java bindings send the same bytes for the same decision.
//
// What a store outage does is the limiter's rl.Config.OnFailure
// (docs/failure.md): FailOpen lets requests through (without RateLimit
// headers: nothing was counted), FailLocal decides them in this process,
// and FailClosed (the default) makes the call fail with an outage
// (rl.Status.IsOutage: a timeout, an unreachable store), which the
// middleware answers 503 Service Unavailable, never 429. Every other
// failure (a bad key, a closed store, refused credentials) goes to OnError,
// as the Node middleware passes it to next(err). The decision, its Source
// included, is in the request's context for the next handler
// (DecisionFrom).
package rlhttp

import (
	"context"
	"errors"
	"net"
	"net/http"

	rl "github.com/rl-dev/rl/bindings/go"
)

// Options tune the middleware; the zero value is ready to use.
type Options struct {
	// Key names whom a request counts against. Default: the client's IP
	// address (the host of RemoteAddr).
	Key func(*http.Request) string
	// OnError answers when the limiter fails with anything but an outage
	// (a bad key, a closed store, refused credentials...), in which case rl
	// has neither admitted nor denied the request. Default: 500 Internal
	// Server Error. An outage is always 503 Service Unavailable.
	OnError func(http.ResponseWriter, *http.Request, error)
}

type decisionKey struct{}

// DecisionFrom is the decision the middleware made for the request whose
// context this is (false outside the middleware).
func DecisionFrom(ctx context.Context) (rl.Decision, bool) {
	d, ok := ctx.Value(decisionKey{}).(rl.Decision)
	return d, ok
}

// Middleware limits next with lim: one unit per request.
func Middleware(lim *rl.Limiter, opts Options) func(http.Handler) http.Handler {
	if opts.Key == nil {
		opts.Key = ClientIP
	}
	if opts.OnError == nil {
		opts.OnError = func(w http.ResponseWriter, _ *http.Request, _ error) {
			http.Error(w, "rate limiter failed", http.StatusInternalServerError)
		}
	}
	headers := rl.NewHeaderRenderer(lim.Name(), lim.Limits())
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			d, err := lim.Acquire(r.Context(), opts.Key(r), 1)
			if err != nil {
				var rlErr *rl.Error
				if errors.As(err, &rlErr) && rlErr.Status.IsOutage() {
					http.Error(w, "Service Unavailable: rate limiter store unreachable", http.StatusServiceUnavailable)
					return
				}
				opts.OnError(w, r, err)
				return
			}
			// None for a fail-open decision, which counted nothing.
			fields, err := headers.Fields(d)
			if err != nil {
				opts.OnError(w, r, err)
				return
			}
			for _, f := range fields {
				w.Header().Set(f.Name, f.Value)
			}
			if !d.Allowed {
				http.Error(w, "too many requests", http.StatusTooManyRequests)
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), decisionKey{}, d)))
		})
	}
}

// ClientIP is the host part of r.RemoteAddr. Behind a proxy, use a Key that
// reads the header your proxy sets instead.
func ClientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
