// rl-ratelimit against envoyproxy/ratelimit on one redis-server, the same
// fixed-window config, one load generator over gRPC (bench/run's
// ratelimit_* rows). Prints one JSON line per measurement:
//
//	{"bench":"ratelimit","server":"rl"|"envoy"|"envoy_pipeline"|"envoy_cache"|"rl_cache"|"rl_module",
//	 "phase":"within"|"overload","streams":64,"per_second":..,"p50_us":..,"p99_us":..,
//	 "server_us_per_decision":..,"redis_us_per_decision":..,"per_server_core":..}
//	{"bench":"ratelimit_exactness","server":..,"limit":..,"admitted":..}
//	{"bench":"ratelimit_config","server":..,"descriptors":10000,"start_ms":..,"reload_ms":..,"rss_kb":..}
//
//	rl-bench-ratelimit -rl BIN -envoy BIN -redis host:port [-seconds S]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

var (
	rlBin    = flag.String("rl", "", "rl-ratelimit binary")
	envoyBin = flag.String("envoy", "", "envoyproxy/ratelimit's service_cmd")
	redis    = flag.String("redis", "", "redis-server host:port (shared by both)")
	seconds  = flag.Float64("seconds", 5, "seconds per measurement")
	module   = flag.String("module", "", "a redis-server with rl's module loaded: rl-ratelimit measured there too (rl_module)")
	skipBig  = flag.Bool("no-config", false, "skip the 10,000-descriptor config figures")
)

const benchConfig = `domain: bench
descriptors:
  - key: user
    rate_limit: {unit: hour, requests_per_unit: 1000000000}
  - key: hot
    rate_limit: {unit: hour, requests_per_unit: 1000}
`

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type server struct {
	cmd       *exec.Cmd
	grpcPort  int
	root      string
	configDir string
	redis     string // host:port of the redis-server it uses
}

func start(bin string, config string, env ...string) (*server, time.Duration) {
	root, _ := os.MkdirTemp("", "rl-bench-ratelimit")
	dir := filepath.Join(root, "config")
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(config), 0o644)
	s := &server{grpcPort: freePort(), root: root, configDir: dir, redis: *redis}
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "REDIS_URL="); ok {
			s.redis = v
		}
	}
	s.cmd = exec.Command(bin)
	s.cmd.Env = append(os.Environ(), "USE_STATSD=false", "DISABLE_STATS=true", "LOG_LEVEL=error",
		"REDIS_SOCKET_TYPE=tcp", "REDIS_URL="+*redis, "RUNTIME_ROOT="+root, "RUNTIME_SUBDIRECTORY=",
		"RUNTIME_APPDIRECTORY=config", "RUNTIME_WATCH_ROOT=false", "RL_RELOAD_POLL_MS=20",
		"HOST=127.0.0.1", "GRPC_HOST=127.0.0.1", "DEBUG_HOST=127.0.0.1",
		"PORT="+strconv.Itoa(freePort()), "GRPC_PORT="+strconv.Itoa(s.grpcPort), "DEBUG_PORT="+strconv.Itoa(freePort()))
	s.cmd.Env = append(s.cmd.Env, env...)
	t0 := time.Now()
	if err := s.cmd.Start(); err != nil {
		panic(err)
	}
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(s.grpcPort), 50*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Since(t0) > 60*time.Second {
			panic(bin + " did not start")
		}
		time.Sleep(2 * time.Millisecond)
	}
	return s, time.Since(t0)
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	os.RemoveAll(s.root)
}

func (s *server) client() (pb.RateLimitServiceClient, *grpc.ClientConn) {
	conn, err := grpc.NewClient("127.0.0.1:"+strconv.Itoa(s.grpcPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		panic(err)
	}
	return pb.NewRateLimitServiceClient(conn), conn
}

// cpuSeconds of a process (utime + stime), from /proc.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100 // USER_HZ
}

func rssKB(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			n, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return n
		}
	}
	return 0
}

