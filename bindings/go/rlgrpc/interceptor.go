// Package rlgrpc limits gRPC servers with an rl.Limiter: unary and stream
// server interceptors that answer RESOURCE_EXHAUSTED when the limiter
// denies, with the IETF RateLimit fields (ratelimit-policy, ratelimit,
// retry-after: librl's rendering, the bytes the HTTP middlewares send) in
// the trailers, and in the headers of a call that is let through.
//
//	srv := grpc.NewServer(
//		grpc.ChainUnaryInterceptor(rlgrpc.UnaryServerInterceptor(lim, rlgrpc.Options{})),
//		grpc.ChainStreamInterceptor(rlgrpc.StreamServerInterceptor(lim, rlgrpc.Options{})))
//
// A store outage under rl.FailClosed is UNAVAILABLE (never
// RESOURCE_EXHAUSTED); FailOpen lets the call through without fields
// (nothing was counted); every other failure is INTERNAL. It is a module of
// its own so that rl does not depend on grpc-go.
package rlgrpc

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	rl "github.com/rl-dev/rl/bindings/go"
)

// Options tune the interceptors; the zero value is ready to use.
type Options struct {
	// Key names whom a call counts against. Default: the peer's IP address.
	Key func(ctx context.Context, fullMethod string) string
	// Cost is the units a call takes. Default: 1.
	Cost func(ctx context.Context, fullMethod string) int64
	// Skip exempts methods (e.g. health checks). Default: none.
	Skip func(fullMethod string) bool
}

type decisionKey struct{}

// DecisionFrom is the decision the interceptor made for the call whose
// context this is (false outside it, or for a skipped method).
func DecisionFrom(ctx context.Context) (rl.Decision, bool) {
	d, ok := ctx.Value(decisionKey{}).(rl.Decision)
	return d, ok
}

// PeerIP is the host part of the calling peer's address.
func PeerIP(ctx context.Context, _ string) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return "unknown"
	}
	host, _, err := net.SplitHostPort(p.Addr.String())
	if err != nil {
		return p.Addr.String()
	}
	return host
}

type limiter struct {
	lim     *rl.Limiter
	opts    Options
	headers *rl.HeaderRenderer
	// keys are the metadata keys of the fields (lower case), by field name:
	// made once, not by md.Set per call.
	keys map[string]string
}

func newLimiter(lim *rl.Limiter, opts Options) *limiter {
	if opts.Key == nil {
		opts.Key = PeerIP
	}
	if opts.Cost == nil {
		opts.Cost = func(context.Context, string) int64 { return 1 }
	}
	l := &limiter{lim: lim, opts: opts, headers: rl.NewHeaderRenderer(lim.Name(), lim.Limits()), keys: map[string]string{}}
	// A denial that can be retried has every field.
	fields, _ := l.headers.Fields(rl.Decision{RetryAfter: time.Second, Source: rl.SourceStore})
	for _, f := range fields {
		l.keys[f.Name] = strings.ToLower(f.Name)
	}
	return l
}

// decide acquires for one call: its decision, the fields to send, or the
// gRPC status the call fails with.
func (l *limiter) decide(ctx context.Context, method string) (rl.Decision, metadata.MD, error) {
	d, err := l.lim.Acquire(rl.DeadlineOnly(ctx), l.opts.Key(ctx, method), l.opts.Cost(ctx, method))
	if err != nil {
		var rlErr *rl.Error
		if errors.As(err, &rlErr) && rlErr.Status.IsOutage() {
			return d, nil, status.Error(codes.Unavailable, "rate limiter store unreachable")
		}
		return d, nil, status.Error(codes.Internal, "rate limiter failed: "+err.Error())
	}
	var buf [3]rl.HeaderField
	fields, err := l.headers.AppendFields(buf[:0], d) // none for fail_open
	if err != nil {
		return d, nil, status.Error(codes.Internal, "rate limiter failed: "+err.Error())
	}
	var md metadata.MD
	if len(fields) > 0 {
		md = make(metadata.MD, len(fields))
		// One slice under all the values, each capped (an append goes elsewhere).
		values := make([]string, len(fields))
		for i, f := range fields {
			key, ok := l.keys[f.Name]
			if !ok {
				key = strings.ToLower(f.Name)
			}
			values[i] = f.Value
			md[key] = values[i : i+1 : i+1]
		}
	}
	if !d.Allowed {
		return d, md, status.Error(codes.ResourceExhausted, "rate limit exceeded")
	}
	return d, md, nil
}

// UnaryServerInterceptor limits unary calls with lim.
func UnaryServerInterceptor(lim *rl.Limiter, opts Options) grpc.UnaryServerInterceptor {
	l := newLimiter(lim, opts)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if l.opts.Skip != nil && l.opts.Skip(info.FullMethod) {
			return handler(ctx, req)
		}
		d, md, err := l.decide(ctx, info.FullMethod)
		if err != nil {
			if len(md) > 0 {
				_ = grpc.SetTrailer(ctx, md)
			}
			return nil, err
		}
		if len(md) > 0 {
			_ = grpc.SetHeader(ctx, md)
		}
		return handler(&decisionContext{ctx, d}, req)
	}
}

// StreamServerInterceptor limits streams with lim: one acquire per stream,
// when it opens.
func StreamServerInterceptor(lim *rl.Limiter, opts Options) grpc.StreamServerInterceptor {
	l := newLimiter(lim, opts)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if l.opts.Skip != nil && l.opts.Skip(info.FullMethod) {
			return handler(srv, ss)
		}
		d, md, err := l.decide(ss.Context(), info.FullMethod)
		if err != nil {
			if len(md) > 0 {
				ss.SetTrailer(md)
			}
			return err
		}
		if len(md) > 0 {
			_ = ss.SetHeader(md)
		}
		return handler(srv, &stream{ServerStream: ss, ctx: &decisionContext{ss.Context(), d}})
	}
}

// decisionContext is a call's context with the decision in it
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

// stream carries the decision in its context to the handler.
type stream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *stream) Context() context.Context { return s.ctx }
