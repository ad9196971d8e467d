// Benchmark of the Go binding beside go-redis/redis_rate (GCRA in Lua), in
// one run against the same redis-server. Prints a Markdown table:
//
//	scripts/with-redis -- go run -tags rl_repo ./bench/go   (from the repo root,
//	                                                        cd bench/go first)
//	go run -tags rl_repo . -redis redis://127.0.0.1:6379 -duration 3s -rounds 3
//
// Each measure is the median over rounds; rl and redis_rate alternate
// within a round so both see the same machine weather.
//
// -ctx cancel gives every call a ctx that can be canceled (as an HTTP
// request's), which keeps the binding's calls asynchronous; the default is
// context.Background(), with which a lone caller's call is synchronous.
//
// With -json (as bench/run uses it) it prints one JSON line per library and
// goroutine count instead: decisions/s, p50, p99, and redis-server's CPU
// per decision (INFO commandstats, reset before each run); with
// RL_BENCH_MODULE_URL (a server with rl's Redis module) also "rl module",
// rl on that server with script_mode=module.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	rl "github.com/rl-dev/rl/bindings/go"
)

// allowFunc makes one GCRA decision for key.
type allowFunc func(ctx context.Context, key string) error

// A generous rate: every call runs the whole script, few are denied.
const rate = 1_000_000

// withPrefix gives each run its own keys on the server.
func withPrefix(url string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	// A generous deadline: 10,000 calls in flight on a busy machine wait.
	url = fmt.Sprintf("%s%sprefix=bench%d&timeout_ms=10000", url, sep, time.Now().UnixNano())
	if options := os.Getenv("RL_BENCH_STORE_OPTIONS"); options != "" {
		url += "&" + options // settings under test, e.g. from bench/run --store-options
	}
	return url
}

func openRL(url string) (allowFunc, func(), error) {
	store, err := rl.Open(context.Background(), withPrefix(url))
	if err != nil {
		return nil, nil, err
	}
	lim, err := store.Limiter(rl.Config{Algorithm: rl.GCRA, Limit: fmt.Sprintf("%d/s", rate), Name: "bench"})
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	allow := func(ctx context.Context, key string) error {
		_, err := lim.Acquire(ctx, key, 1)
		return err
	}
	return allow, func() { lim.Close(); store.Close() }, nil
}

func openRedisRate(url string) (allowFunc, func(), error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, nil, err
	}
	opt.ReadTimeout, opt.PoolTimeout = 10*time.Second, 10*time.Second // as rl's
	rdb := redis.NewClient(opt)
	limiter := redis_rate.NewLimiter(rdb)
	limit := redis_rate.Limit{Rate: rate, Burst: rate, Period: time.Second}
	allow := func(ctx context.Context, key string) error {
		_, err := limiter.Allow(ctx, key, limit)
		return err
	}
	return allow, func() { rdb.Close() }, nil
}

var libraries = []struct {
	name    string
	open    func(string) (allowFunc, func(), error)
	threads bool // measure threads under waiters (not for one thread per call)
}{{"rl", openRL, true}, {"redis_rate", openRedisRate, true}, {"C ABI sync", openCSync, false}}

// result of one run: decisions per second and latency percentiles.
type result struct {
	perSecond float64
	p50, p99  time.Duration
	calls     int
}

// cancelable: every call gets a ctx that can be canceled (-ctx cancel), as
// an HTTP request's has, instead of context.Background().
var cancelable bool

// run calls allow from `goroutines` goroutines (each on its own key) for d.
func run(allow allowFunc, goroutines int, d time.Duration) (result, error) {
	ctx := context.Background()
	if cancelable {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
	}
	latencies := make([][]time.Duration, goroutines)
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "k" + strconv.Itoa(g)
			for t := time.Now(); t.Before(deadline); {
				if err := allow(ctx, key); err != nil {
					errs <- err
					return
				}
				now := time.Now()
				latencies[g] = append(latencies[g], now.Sub(t))
				t = now
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return result{}, err
	}
	all := slices.Concat(latencies...)
	slices.Sort(all)
	if len(all) == 0 {
		return result{}, fmt.Errorf("no call finished in %v", d)
	}
	return result{
		perSecond: float64(len(all)) / elapsed.Seconds(),
		p50:       all[len(all)/2],
		p99:       all[len(all)*99/100],
		calls:     len(all),
	}, nil
}

// threadsUnderWaiters runs in a child process (so that no other library's
// threads count): `waiters` goroutines call allow back to back for d, and it
// prints the most OS threads the process had meanwhile.
func threadsUnderWaiters(library, url string, waiters int, d time.Duration) error {
	for _, lib := range libraries {
		if lib.name != library {
			continue
		}
		allow, closeFn, err := lib.open(url)
		if err != nil {
			return err
		}
		defer closeFn()
		most := 0
		done := make(chan struct{})
		go func() {
			defer close(done)
			for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				most = max(most, osThreads())
			}
		}()
		if _, err := run(allow, waiters, d); err != nil {
			return err
		}
		<-done
		fmt.Println(most)
		return nil
	}
	return fmt.Errorf("no library %q", library)
}