// redisInfo sends INFO section and returns its text.
func redisInfo(addr, section string) string {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "*2\r\n$4\r\nINFO\r\n$%d\r\n%s\r\n", len(section), section)
	r := bufio.NewReader(c)
	head, _ := r.ReadString('\n')
	n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	buf := make([]byte, n+2)
	_, _ = readFull(r, buf)
	return string(buf)
}

// scriptCommand: what runs rl's Lua code or its module. Redis counts the
// commands a script calls in commandstats too, and within the script's own
// usec: when scripts ran, only they (and the module's commands) are summed.
func scriptCommand(name string) bool {
	switch name {
	case "fcall", "fcall_ro", "eval", "eval_ro", "evalsha", "evalsha_ro":
		return true
	}
	return strings.HasPrefix(name, "rl.")
}

// commandStats is INFO commandstats' usec and calls: of every command, and
// of the script and module commands; and the calls of each command.
type commandStats struct {
	all, scripts          float64 // usec
	allCalls, scriptCalls float64
	calls                 map[string]float64
}

func redisCommandStats(addr string) commandStats {
	u := commandStats{calls: map[string]float64{}}
	for _, l := range strings.Split(redisInfo(addr, "commandstats"), "\n") {
		if !strings.HasPrefix(l, "cmdstat_") || strings.HasPrefix(l, "cmdstat_info") {
			continue
		}
		name := strings.ToLower(l[len("cmdstat_"):strings.IndexByte(l, ':')])
		for _, kv := range strings.Split(l[strings.IndexByte(l, ':')+1:], ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "usec":
				u.all += f
				if scriptCommand(name) {
					u.scripts += f
				}
			case "calls":
				u.calls[name] += f
				u.allCalls += f
				if scriptCommand(name) {
					u.scriptCalls += f
				}
			}
		}
	}
	return u
}

// topLevelSince: the usec and calls of the top-level commands since before:
// when scripts ran, only they (their nested calls are inside their usec).
func (u commandStats) topLevelSince(before commandStats) (usec, calls float64) {
	if scripts := u.scripts - before.scripts; scripts > 0 || u.scriptCalls > before.scriptCalls {
		return scripts, u.scriptCalls - before.scriptCalls
	}
	return u.all - before.all, u.allCalls - before.allCalls
}

// callsSince: the calls of each command since before, per decision (nested
// ones included: what a script runs shows here by name).
func (u commandStats) callsSince(before commandStats, decisions float64) map[string]float64 {
	out := map[string]float64{}
	for name, c := range u.calls {
		if d := c - before.calls[name]; d > 0 {
			out[name] = math.Round(d/decisions*1000) / 1000
		}
	}
	return out
}

// redisNetBytes: INFO stats' total_net_input_bytes and total_net_output_bytes.
func redisNetBytes(addr string) (in, out float64) {
	for _, l := range strings.Split(redisInfo(addr, "stats"), "\n") {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "total_net_input_bytes:"); ok {
			in, _ = strconv.ParseFloat(v, 64)
		}
		if v, ok := strings.CutPrefix(l, "total_net_output_bytes:"); ok {
			out, _ = strconv.ParseFloat(v, 64)
		}
	}
	return in, out
}

// redisProcessCPU: the server's own CPU seconds (INFO cpu, all threads).
func redisProcessCPU(addr string) float64 {
	total := 0.0
	for _, l := range strings.Split(redisInfo(addr, "cpu"), "\n") {
		for _, k := range []string{"used_cpu_sys:", "used_cpu_user:"} {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), k); ok {
				f, _ := strconv.ParseFloat(v, 64)
				total += f
			}
		}
	}
	return total
}

func readFull(r *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func quantile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return float64(sorted[int(q*float64(len(sorted)-1))].Microseconds())
}

// hotLimit is the "hot" descriptor's limit per hour (benchConfig).
const hotLimit = 1000

