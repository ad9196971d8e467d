package rl

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// Store is where rate-limit state lives: "memory://" in this process, or
// "redis://host:port" shared by every process on that Redis. It is safe for
// concurrent use. Close it when done; a Store that becomes unreachable
// without Close is closed by the garbage collector as a backstop.
type Store struct {
	mu      sync.RWMutex // Close takes it to free c; calls hold it shared
	c       *nativeStore // nil once closed
	info    StoreInfo
	cleanup runtime.Cleanup
	gate    syncGate // which call may block its thread (sync.go)
}

// Open opens the store at url, e.g. "memory://", "memory://?clock=manual",
// "redis://127.0.0.1:6379?timeout_ms=50" (settings are query parameters;
// see rl_config_describe). If ctx ends first, Open returns ctx.Err() at
// once and the store, when it does open, is closed in the background.
func Open(ctx context.Context, url string) (*Store, error) {
	if err := checkContext(ctx); err != nil {
		return nil, err
	}
	if err := checkCString(url, "url"); err != nil {
		return nil, err
	}
	type opened struct {
		store *Store
		err   error
	}
	done := make(chan opened, 1)
	go func() {
		s, err := open(url)
		done <- opened{s, err}
	}()
	select {
	case o := <-done:
		return o.store, o.err
	case <-ctx.Done():
		go func() {
			if o := <-done; o.store != nil {
				o.store.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

func open(url string) (*Store, error) {
	c, err := rlStoreOpen(url)
	if err != nil {
		return nil, err
	}
	liveStores.Add(1)
	s := &Store{c: c, info: describe(c)}
	s.cleanup = runtime.AddCleanup(s, freeStore, c)
	return s, nil
}

// StoreInfo says what a store is (rl_store_describe, rl_store_display_url).
type StoreInfo struct {
	Scheme string // "memory" or "redis"
	// URL is the URL the store was opened with in librl's display form: the
	// password and every secret setting (sentinel_password) are "***".
	URL         string
	InProcess   bool // state lives in this process (memory://): calls never wait for I/O
	ManualClock bool // opened with clock=manual
}

// Info says what the store is. It stays true after Close.
func (s *Store) Info() StoreInfo { return s.info }

// String is "rl.Store(" + the URL in librl's display form + ")": a Store
// printed with %v or %s never shows a credential.
func (s *Store) String() string { return "rl.Store(" + s.info.URL + ")" }

func describe(c *nativeStore) StoreInfo {
	d, _ := rlStoreDescribe(c) // an open store and a set version: cannot fail
	return StoreInfo{
		Scheme:      d.scheme,
		URL:         rlStoreDisplayURL(c),
		InProcess:   d.inProcess,
		ManualClock: d.manual,
	}
}

// DecidesWith says what decides in Redis (script_mode; docs/redis-module.md
// in the rl repository). The zero value for memory://.
type DecidesWith struct {
	ScriptMode string // the script_mode setting: "auto", "module", "functions" or "scripts"
	// LuaMode is what rl's Lua code goes as: "functions" (FCALL), or
	// "scripts" (EVALSHA) once a server or user without Functions was met.
	LuaMode string
	// Under script_mode=auto (0 otherwise): the nodes seen so far deciding
	// with rl's Redis module and with the Lua code, each by its latest answer
	// (a node found without the module is asked again once its connection
	// is made again).
	ModuleNodes int
	LuaNodes    int
}

// DecidesWith says what decides in Redis now (rl_store_describe, version
// 2): the nodes seen change as calls reach them. ErrShutdown after Close.
func (s *Store) DecidesWith() (DecidesWith, error) {
	var d DecidesWith
	err := s.with(func(store *nativeStore) error {
		info, err := rlStoreDescribe(store)
		d = DecidesWith{
			ScriptMode:  info.scriptMode,
			LuaMode:     info.luaMode,
			ModuleNodes: info.moduleNodes,
			LuaNodes:    info.luaNodes,
		}
		return err
	})
	return d, err
}

func freeStore(c *nativeStore) {
	rlStoreFree(c)
	liveStores.Add(-1)
}

// Close closes the store: calls in flight on its limiters end with
// ErrShutdown before Close returns (a call already answered keeps its
// answer; a memory:// call never waits, so one in flight is decided or
// fails with ErrShutdown as it returns), and later calls fail with
// ErrShutdown. Idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != nil {
		s.cleanup.Stop()
		freeStore(s.c) // ends the call blocked in rl, if any, with RL_E_SHUTDOWN
		s.c = nil
		s.gate.waitForBlockingCall()
	}
	return nil
}

// Limiter makes a limiter over the store. Its settings are checked now: a
// bad limit string is an ErrInvalidArgument naming the setting.
func (s *Store) Limiter(cfg Config) (*Limiter, error) {
	ccfg, err := cfg.newConfig()
	if err != nil {
		return nil, err
	}
	defer rlConfigFree(ccfg)
	var c *nativeLimiter
	err = s.with(func(store *nativeStore) error {
		c, err = rlLimiterNew(store, ccfg)
		return err
	})
	if err != nil {
		return nil, err
	}
	liveLimiters.Add(1)
	l := &Limiter{c: c, store: s, config: cfg, name: rlLimiterName(c), limits: rlLimiterLimits(c)}
	l.refs.Store(1)
	l.cleanup = runtime.AddCleanup(l, freeLimiter, c)
	return l, nil
}

// SetClock sets the time of a store opened with clock=manual to us
// microseconds. Time never goes backwards.
func (s *Store) SetClock(us int64) error {
	return s.with(func(store *nativeStore) error { return rlStoreClockSet(store, us) })
}

// AdvanceClock moves the time of a store opened with clock=manual forward
// by d, rounded down to whole microseconds (a negative d is
// ErrInvalidArgument).
func (s *Store) AdvanceClock(d time.Duration) error {
	us := d / time.Microsecond
	if d%time.Microsecond < 0 {
		us-- // round down, so that no negative d becomes 0
	}
	return s.with(func(store *nativeStore) error { return rlStoreClockAdvance(store, int64(us)) })
}

// with runs f on the native store while holding it open.
func (s *Store) with(f func(*nativeStore) error) error {
	if s == nil {
		return newError(StatusInvalidArgument, "store: is nil")
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.c == nil {
		return newError(StatusShutdown, "store: closed")
	}
	err := f(s.c)
	runtime.KeepAlive(s)
	return err
}

// checkContext refuses a nil ctx (Go forbids it; we answer instead of
// panicking) and one that has already ended.
func checkContext(ctx context.Context) error {
	if ctx == nil {
		return newError(StatusInvalidArgument, "ctx: is nil")
	}
	return ctx.Err()
}
