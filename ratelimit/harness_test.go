package main

// Test fixtures: real redis-servers on loopback (started, paused, stopped
// by the test), rl-ratelimit built from this folder, envoyproxy/ratelimit
// from RL_REF_RATELIMIT (ratelimit/run-tests builds it).

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

var serverBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rl-ratelimit-test")
	if err != nil {
		panic(err)
	}
	serverBinary = filepath.Join(dir, "rl-ratelimit")
	out, err := exec.Command("go", "build", "-o", serverBinary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// waitIn waits for cmd in a goroutine: the channel closes when it ended.
func waitIn(cmd *exec.Cmd) chan struct{} {
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	return done
}

// freePort asks the kernel for a port and gives it back.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitListening waits until something accepts on port (or the process ends).
func waitListening(t testing.TB, port int, exited <-chan struct{}, what string, log fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 100*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("%s exited; its output:\n%s", what, log.String())
		default:
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s is not listening on %d; its output:\n%s", what, port, log.String())
}

type redisServer struct {
	Port   int
	cmd    *exec.Cmd
	done   chan struct{}
	log    syncBuffer
	module string
}

func startRedis(t testing.TB) *redisServer {
	t.Helper()
	return startRedisWith(t, "")
}

// redisModule is rl's Redis module (RL_REDIS_MODULE, librl_redis.so), or ""
// when not built: the tests that take it then skip.
var redisModule = os.Getenv("RL_REDIS_MODULE")

// startRedisWith starts a redis-server, with rl's module when module is set.
func startRedisWith(t testing.TB, module string) *redisServer {
	t.Helper()
	r := &redisServer{Port: freePort(t), module: module}
	r.start(t)
	t.Cleanup(func() { r.Stop() })
	return r
}

func (r *redisServer) start(t testing.TB) {
	t.Helper()
	r.cmd = exec.Command("redis-server", "--port", strconv.Itoa(r.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if r.module != "" {
		r.cmd.Args = append(r.cmd.Args, "--loadmodule", r.module)
	}
	r.cmd.Stdout, r.cmd.Stderr = &r.log, &r.log
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.done = waitIn(r.cmd)
	waitListening(t, r.Port, r.done, "redis-server", &r.log)
}

func (r *redisServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.Port) }

// Stop ends the server (SIGKILL: an outage, not a shutdown).
func (r *redisServer) Stop() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Signal(syscall.SIGCONT)
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

func (r *redisServer) Pause()  { _ = r.cmd.Process.Signal(syscall.SIGSTOP) }
func (r *redisServer) Resume() { _ = r.cmd.Process.Signal(syscall.SIGCONT) }

// rateLimitServer is a running rl-ratelimit or envoyproxy/ratelimit.
type rateLimitServer struct {
	Name      string
	GRPCPort  int
	HTTPPort  int
	ConfigDir string // RUNTIME_ROOT/config
	Root      string
	cmd       *exec.Cmd
	done      chan struct{}
	log       *syncBuffer
	conn      *grpc.ClientConn
	Client    pb.RateLimitServiceClient
}

// writeConfig writes name into the config directory.
func writeConfig(t testing.TB, dir, name, yaml string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startServer runs binary with the environment of envoyproxy/ratelimit
// plus env, the config files in files, on redis.
func startServer(t testing.TB, name, binary, redisAddr string, files map[string]string, env ...string) *rateLimitServer {
	t.Helper()
	s := &rateLimitServer{Name: name, GRPCPort: freePort(t), HTTPPort: freePort(t), Root: t.TempDir(), log: &syncBuffer{}}
	s.ConfigDir = filepath.Join(s.Root, "config")
	for f, y := range files {
		writeConfig(t, s.ConfigDir, f, y)
	}
	s.cmd = exec.Command(binary)
	s.cmd.Env = append(os.Environ(),
		"USE_STATSD=false", "DISABLE_STATS=true", "LOG_LEVEL=warn",
		"REDIS_SOCKET_TYPE=tcp", "REDIS_URL="+redisAddr,
		"RUNTIME_ROOT="+s.Root, "RUNTIME_SUBDIRECTORY=", "RUNTIME_APPDIRECTORY=config",
		"RUNTIME_WATCH_ROOT=false", "RL_RELOAD_POLL_MS=50",
		"PORT="+strconv.Itoa(s.HTTPPort), "GRPC_PORT="+strconv.Itoa(s.GRPCPort),
		"DEBUG_PORT="+strconv.Itoa(freePort(t)), "HOST=127.0.0.1", "GRPC_HOST=127.0.0.1", "DEBUG_HOST=127.0.0.1")
	s.cmd.Env = append(s.cmd.Env, env...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.done = waitIn(s.cmd)
	t.Cleanup(func() {
		if s.conn != nil {
			s.conn.Close()
		}
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, s.log.String())
		}
	})
	waitListening(t, s.GRPCPort, s.done, name, s.log)
	waitListening(t, s.HTTPPort, s.done, name, s.log)
	conn, err := grpc.NewClient("127.0.0.1:"+strconv.Itoa(s.GRPCPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	s.conn, s.Client = conn, pb.NewRateLimitServiceClient(conn)
	return s
}

func startRL(t testing.TB, redisAddr string, files map[string]string, env ...string) *rateLimitServer {
	return startServer(t, "rl-ratelimit", serverBinary, redisAddr, files, env...)
}

func startReference(t testing.TB, redisAddr string, files map[string]string, env ...string) *rateLimitServer {
	ref := os.Getenv("RL_REF_RATELIMIT")
	if ref == "" {
		t.Skip("RL_REF_RATELIMIT (envoyproxy/ratelimit's service_cmd) not set: ratelimit/run-tests builds it")
	}
	return startServer(t, "envoyproxy/ratelimit", ref, redisAddr, files, env...)
}

func (s *rateLimitServer) Call(req *pb.RateLimitRequest) (*pb.RateLimitResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Client.ShouldRateLimit(ctx, req)
}

// PostJSON posts body to /json: the status code and the body.
func (s *rateLimitServer) PostJSON(t testing.TB, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/json", s.HTTPPort), "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.Bytes()
}

func (s *rateLimitServer) Get(t testing.TB, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", s.HTTPPort, path))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}