func osThreads() int {
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if n, ok := strings.CutPrefix(line, "Threads:"); ok {
			v, _ := strconv.Atoi(strings.TrimSpace(n))
			return v
		}
	}
	return 0
}

func median[T int | float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func main() {
	url := flag.String("redis", os.Getenv("RL_TEST_REDIS_URL"), "Redis URL (default $RL_TEST_REDIS_URL)")
	d := flag.Duration("duration", 2*time.Second, "length of each measured run")
	rounds := flag.Int("rounds", 3, "runs of each measure; the table shows medians")
	waiters := flag.Int("waiters", 10000, "goroutines of the thread-count measure")
	child := flag.String("threads-of", "", "(internal) measure the threads of one library")
	asJSON := flag.Bool("json", false, "JSON lines of rl and redis_rate at each of -goroutines, with Redis CPU")
	goroutines := flag.String("goroutines", "1,64,200", "with -json: comma-separated goroutine counts")
	ctxKind := flag.String("ctx", "background", "the calls' ctx: background, or cancel (context.WithCancel)")
	flag.Parse()
	switch *ctxKind {
	case "background":
	case "cancel":
		cancelable = true
	default:
		fail(fmt.Errorf("-ctx: %q is neither background nor cancel", *ctxKind))
	}
	if *url == "" {
		fail(fmt.Errorf("no Redis: pass -redis URL or run under scripts/with-redis"))
	}
	if *asJSON {
		var counts []int
		for _, f := range strings.Split(*goroutines, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				fail(fmt.Errorf("-goroutines: %q is not a positive count", f))
			}
			counts = append(counts, n)
		}
		if err := jsonRuns(*url, counts, *d, *rounds); err != nil {
			fail(err)
		}
		return
	}
	if *child != "" {
		if err := threadsUnderWaiters(*child, *url, *waiters, *d); err != nil {
			fail(err)
		}
		return
	}

	type samples struct {
		p50one, p99one, p99many []time.Duration
		perSecond               []float64
		threads                 []int
	}
	got := map[string]*samples{}
	for _, lib := range libraries {
		got[lib.name] = &samples{}
	}
	for r := 0; r < *rounds; r++ {
		for _, lib := range libraries {
			allow, closeFn, err := lib.open(*url)
			if err != nil {
				fail(fmt.Errorf("%s: %v", lib.name, err))
			}
			one, err := run(allow, 1, *d)
			if err == nil {
				var many result
				many, err = run(allow, 64, *d)
				s := got[lib.name]
				s.p50one, s.p99one = append(s.p50one, one.p50), append(s.p99one, one.p99)
				s.perSecond, s.p99many = append(s.perSecond, many.perSecond), append(s.p99many, many.p99)
			}
			closeFn()
			if err != nil {
				fail(fmt.Errorf("%s: %v", lib.name, err))
			}
			if !lib.threads {
				continue
			}
			child := exec.Command(os.Args[0], "-redis", *url, "-duration", d.String(),
				"-waiters", strconv.Itoa(*waiters), "-threads-of", lib.name, "-ctx", *ctxKind)
			child.Stderr = os.Stderr
			out, err := child.Output()
			if err != nil {
				fail(fmt.Errorf("%s threads: %v", lib.name, err))
			}
			n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
			got[lib.name].threads = append(got[lib.name].threads, n)
		}
	}

	rlS, rr, floor := got["rl"], got["redis_rate"], got["C ABI sync"]
	fmt.Printf("Go binding vs go-redis/redis_rate v10, GCRA, one redis-server, %d rounds of %v, medians\n\n", *rounds, *d)
	fmt.Println("| measure | rl | redis_rate | rl / redis_rate | C ABI sync call (floor) |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: |")
	us := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Microsecond)) }
	durations := func(name string, pick func(*samples) []time.Duration) {
		a, b, c := median(pick(rlS)), median(pick(rr)), median(pick(floor))
		fmt.Printf("| %s | %s | %s | %.2fx | %s |\n", name, us(a), us(b), float64(a)/float64(b), us(c))
	}
	durations("1 goroutine, p50 latency (us)", func(s *samples) []time.Duration { return s.p50one })
	durations("1 goroutine, p99 latency (us)", func(s *samples) []time.Duration { return s.p99one })
	a, b, c := median(rlS.perSecond), median(rr.perSecond), median(floor.perSecond)
	fmt.Printf("| 64 goroutines, decisions/s | %.0f | %.0f | %.2fx | %.0f |\n", a, b, a/b, c)
	durations("64 goroutines, p99 latency (us)", func(s *samples) []time.Duration { return s.p99many })
	t1, t2 := median(rlS.threads), median(rr.threads)
	fmt.Printf("| OS threads, %d goroutines in flight | %d | %d | %.2fx | one per call |\n", *waiters, t1, t2, float64(t1)/float64(t2))
}

