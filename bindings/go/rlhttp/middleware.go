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
	"time"

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
	keys := headerKeys(headers)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			d, err := lim.Acquire(rl.DeadlineOnly(r.Context()), opts.Key(r), 1)
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
			var buf [3]rl.HeaderField
			fields, err := headers.AppendFields(buf[:0], d)
			if err != nil {
				opts.OnError(w, r, err)
				return
			}
			setFields(w.Header(), keys, fields)
			if !d.Allowed {
				http.Error(w, "too many requests", http.StatusTooManyRequests)
				return
			}
			next.ServeHTTP(w, r.WithContext(&decisionContext{r.Context(), d}))
		})
	}
}

// headerKeys are the canonical keys (http.CanonicalHeaderKey) of the
// fields a renderer sends, made once: Header.Set would make each anew per
// request ("RateLimit-Policy" is "Ratelimit-Policy" in Go's form).
func headerKeys(headers *rl.HeaderRenderer) map[string]string {
	keys := map[string]string{}
	// A denial that can be retried has every field.
	fields, _ := headers.Fields(rl.Decision{RetryAfter: time.Second, Source: rl.SourceStore})
	for _, f := range fields {
		keys[f.Name] = http.CanonicalHeaderKey(f.Name)
	}
	return keys
}

// setFields is Header.Set of each field, with one slice under all the
// values (each capped, so that an Add appends elsewhere).
func setFields(h http.Header, keys map[string]string, fields []rl.HeaderField) {
	if len(fields) == 0 {
		return
	}
	values := make([]string, len(fields))
	for i, f := range fields {
		key, ok := keys[f.Name]
		if !ok {
			key = http.CanonicalHeaderKey(f.Name)
		}
		values[i] = f.Value
		h[key] = values[i : i+1 : i+1]
	}
}

// decisionContext is the request's context with the decision in it
// (DecisionFrom): context.WithValue's, in one allocation instead of two
// (its value would be boxed on its own).
type decisionContext struct {
	context.Context
	d rl.Decision
}

func (c *decisionContext) Value(key any) any {
	if _, ok := key.(decisionKey); ok {
		return c.d
	}
	return c.Context.Value(key)
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
