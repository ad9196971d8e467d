package rl

// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"context"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// Store is where rate-limit state lives: "memory://" in this process, or
// "redis://host:port" shared by every process on that Redis. It is safe for
// concurrent use. Close it when done; a Store that becomes unreachable
// without Close is closed by the garbage collector as a backstop.
type Store struct {
	mu      sync.RWMutex // Close takes it to free c; calls hold it shared
	c       *C.rl_store  // nil once closed
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
	curl := C.CString(url)
	defer C.free(unsafe.Pointer(curl))
	var c *C.rl_store
	var cerr *C.rl_error
	if st := C.rl_store_open(curl, nil, &c, &cerr); st != C.RL_OK {
		return nil, takeError(st, cerr)
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

func describe(c *C.rl_store) StoreInfo {
	var info C.rl_store_info
	C.rl_store_info_init(&info, C.RL_STORE_INFO_VERSION, nil) // RL_STORE_INFO_INIT
	C.rl_store_describe(c, &info, nil)                        // an open store and a set version: cannot fail
	return StoreInfo{
		Scheme:      C.GoString(info.scheme),
		URL:         C.GoString(C.rl_store_display_url(c)),
		InProcess:   info.in_process != 0,
		ManualClock: info.manual_clock != 0,
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
	err := s.with(func(store *C.rl_store) error {
		var info C.rl_store_info
		C.rl_store_info_init(&info, C.RL_STORE_INFO_VERSION, nil)
		var cerr *C.rl_error
		if st := C.rl_store_describe(store, &info, &cerr); st != C.RL_OK {
			return takeError(st, cerr)
		}
		if info.script_mode != nil {
			d = DecidesWith{
				ScriptMode:  C.GoString(info.script_mode),
				LuaMode:     C.GoString(info.lua_mode),
				ModuleNodes: int(info.module_nodes),
				LuaNodes:    int(info.lua_nodes),
			}
		}
		return nil
	})
	return d, err
}

func freeStore(c *C.rl_store) {
	C.rl_store_free(c)
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
	defer C.rl_config_free(ccfg)
	var c *C.rl_limiter
	var cerr *C.rl_error
	err = s.with(func(store *C.rl_store) error {
		if st := C.rl_limiter_new(store, ccfg, &c, &cerr); st != C.RL_OK {
			return takeError(st, cerr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	liveLimiters.Add(1)
	l := &Limiter{c: c, store: s, config: cfg, name: C.GoString(C.rl_limiter_name(c)), limits: limitsOf(c)}
	l.refs.Store(1)
	l.cleanup = runtime.AddCleanup(l, freeLimiter, c)
	return l, nil
}

// SetClock sets the time of a store opened with clock=manual to us
// microseconds. Time never goes backwards.
func (s *Store) SetClock(us int64) error {
	return s.with(func(store *C.rl_store) error {
		var cerr *C.rl_error
		if st := C.rl_store_clock_set(store, C.int64_t(us), &cerr); st != C.RL_OK {
			return takeError(st, cerr)
		}
		return nil
	})
}

// AdvanceClock moves the time of a store opened with clock=manual forward
// by d, rounded down to whole microseconds (a negative d is
// ErrInvalidArgument).
func (s *Store) AdvanceClock(d time.Duration) error {
	us := d / time.Microsecond
	if d%time.Microsecond < 0 {
		us-- // round down, so that no negative d becomes 0
	}
	return s.with(func(store *C.rl_store) error {
		var cerr *C.rl_error
		if st := C.rl_store_clock_advance(store, C.int64_t(us), &cerr); st != C.RL_OK {
			return takeError(st, cerr)
		}
		return nil
	})
}

// with runs f on the native store while holding it open.
func (s *Store) with(f func(*C.rl_store) error) error {
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
