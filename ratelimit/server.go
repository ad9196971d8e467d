package main

// The listeners (gRPC, HTTP /json /healthcheck /metrics, debug, Prometheus),
// TLS, and the config reload on change.

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	rl "github.com/rl-dev/rl/bindings/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// maxJSONBody bounds a /json request body.
const maxJSONBody = 1 << 20

type server struct {
	settings  *Settings
	log       *slog.Logger
	store     *rl.Store
	stats     *Stats
	svc       *Service
	health    *health.Server
	mu        sync.Mutex
	reloadErr string // the last reload's failure, "" when it took effect
}

func newServer(settings *Settings, log *slog.Logger) (*server, error) {
	cfg, err := LoadConfigDir(settings.ConfigDir(), settings.IgnoreDotFiles, settings.MergeDomains)
	if err != nil {
		return nil, fmt.Errorf("config error: %w", err)
	}
	store, err := rl.Open(bg, settings.StoreURL)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	stats := newStats()
	stats.configLoaded(true)
	s := &server{settings: settings, log: log, store: store, stats: stats, health: health.NewServer()}
	s.svc = newService(cfg, newLimiterSet(store), settings, stats)
	log.Info("config loaded", "dir", settings.ConfigDir(), "domains", len(cfg.domains), "rules", len(cfg.rules), "store", store.String())
	return s, nil
}

func (s *server) grpcServer() (*grpc.Server, error) {
	var opts []grpc.ServerOption
	if s.settings.GRPCTLS {
		cert, err := tls.LoadX509KeyPair(s.settings.GRPCCert, s.settings.GRPCKey)
		if err != nil {
			return nil, fmt.Errorf("GRPC_SERVER_TLS_CERT/GRPC_SERVER_TLS_KEY: %w", err)
		}
		conf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		if s.settings.GRPCClientCA != "" {
			pem, err := os.ReadFile(s.settings.GRPCClientCA)
			if err != nil {
				return nil, fmt.Errorf("GRPC_CLIENT_TLS_CACERT: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, errors.New("GRPC_CLIENT_TLS_CACERT: no certificate in the file")
			}
			conf.ClientCAs, conf.ClientAuth = pool, tls.RequireAndVerifyClientCert
			if san := s.settings.GRPCClientSAN; san != "" {
				conf.VerifyPeerCertificate = func(_ [][]byte, chains [][]*x509.Certificate) error {
					for _, ch := range chains {
						if len(ch) > 0 && ch[0].VerifyHostname(san) == nil {
							return nil
						}
					}
					return errors.New("client certificate does not name GRPC_CLIENT_TLS_SAN")
				}
			}
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(conf)))
	}
	g := grpc.NewServer(opts...)
	pb.RegisterRateLimitServiceServer(g, s.svc)
	s.health.SetServingStatus("ratelimit", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(g, s.health)
	return g, nil
}

// jsonHandler is envoyproxy/ratelimit's /json: a RateLimitRequest in
// protojson; 200 with the response, 429 when over the limit, 400 for a body
// that does not parse or a request the service refuses.
func (s *server) jsonHandler(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxJSONBody+1))
	if err != nil || len(body) > maxJSONBody {
		http.Error(w, "", http.StatusBadRequest)
		return
	}
	var req pb.RateLimitRequest
	if err := protojson.Unmarshal(body, &req); err != nil {
		s.log.Warn("json: " + err.Error())
		http.Error(w, "", http.StatusBadRequest)
		return
	}
	resp, err := s.svc.ShouldRateLimit(r.Context(), &req)
	if err != nil {
		s.log.Warn("json: " + err.Error())
		http.Error(w, "", http.StatusBadRequest)
		return
	}
	out, err := protojson.Marshal(resp)
	if err != nil {
		http.Error(w, "", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch resp.OverallCode {
	case pb.RateLimitResponse_UNKNOWN:
		w.WriteHeader(http.StatusInternalServerError)
	case pb.RateLimitResponse_OVER_LIMIT:
		w.WriteHeader(http.StatusTooManyRequests)
	}
	_, _ = w.Write(out)
}

// healthHandler: 200 "OK" while serving (a failed reload says so in the
// body: the previous config stays in force); 500 once shutting down.
func (s *server) healthHandler(w http.ResponseWriter, _ *http.Request) {
	st, err := s.health.Check(bg, &healthpb.HealthCheckRequest{Service: "ratelimit"})
	if err != nil || st.Status != healthpb.HealthCheckResponse_SERVING {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	reloadErr := s.reloadErr
	s.mu.Unlock()
	if reloadErr != "" {
		fmt.Fprintf(w, "OK\nconfig reload failed, the previous config is in force: %s\n", reloadErr)
		return
	}
	_, _ = w.Write([]byte("OK"))
}

func (s *server) metricsHandler(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.stats.write(w)
	failed := 0
	if s.stats.lastReloadFailed.Load() {
		failed = 1
	}
	fmt.Fprintf(w, "# HELP ratelimit_service_config_last_reload_failed 1 when the last config reload was refused\n# TYPE ratelimit_service_config_last_reload_failed gauge\nratelimit_service_config_last_reload_failed %d\n", failed)
	_, _ = io.WriteString(w, s.store.Metrics())
}

func (s *server) mux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/json", s.jsonHandler)
	m.HandleFunc("/healthcheck", s.healthHandler)
	m.HandleFunc("/metrics", s.metricsHandler)
	return m
}

func listen(host string, port int) (net.Listener, error) {
	return net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
}

func (s *server) run() error {
	g, err := s.grpcServer()
	if err != nil {
		return err
	}
	gl, err := listen(s.settings.GRPCHost, s.settings.GRPCPort)
	if err != nil {
		return fmt.Errorf("GRPC_PORT: %w", err)
	}
	hl, err := listen(s.settings.Host, s.settings.Port)
	if err != nil {
		return fmt.Errorf("PORT: %w", err)
	}
	dl, err := listen(s.settings.DebugHost, s.settings.DebugPort)
	if err != nil {
		return fmt.Errorf("DEBUG_PORT: %w", err)
	}
	errs := make(chan error, 4)
	go func() { errs <- g.Serve(gl) }()
	go func() { errs <- http.Serve(hl, s.mux()) }()
	go func() { errs <- http.Serve(dl, s.mux()) }()
	if s.settings.UsePrometheus {
		pm := http.NewServeMux()
		pm.HandleFunc(s.settings.PrometheusPath, s.metricsHandler)
		pl, err := net.Listen("tcp", s.settings.PrometheusAddr)
		if err != nil {
			return fmt.Errorf("PROMETHEUS_ADDR: %w", err)
		}
		go func() { errs <- http.Serve(pl, pm) }()
	}
	stop := make(chan struct{})
	go s.watch(stop)
	fmt.Fprintf(os.Stderr, "rl-ratelimit: serving gRPC on %s, HTTP on %s\n", gl.Addr(), hl.Addr())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sigs:
	case err := <-errs:
		return err
	}
	close(stop)
	s.health.Shutdown()
	done := make(chan struct{})
	go func() { g.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		g.Stop()
	}
	return s.store.Close()
}