// load runs streams callers for the measurement's time; overload sends
// every request to a "hot" descriptor of this run, over its limit before
// the measurement starts (every measured request is over the limit), else
// each caller to a user of its own.
func load(name string, s *server, streams int, overload bool) {
	client, conn := s.client()
	defer conn.Close()
	hot := fmt.Sprintf("%s-hot-%d", name, time.Now().UnixNano())
	if overload {
		req := &pb.RateLimitRequest{Domain: "bench", Descriptors: []*rlv3.RateLimitDescriptor{
			{Entries: []*rlv3.RateLimitDescriptor_Entry{{Key: "hot", Value: hot}}}}}
		for i := 0; i <= hotLimit; i++ {
			if _, err := client.ShouldRateLimit(context.Background(), req); err != nil {
				fmt.Fprintln(os.Stderr, name, err)
				return
			}
		}
	}
	var ops atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	deadline := time.Now().Add(time.Duration(*seconds * float64(time.Second)))
	cpu0, redis0, redisCPU0 := cpuSeconds(s.cmd.Process.Pid), redisCommandStats(s.redis), redisProcessCPU(s.redis)
	in0, out0 := redisNetBytes(s.redis)
	t0 := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < streams; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key, value := "user", fmt.Sprintf("%s-%d-%d", name, g, time.Now().UnixNano())
			if overload {
				key, value = "hot", hot
			}
			req := &pb.RateLimitRequest{Domain: "bench", Descriptors: []*rlv3.RateLimitDescriptor{
				{Entries: []*rlv3.RateLimitDescriptor_Entry{{Key: key, Value: value}}}}}
			var mine []time.Duration
			for time.Now().Before(deadline) {
				t := time.Now()
				if _, err := client.ShouldRateLimit(context.Background(), req); err != nil {
					fmt.Fprintln(os.Stderr, name, err)
					return
				}
				mine = append(mine, time.Since(t))
				ops.Add(1)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0).Seconds()
	cpu := cpuSeconds(s.cmd.Process.Pid) - cpu0
	redis1 := redisCommandStats(s.redis)
	redisUS, redisCalls := redis1.topLevelSince(redis0)
	redisCPU := redisProcessCPU(s.redis) - redisCPU0
	in1, out1 := redisNetBytes(s.redis)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	n := float64(ops.Load())
	phase := "within"
	if overload {
		phase = "overload"
	}
	emit(map[string]any{"bench": "ratelimit", "server": name, "phase": phase, "streams": streams,
		"per_second": n / elapsed, "p50_us": quantile(lat, 0.5), "p99_us": quantile(lat, 0.99),
		"server_us_per_decision": cpu * 1e6 / n, "redis_us_per_decision": redisUS / n,
		"redis_process_us_per_decision": redisCPU * 1e6 / n,
		// load-independent: what the figures above come from
		"redis_calls_per_decision":     redisCalls / n,
		"redis_commands_per_decision":  redis1.callsSince(redis0, n),
		"redis_bytes_in_per_decision":  (in1 - in0) / n,
		"redis_bytes_out_per_decision": (out1 - out0) / n,
		"per_server_core":              n / max(cpu, 1e-9)})
}

// exactness: 4 server processes on one descriptor, 10x its limit.
func exactness(name, bin string, env ...string) {
	const limit, processes, per = 200, 4, 500
	cfg := fmt.Sprintf("domain: bench\ndescriptors:\n  - key: exact\n    rate_limit: {unit: hour, requests_per_unit: %d}\n", limit)
	value := fmt.Sprintf("%s-%d", name, time.Now().UnixNano())
	var admitted atomic.Int64
	var wg sync.WaitGroup
	var servers []*server
	for p := 0; p < processes; p++ {
		s, _ := start(bin, cfg, env...)
		servers = append(servers, s)
	}
	for _, s := range servers {
		client, conn := s.client()
		defer conn.Close()
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req := &pb.RateLimitRequest{Domain: "bench", Descriptors: []*rlv3.RateLimitDescriptor{
					{Entries: []*rlv3.RateLimitDescriptor_Entry{{Key: "exact", Value: value}}}}}
				for i := 0; i < per/4; i++ {
					resp, err := client.ShouldRateLimit(context.Background(), req)
					if err == nil && resp.OverallCode == pb.RateLimitResponse_OK {
						admitted.Add(1)
					}
				}
			}()
		}
	}
	wg.Wait()
	for _, s := range servers {
		s.stop()
	}
	emit(map[string]any{"bench": "ratelimit_exactness", "server": name, "limit": limit, "offered": processes * per, "admitted": admitted.Load()})
}

