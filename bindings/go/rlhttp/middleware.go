// Package rlhttp is net/http middleware over an rl.Limiter: it answers 429
// Too Many Requests when the limiter denies, and tells clients their quota
// with the RateLimit-Policy and RateLimit header fields of the IETF draft
// "RateLimit header fields for HTTP" and Retry-After.
package rlhttp

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	rl "github.com/rl-dev/rl/bindings/go"
)

// Options tune the middleware; the zero value is ready to use.
type Options struct {
	// Key names whom a request counts against. Default: the client's IP
	// address (the host of RemoteAddr).
	Key func(*http.Request) string
	// OnError answers when the limiter fails (Redis down, bad key...), in
	// which case rl has neither admitted nor denied the request. Default:
	// 503 Service Unavailable.
	OnError func(http.ResponseWriter, *http.Request, error)
}

// Middleware limits next with lim: one unit per request.
func Middleware(lim *rl.Limiter, opts Options) func(http.Handler) http.Handler {
	if opts.Key == nil {
		opts.Key = ClientIP
	}
	if opts.OnError == nil {
		opts.OnError = func(w http.ResponseWriter, _ *http.Request, _ error) {
			http.Error(w, "rate limiter unavailable", http.StatusServiceUnavailable)
		}
	}
	headers := newHeaders(lim)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			d, err := lim.Acquire(r.Context(), opts.Key(r), 1)
			if err != nil {
				opts.OnError(w, r, err)
				return
			}
			headers.set(w.Header(), d)
			if !d.Allowed {
				http.Error(w, "too many requests", http.StatusTooManyRequests)
				return
			}
			next.ServeHTTP(w, r)
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

// headers writes the header fields of one limiter's decisions.
type headers struct {
	name   string     // the policy's name in the header fields
	policy string     // RateLimit-Policy
	limits []rl.Limit // as rl parsed them
}

func newHeaders(lim *rl.Limiter) headers {
	h := headers{name: lim.Name(), limits: lim.Limits()}
	items := make([]string, len(h.limits))
	for i, l := range h.limits {
		items[i] = fmt.Sprintf("%q;q=%d;w=%d", h.itemName(i), l.Limit, seconds(l.Window))
	}
	h.policy = strings.Join(items, ", ")
	return h
}

// itemName names the i-th limit: the limiter's name, with "-i" when it
// has several (as the Node middleware does).
func (h headers) itemName(i int) string {
	if len(h.limits) < 2 {
		return h.name
	}
	return fmt.Sprintf("%s-%d", h.name, i)
}

func (h headers) set(header http.Header, d rl.Decision) {
	header.Set("RateLimit-Policy", h.policy)
	header.Set("RateLimit", fmt.Sprintf("%q;r=%d;t=%d", h.itemName(d.LimitIndex), d.Remaining, seconds(d.ResetAfter)))
	if !d.Allowed && d.RetryAfter != rl.Never {
		header.Set("Retry-After", fmt.Sprint(seconds(d.RetryAfter)))
	}
}

// seconds rounds d up to whole seconds, as the header fields count them.
func seconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}