// fingerprint says what the config's load depends on: with
// RUNTIME_WATCH_ROOT (the default) where RUNTIME_ROOT's symlink points,
// else every file's name, size and time.
func (s *server) fingerprint() string {
	if s.settings.WatchRoot {
		target, err := filepath.EvalSymlinks(s.settings.RuntimeRoot)
		if err != nil {
			return "error: " + err.Error()
		}
		return target
	}
	var parts []string
	_ = filepath.Walk(s.settings.ConfigDir(), func(p string, info os.FileInfo, err error) error {
		if err == nil {
			parts = append(parts, fmt.Sprintf("%s %d %d", p, info.Size(), info.ModTime().UnixNano()))
		}
		return nil
	})
	sort.Strings(parts)
	return fmt.Sprint(parts)
}

// watch reloads the config when its fingerprint changes (polled every
// RL_RELOAD_POLL_MS, default 1000). A config that does not load leaves the
// previous one in force: logged, counted, and shown by /healthcheck.
func (s *server) watch(stop chan struct{}) {
	every := time.Second
	if v, err := strconv.Atoi(os.Getenv("RL_RELOAD_POLL_MS")); err == nil && v > 0 {
		every = time.Duration(v) * time.Millisecond
	}
	last := s.fingerprint()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		fp := s.fingerprint()
		if fp == last {
			continue
		}
		last = fp
		cfg, err := LoadConfigDir(s.settings.ConfigDir(), s.settings.IgnoreDotFiles, s.settings.MergeDomains)
		s.mu.Lock()
		if err != nil {
			s.reloadErr = err.Error()
			s.log.Error("config reload refused, the previous config stays in force", "error", err.Error())
		} else {
			s.reloadErr = ""
			s.svc.cfg.Store(cfg)
			s.log.Info("config reloaded", "domains", len(cfg.domains), "rules", len(cfg.rules))
		}
		s.mu.Unlock()
		s.stats.configLoaded(err == nil)
	}
}
