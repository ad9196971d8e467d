package main

// ShouldRateLimit: a request's descriptors matched to rules, decided by rl
// (one batch per limiter the request touches, the limiters in parallel),
// answered in Envoy's terms as envoyproxy/ratelimit answers.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	rl "github.com/rl-dev/rl/bindings/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Bounds per request: beyond them a request is refused, so that memory per
// request stays bounded.
const (
	maxDescriptors = 1024
	maxEntries     = 64
	maxEntryBytes  = 4096
)

// Service answers ShouldRateLimit.
type Service struct {
	pb.UnimplementedRateLimitServiceServer
	cfg      atomic.Pointer[Config]
	limiters *limiterSet
	settings *Settings
	stats    *Stats
	over     *overLimitCache // nil without LOCAL_CACHE_SIZE_IN_BYTES
	now      func() time.Time
}

func newService(cfg *Config, limiters *limiterSet, settings *Settings, stats *Stats) *Service {
	s := &Service{limiters: limiters, settings: settings, stats: stats, now: time.Now,
		over: newOverLimitCache(settings.LocalCacheBytes)}
	s.cfg.Store(cfg)
	return s
}

// serviceError is what envoyproxy/ratelimit answers a malformed request with:
// a gRPC error (code Unknown), which the /json endpoint turns into 400.
func serviceError(msg string) error { return status.Error(codes.Unknown, msg) }

// checkRequest refuses what no answer can be given to.
func checkRequest(req *pb.RateLimitRequest) error {
	if req.GetDomain() == "" {
		return serviceError("rate limit domain must not be empty")
	}
	if len(req.GetDescriptors()) == 0 {
		return serviceError("rate limit descriptor list must not be empty")
	}
	if len(req.GetDescriptors()) > maxDescriptors {
		return status.Errorf(codes.InvalidArgument, "%d descriptors: at most %d", len(req.GetDescriptors()), maxDescriptors)
	}
	for i, d := range req.GetDescriptors() {
		if len(d.GetEntries()) > maxEntries {
			return status.Errorf(codes.InvalidArgument, "descriptor %d: %d entries, at most %d", i, len(d.GetEntries()), maxEntries)
		}
		for _, e := range d.GetEntries() {
			if len(e.GetKey())+len(e.GetValue()) > maxEntryBytes {
				return status.Errorf(codes.InvalidArgument, "descriptor %d: an entry of %d bytes, at most %d", i, len(e.GetKey())+len(e.GetValue()), maxEntryBytes)
			}
		}
	}
	return nil
}

// hitsAddends: a descriptor's own hits_addend (0 allowed: a check), else
// the request's, at least 1.
func hitsAddends(req *pb.RateLimitRequest) []uint64 {
	out := make([]uint64, len(req.GetDescriptors()))
	for i, d := range req.GetDescriptors() {
		if d.GetHitsAddend() != nil {
			out[i] = d.GetHitsAddend().GetValue()
		} else {
			out[i] = max(1, uint64(req.GetHitsAddend()))
		}
	}
	return out
}

// item is one descriptor on its way through a request.
type item struct {
	match     *Match
	limiter   *rl.Limiter
	key       string
	hits      uint64
	unlimited bool
	decision  rl.Decision
	cached    bool      // answered by the over-limit cache
	sent      time.Time // when it was sent to the store (rules without rl's keys)
	err       error
}

// ShouldRateLimit implements envoy.service.ratelimit.v3.RateLimitService.
func (s *Service) ShouldRateLimit(ctx context.Context, req *pb.RateLimitRequest) (*pb.RateLimitResponse, error) {
	if err := checkRequest(req); err != nil {
		s.stats.serviceErrors.Add(1)
		return nil, err
	}
	cfg := s.cfg.Load()
	hits := hitsAddends(req)
	items := make([]item, len(req.GetDescriptors()))
	replacing := map[string]bool{}
	for i, d := range req.GetDescriptors() {
		it := &items[i]
		it.hits = hits[i]
		it.match = s.lookup(cfg, req.GetDomain(), d)
		if it.match == nil {
			continue
		}
		for _, r := range it.match.Rule.Replaces {
			replacing[r] = true
		}
		if it.match.Rule.Unlimited {
			it.unlimited = true
			it.match = nil
		}
	}
	for i := range items {
		it := &items[i]
		if it.match != nil && it.match.Rule.Name != "" && replacing[it.match.Rule.Name] {
			it.match = nil
		}
	}
	if err := s.decide(ctx, cfg, req, items); err != nil {
		return nil, err
	}
	return s.respond(items), nil
}