func bigConfig(n, limit int) string {
	var b strings.Builder
	b.WriteString("domain: bench\ndescriptors:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - key: k\n    value: v%d\n    rate_limit: {unit: minute, requests_per_unit: %d}\n", i, limit)
	}
	return b.String()
}

// configFigures: start time, reload time and memory with 10,000 descriptors.
func configFigures(name, bin string, env ...string) {
	const n = 10000
	s, startTime := start(bin, bigConfig(n, 10), env...)
	defer s.stop()
	client, conn := s.client()
	defer conn.Close()
	req := &pb.RateLimitRequest{Domain: "bench", Descriptors: []*rlv3.RateLimitDescriptor{
		{Entries: []*rlv3.RateLimitDescriptor_Entry{{Key: "k", Value: "v9999"}}}}}
	if _, err := client.ShouldRateLimit(context.Background(), req); err != nil {
		fmt.Fprintln(os.Stderr, name, err)
		return
	}
	rss := rssKB(s.cmd.Process.Pid)
	// envoyproxy/ratelimit watches the directory itself; both see a new file's rename
	tmp := filepath.Join(s.root, "bench.yaml.tmp")
	_ = os.WriteFile(tmp, []byte(bigConfig(n, 11)), 0o644)
	t0 := time.Now()
	_ = os.Rename(tmp, filepath.Join(s.configDir, "bench.yaml"))
	reload := -1.0
	for time.Since(t0) < 60*time.Second {
		resp, err := client.ShouldRateLimit(context.Background(), req)
		if err == nil && resp.Statuses[0].GetCurrentLimit().GetRequestsPerUnit() == 11 {
			reload = float64(time.Since(t0).Microseconds()) / 1000
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	emit(map[string]any{"bench": "ratelimit_config", "server": name, "descriptors": n,
		"start_ms": float64(startTime.Microseconds()) / 1000, "reload_ms": reload, "rss_kb": rss})
}

func main() {
	flag.Parse()
	if *rlBin == "" || *envoyBin == "" || *redis == "" {
		fmt.Fprintln(os.Stderr, "usage: rl-bench-ratelimit -rl BIN -envoy BIN -redis host:port [-seconds S]")
		os.Exit(2)
	}
	variants := []struct {
		name, bin string
		env       []string
	}{
		{"rl", *rlBin, nil},
		{"envoy", *envoyBin, nil},
		{"envoy_pipeline", *envoyBin, []string{"REDIS_PIPELINE_WINDOW=150us", "REDIS_PIPELINE_LIMIT=0"}},
		{"envoy_cache", *envoyBin, []string{"REDIS_PIPELINE_WINDOW=150us", "LOCAL_CACHE_SIZE_IN_BYTES=10485760"}},
		{"rl_cache", *rlBin, []string{"LOCAL_CACHE_SIZE_IN_BYTES=10485760"}},
	}
	if *module != "" {
		variants = append(variants, struct {
			name, bin string
			env       []string
		}{"rl_module", *rlBin, []string{"REDIS_URL=" + *module}})
	}
	for _, v := range variants {
		s, _ := start(v.bin, benchConfig, v.env...)
		if v.name != "envoy_cache" && v.name != "rl_cache" {
			load(v.name, s, 64, false)
			load(v.name, s, 1, false)
		}
		load(v.name, s, 64, true)
		s.stop()
	}
	exactness("rl", *rlBin)
	exactness("envoy", *envoyBin)
	if !*skipBig {
		configFigures("rl", *rlBin)
		configFigures("envoy", *envoyBin)
	}
}