// runsOthers: commands whose time includes that of the commands they run
// (a script's redis.call, a transaction's queue), which INFO commandstats
// also lists on their own.
var runsOthers = map[string]bool{"eval": true, "evalsha": true, "eval_ro": true, "evalsha_ro": true,
	"fcall": true, "fcall_ro": true, "exec": true}

// entryCommand: sent by a client, not run by a script or a transaction.
func entryCommand(c string) bool {
	return runsOthers[c] || c == "multi" || strings.HasPrefix(c, "script|") ||
		strings.HasPrefix(c, "function|") || strings.Contains(c, ".")
}

// serverUsec is the microseconds redis-server spent in commands since the
// last CONFIG RESETSTAT, but for this admin connection's own INFO and CONFIG;
// when scripts or transactions ran, only the commands clients sent
// (bench/README.md, "Redis CPU per decision").
func serverUsec(ctx context.Context, admin *redis.Client) (float64, error) {
	info, err := admin.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, err
	}
	usecOf := map[string]float64{}
	nested := false
	for _, line := range strings.Split(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || name == "cmdstat_info" || name == "cmdstat_config" {
			continue
		}
		command := strings.TrimPrefix(name, "cmdstat_")
		nested = nested || runsOthers[command]
		for _, field := range strings.Split(stats, ",") {
			if v, ok := strings.CutPrefix(field, "usec="); ok {
				n, _ := strconv.ParseFloat(v, 64)
				usecOf[command] += n
			}
		}
	}
	usec := 0.0
	for command, u := range usecOf {
		if !nested || entryCommand(command) {
			usec += u
		}
	}
	return usec, nil
}

// jsonRuns measures rl and redis_rate at each goroutine count, alternating
// within each round, and prints the medians as JSON lines.
func jsonRuns(url string, counts []int, d time.Duration, rounds int) error {
	ctx := context.Background()
	opt, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	admin := redis.NewClient(opt)
	defer admin.Close()
	// rl, redis_rate, and with RL_BENCH_MODULE_URL (bench/run: a server with
	// rl's Redis module) "rl module": rl there with script_mode=module, its
	// Redis CPU read from that server.
	type contender struct {
		name  string
		open  func(string) (allowFunc, func(), error)
		url   string
		admin *redis.Client
	}
	contenders := []contender{{"rl", openRL, url, admin}, {"redis_rate", openRedisRate, url, admin}}
	if moduleURL := os.Getenv("RL_BENCH_MODULE_URL"); moduleURL != "" {
		mopt, err := redis.ParseURL(moduleURL)
		if err != nil {
			return err
		}
		moduleAdmin := redis.NewClient(mopt)
		defer moduleAdmin.Close()
		moduleURL += "?script_mode=module"
		contenders = append(contenders, contender{"rl module", openRL, moduleURL, moduleAdmin})
	}
	type key struct {
		library    string
		goroutines int
	}
	type samples struct{ perSecond, p50, p99, usec []float64 }
	got := map[key]*samples{}
	for r := 0; r < rounds; r++ {
		for _, lib := range contenders {
			admin := lib.admin
			allow, closeFn, err := lib.open(lib.url)
			if err != nil {
				return fmt.Errorf("%s: %v", lib.name, err)
			}
			for i := 0; i < 100; i++ { // loads the script, fills the pool
				if err := allow(ctx, "warm-up"); err != nil {
					closeFn()
					return fmt.Errorf("%s: %v", lib.name, err)
				}
			}
			for _, n := range counts {
				if err := admin.ConfigResetStat(ctx).Err(); err != nil {
					closeFn()
					return err
				}
				res, err := run(allow, n, d)
				if err != nil {
					closeFn()
					return fmt.Errorf("%s: %v", lib.name, err)
				}
				usec, err := serverUsec(ctx, admin)
				if err != nil {
					closeFn()
					return err
				}
				k := key{lib.name, n}
				if got[k] == nil {
					got[k] = &samples{}
				}
				s := got[k]
				s.perSecond = append(s.perSecond, res.perSecond)
				s.p50 = append(s.p50, float64(res.p50)/float64(time.Microsecond))
				s.p99 = append(s.p99, float64(res.p99)/float64(time.Microsecond))
				s.usec = append(s.usec, usec/float64(res.calls))
			}
			closeFn()
		}
	}
	for _, lib := range contenders {
		for _, n := range counts {
			s := got[key{lib.name, n}]
			line, _ := json.Marshal(map[string]any{
				"bench": "go", "library": lib.name, "goroutines": n, "rounds": rounds,
				"per_second": median(s.perSecond), "p50_us": median(s.p50), "p99_us": median(s.p99),
				"redis_us_per_decision": median(s.usec),
			})
			fmt.Println(string(line))
		}
	}
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