func (s *Service) lookup(cfg *Config, domain string, d *rlv3.RateLimitDescriptor) *Match {
	if l := d.GetLimit(); l != nil {
		// Envoy's per-descriptor limit override: counted as
		// envoyproxy/ratelimit counts, under the descriptor's own key.
		unit := pb.RateLimitResponse_RateLimit_Unit(l.GetUnit())
		if _, ok := unitSeconds[unit]; !ok {
			return nil
		}
		key := descriptorStatsKey(domain, d)
		return &Match{Rule: &Rule{FullKey: key, Domain: domain, RequestsPerUnit: l.GetRequestsPerUnit(), Unit: unit}, StatsKey: key}
	}
	return cfg.Lookup(domain, d)
}

func descriptorStatsKey(domain string, d *rlv3.RateLimitDescriptor) string {
	k := domain + "."
	for i, e := range d.GetEntries() {
		if i > 0 {
			k += "."
		}
		k += e.GetKey()
		if e.GetValue() != "" {
			k += "_" + e.GetValue()
		}
	}
	return k
}

// decide asks rl for every matched descriptor: one batch per limiter
// (acquires), peeks for hits_addend 0, the limiters in parallel.
func (s *Service) decide(ctx context.Context, cfg *Config, req *pb.RateLimitRequest, items []item) error {
	type batch struct {
		lim   *rl.Limiter
		idx   []int
		reqs  []rl.Request
		peeks []int
	}
	var batches []*batch
	byLim := map[*rl.Limiter]*batch{}
	now := s.now()
	for i := range items {
		it := &items[i]
		if it.match == nil {
			continue
		}
		lim, err := s.limiters.forRule(it.match.Rule, cfg.policies[req.GetDomain()])
		if err != nil {
			return status.Errorf(codes.Internal, "limiter of %s: %v", quote(it.match.StatsKey), err)
		}
		it.limiter = lim
		it.key = LimiterKey(req.GetDescriptors()[i], it.match.SharedValues)
		b := byLim[lim]
		if b == nil {
			b = &batch{lim: lim}
			byLim[lim] = b
			batches = append(batches, b)
		}
		if !it.match.Rule.rlNative() {
			if count, ok := s.over.get(it.match.Rule, it.key, now); ok {
				// as the limiter's denial of that count would answer
				// (its reset: envoyproxy/ratelimit's unit - now % unit)
				capacity := countingCapacity(it.match.Rule)
				it.decision = rl.Decision{Limit: capacity, Remaining: capacity - int64(min(count, uint64(capacity))), Source: rl.SourceStore}
				it.cached = true
				continue
			}
			it.sent = now
		}
		if it.hits == 0 {
			b.peeks = append(b.peeks, i)
			continue
		}
		b.idx = append(b.idx, i)
		cost := int64(min(it.hits, uint64(1)<<40))
		if !it.match.Rule.rlNative() {
			cost = countingCost(it.match.Rule, it.hits)
		}
		b.reqs = append(b.reqs, rl.Request{Key: it.key, Cost: cost})
	}
	run := func(b *batch) {
		if len(b.reqs) == 1 { // the one-key call: rl's direct path
			i := b.idx[0]
			items[i].decision, items[i].err = b.lim.Acquire(rl.DeadlineOnly(ctx), b.reqs[0].Key, b.reqs[0].Cost)
		} else if len(b.reqs) > 1 {
			results, err := b.lim.AcquireBatchEach(ctx, b.reqs)
			for j, i := range b.idx {
				if err != nil {
					items[i].err = err
				} else {
					items[i].decision, items[i].err = results[j].Decision, results[j].Err
				}
			}
		}
		for _, i := range b.peeks {
			items[i].decision, items[i].err = b.lim.Peek(ctx, items[i].key, 0)
		}
	}
	if len(batches) == 1 {
		run(batches[0])
	} else {
		var wg sync.WaitGroup
		for _, b := range batches {
			wg.Add(1)
			go func() { defer wg.Done(); run(b) }()
		}
		wg.Wait()
	}
	for i := range items {
		if err := items[i].err; err != nil {
			s.stats.redisErrors.Add(1)
			var e *rl.Error
			if errors.As(err, &e) && !e.Status.IsOutage() && e.Status != rl.StatusBackendError && e.Status != rl.StatusAuth {
				return status.Errorf(codes.InvalidArgument, "descriptor %d: %s", i, e.Message)
			}
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return status.FromContextError(err).Err()
			}
			return status.Errorf(codes.Unavailable, "rate limit store: %v", err)
		}
	}
	return nil
}

// status of one decided descriptor, and whether it is over its limit.
func (s *Service) status(it *item) (*pb.RateLimitResponse_DescriptorStatus, bool) {
	if it.unlimited {
		return &pb.RateLimitResponse_DescriptorStatus{Code: pb.RateLimitResponse_OK, LimitRemaining: math.MaxUint32}, false
	}
	if it.match == nil {
		return &pb.RateLimitResponse_DescriptorStatus{Code: pb.RateLimitResponse_OK}, false
	}
	r, d := it.match.Rule, it.decision
	st := s.stats.rule(it.match.StatsKey)
	st.totalHits.Add(it.hits)
	limit := &pb.RateLimitResponse_RateLimit{RequestsPerUnit: r.RequestsPerUnit, Unit: r.Unit, Name: r.Name}
	var over bool
	var remaining uint32
	var before, after, threshold uint64
	if r.rlNative() {
		over = !d.Allowed
		remaining = uint32(min(max(d.Remaining, 0), math.MaxUint32))
		limit.RequestsPerUnit = uint32(min(max(d.Limit, 0), math.MaxUint32))
		if r.Limit != "" {
			limit.Unit = unitOf(it.limiter, d.LimitIndex)
		}
		threshold = uint64(limit.RequestsPerUnit)
		after = threshold - uint64(remaining)
		before = after - min(after, it.hits)
		if over {
			before, after = threshold, threshold+it.hits
		}
	} else {
		threshold = uint64(r.RequestsPerUnit)
		// the window's count before this request (under on_failure local:
		// this process's own count): exact below half the capacity, over
		// the limit above (countingCost)
		before = uint64(max(d.Limit-d.Remaining, 0))
		if d.Allowed {
			before -= min(before, uint64(countingCost(r, it.hits)))
		}
		after = before + it.hits
		if d.Source == rl.SourceFailOpen { // the store is down: nothing counted
			before, after = 0, 0
		}
		over = after > threshold
		if !over {
			remaining = uint32(threshold - after)
		} else if !it.cached && d.Source == rl.SourceStore && d.ResetAfter > 0 {
			// over until the window ends: sent + reset is never later
			s.over.put(r, it.key, after, it.sent.Add(d.ResetAfter))
		}
	}
	if it.cached {
		st.overLimitWithLocalCache.Add(it.hits)
	}
	near := uint64(math.Floor(float64(float32(threshold) * s.settings.NearLimitRatio)))
	if over {
		if before >= threshold {
			st.overLimit.Add(it.hits)
		} else {
			st.overLimit.Add(after - threshold)
			st.nearLimit.Add(threshold - max(near, before))
		}
	} else {
		st.withinLimit.Add(it.hits)
		if after > near {
			if before >= near {
				st.nearLimit.Add(it.hits)
			} else {
				st.nearLimit.Add(after - near)
			}
		}
	}
	code := pb.RateLimitResponse_OK
	if over {
		code = pb.RateLimitResponse_OVER_LIMIT
		if r.ShadowMode {
			code = pb.RateLimitResponse_OK
			if before >= threshold {
				st.shadowMode.Add(it.hits)
			} else {
				st.shadowMode.Add(after - threshold)
			}
		}
	}
	return &pb.RateLimitResponse_DescriptorStatus{
		Code:               code,
		CurrentLimit:       limit,
		LimitRemaining:     remaining,
		DurationUntilReset: s.untilReset(r, d),
	}, over && !r.ShadowMode
}

// unitOf names the Envoy unit of the limit that decided, when its window is
// one (UNKNOWN for windows such as 30s).
func unitOf(lim *rl.Limiter, index int) pb.RateLimitResponse_RateLimit_Unit {
	limits := lim.Limits()
	if index < 0 || index >= len(limits) {
		return pb.RateLimitResponse_RateLimit_UNKNOWN
	}
	for u, secs := range unitSeconds {
		if limits[index].Window == time.Duration(secs)*time.Second {
			return u
		}
	}
	return pb.RateLimitResponse_RateLimit_UNKNOWN
}

// untilReset: rl's reset (on Redis's clock) in whole seconds rounded up,
// which is envoyproxy/ratelimit's unit - now % unit for a fixed window;
// that formula itself when the key is empty.
func (s *Service) untilReset(r *Rule, d rl.Decision) *durationpb.Duration {
	reset := d.ResetAfter
	if !d.Allowed && d.RetryAfter > reset {
		reset = d.RetryAfter
	}
	if reset > 0 {
		return &durationpb.Duration{Seconds: int64((reset + time.Second - 1) / time.Second)}
	}
	if secs, ok := unitSeconds[r.Unit]; ok {
		now := s.now().Unix()
		return &durationpb.Duration{Seconds: secs - now%secs}
	}
	return &durationpb.Duration{}
}

// respond builds the answer: the overall code, and the headers of the
// descriptor with the least remaining (an over-limit one first).
func (s *Service) respond(items []item) *pb.RateLimitResponse {
	resp := &pb.RateLimitResponse{Statuses: make([]*pb.RateLimitResponse_DescriptorStatus, len(items))}
	minRemaining := uint32(math.MaxUint32)
	var minimum *pb.RateLimitResponse_DescriptorStatus
	code := pb.RateLimitResponse_OK
	for i := range items {
		st, over := s.status(&items[i])
		resp.Statuses[i] = st
		if s.settings.HeadersEnabled && st.CurrentLimit != nil && st.LimitRemaining < minRemaining {
			minimum, minRemaining = st, st.LimitRemaining
		}
		if !over {
			continue
		}
		if s.settings.QuotaMode || items[i].match.Rule.QuotaMode {
			// quota_mode: the violation is reported as OK (as
			// envoyproxy/ratelimit of 2026-01 does), without a reset
			resp.Statuses[i] = &pb.RateLimitResponse_DescriptorStatus{Code: pb.RateLimitResponse_OK, CurrentLimit: st.CurrentLimit, LimitRemaining: st.LimitRemaining}
			continue
		}
		code = pb.RateLimitResponse_OVER_LIMIT
		minimum, minRemaining = st, 0
	}
	if s.settings.HeadersEnabled && minimum != nil {
		resp.ResponseHeadersToAdd = []*core.HeaderValue{
			{Key: s.settings.LimitHeader, Value: strconv.FormatUint(uint64(minimum.CurrentLimit.RequestsPerUnit), 10)},
			{Key: s.settings.RemainingHeader, Value: strconv.FormatUint(uint64(minimum.LimitRemaining), 10)},
			{Key: s.settings.ResetHeader, Value: fmt.Sprint(minimum.DurationUntilReset.GetSeconds())},
		}
	}
	if code == pb.RateLimitResponse_OVER_LIMIT && s.settings.ShadowMode {
		code = pb.RateLimitResponse_OK
		s.stats.globalShadowMode.Add(1)
	}
	resp.OverallCode = code
	return resp
}
