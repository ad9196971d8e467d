/*
 * rl.h: the C ABI of rl, a distributed rate limiter.
 *
 * This is the only public header. Everything it declares is stable within a
 * major version (the SONAME is librl.so.<major>): functions are only added,
 * status values are pinned forever, and the versioned structs (rl_request,
 * rl_decision, rl_store_info, ...) only ever grow at their end.
 *
 * Conventions, true of every function unless its comment says otherwise:
 * - A fallible call returns rl_status (RL_OK is 0) and takes an optional
 *   `rl_error **err` as its last argument. When it is not NULL and the call
 *   fails, *err receives a new error object that the caller owns and frees
 *   with rl_error_free. On success *err is left untouched. There is no
 *   thread-local "last error".
 * - Handles (rl_store, rl_limiter, rl_config, rl_error) are opaque.
 * - Keys are byte strings `(const char *key, size_t key_len)`: any bytes,
 *   NUL included, 1 to RL_MAX_KEY_LEN bytes.
 * - Durations in results are microseconds.
 * - No C++ exception or abort crosses this boundary: a failure is a status.
 * - A versioned struct (rl_request, rl_decision, rl_store_info) starts with
 *   `uint32_t version`; initialise it with its *_INIT macro (or, where
 *   macros cannot be used, its rl_*_init function). The library
 *   reads and writes only the fields of the version the caller set, so a
 *   caller built against an older rl.h keeps working. In an array every
 *   element must carry the same version (it fixes the element size).
 * - rl_store and rl_limiter are thread-safe: any thread may call any
 *   function on them at the same time, except their own *_free, which must
 *   not race other calls on the same handle.
 * See docs/threading.md and docs/errors.md.
 */
#ifndef RL_RL_H
#define RL_RL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(RL_BUILDING_LIBRARY) && defined(__GNUC__)
#define RL_API __attribute__((visibility("default")))
#else
#define RL_API
#endif

#define RL_VERSION_MAJOR 1
#define RL_VERSION_MINOR 7
#define RL_VERSION_PATCH 0
#define RL_VERSION_STRING "1.7.0"

/* Longest user key, in bytes. */
#define RL_MAX_KEY_LEN 512
/* Most requests in one batch. */
#define RL_MAX_BATCH 65536
/* 1.5. The longest wait, in microseconds: 2^52 (142 years). A longer
 * timeout_us of rl_limiter_acquire_wait is this one; a binding that maps
 * "no deadline" to a wait passes it. */
#define RL_MAX_WAIT_US 4503599627370496LL

/* ------------------------------------------------------------------ */
/* Status codes. The numbers are pinned forever; new ones are appended. */

typedef enum rl_status {
  RL_OK = 0,
  /* An argument or setting was wrong; the message names it. */
  RL_E_INVALID_ARG = 1,
  /* The operation did not complete within its deadline (timeout_ms). */
  RL_E_TIMEOUT = 2,
  /* The backend (Redis) could not be reached. */
  RL_E_BACKEND_UNAVAILABLE = 3,
  /* The backend answered with an error it should not have. */
  RL_E_BACKEND_ERROR = 4,
  /* The store was closed; pending and later calls end with this. */
  RL_E_SHUTDOWN = 5,
  /* Memory could not be allocated. */
  RL_E_NO_MEMORY = 6,
  /* A bug in rl: please report it with the message. */
  RL_E_INTERNAL = 7,
  /* The backend refused the credentials (AUTH, ACL). */
  RL_E_AUTH = 8,
  /* A valid request this build or store does not support. */
  RL_E_UNSUPPORTED = 9
} rl_status;

/* Number of status values; valid statuses are 0 .. RL_STATUS_COUNT - 1. */
#define RL_STATUS_COUNT 10

/* The name of a status ("RL_E_INVALID_ARG"), or NULL for a value that is
 * not a status. Static storage; thread-safe. */
RL_API const char* rl_status_name(int status);

/* 1.6. What a status means, in one line ("the store (Redis) could not be
 * reached"), or NULL for a value that is not a status. From the table that
 * names statuses. Static storage; thread-safe. */
RL_API const char* rl_status_description(int status);

/* 1 when status means the store had an outage (RL_E_BACKEND_UNAVAILABLE,
 * RL_E_TIMEOUT): the failures the on_failure setting and the circuit
 * breaker act on. Bad input, RL_E_AUTH, RL_E_BACKEND_ERROR and
 * RL_E_SHUTDOWN are never outages. 0 otherwise. Thread-safe. */
RL_API int rl_status_is_outage(int status);

/* "1.7.0" of the library loaded at run time. Static storage. */
RL_API const char* rl_version(void);

/* ------------------------------------------------------------------ */
/* Errors */

typedef struct rl_error rl_error;

/* The status carried by err; RL_OK for NULL. */
RL_API rl_status rl_error_status(const rl_error* err);
/* The message of err, valid until rl_error_free(err); "" for NULL. */
RL_API const char* rl_error_message(const rl_error* err);
/* Frees err. NULL is a no-op. */
RL_API void rl_error_free(rl_error* err);

/* 1.7. Text that reaches rl as a NUL-terminated string (a URL, a setting's
 * key or value) and that a binding holds with its length (a Go, Java,
 * JavaScript or Python string): RL_OK when text[0 .. length - 1] holds no
 * NUL byte, else RL_E_INVALID_ARG "<what>: contains a NUL byte", since C
 * would silently cut the text there ("api\0evil" read as "api"). what (NUL-
 * terminated) names the argument in the message. text may be NULL when
 * length is 0. Thread-safe. */
RL_API rl_status rl_text_check(const char* text, size_t length, const char* what, rl_error** err);

/* ------------------------------------------------------------------ */
/* Settings: string key/value pairs, validated when set. */

typedef struct rl_config rl_config;

/* A new, empty config; NULL only when out of memory. Free with
 * rl_config_free. Not thread-safe: one thread builds it. */
RL_API rl_config* rl_config_new(void);
RL_API void rl_config_free(rl_config* cfg);
/* Sets key to value (both NUL-terminated, copied). An unknown key or a
 * malformed value is RL_E_INVALID_ARG naming the key; the config is then
 * unchanged. Setting a key again replaces its value. */
RL_API rl_status rl_config_set(rl_config* cfg, const char* key, const char* value, rl_error** err);
/* Describes the setting at index (0, 1, ...): returns its name and stores
 * a one-line description in *description (may be NULL). Returns NULL past
 * the last setting. Static storage; thread-safe. */
RL_API const char* rl_config_describe(size_t index, const char** description);

#define RL_SETTING_INFO_VERSION 1
/* 1.6. One setting of the settings table, for bindings that type settings
 * (or check their typed lists against it). Initialise with
 * RL_SETTING_INFO_INIT. Every string is static storage. */
typedef struct rl_setting_info {
  uint32_t version;
  /* 1 for a credential: its value is never shown (a store's display URL
   * puts "***" in its place). */
  int32_t secret;
  const char* name;
  /* "store" (a URL query key, or rl_store_open's cfg) or "limiter"
   * (rl_limiter_new's cfg). */
  const char* scope;
  /* What the value is: "text", "count" (a whole number from range_min to
   * range_max), "duration" ("100ms", "1s", "2m"), "choice" (one word of
   * `choices`), "boolean" ("true"/"false"), "rates" ("10/s, 1000/h"),
   * "counts" (whole numbers, one per limit, comma-separated), "decimal" (up
   * to 3 decimals), "fraction" ("1/4" or "0.25") or "path". */
  const char* kind;
  /* kind "choice": its words, comma-separated; NULL otherwise. */
  const char* choices;
  /* The value an unset setting has, as it would be written; NULL when
   * none (required, or a default no value spells, such as "the limit"). */
  const char* default_value;
  /* The description alone (rl_config_describe's adds range and default). */
  const char* description;
  /* kind "count": the range; 0 and 0 otherwise. */
  int64_t range_min;
  int64_t range_max;
} rl_setting_info;
#define RL_SETTING_INFO_INIT \
  { RL_SETTING_INFO_VERSION, 0, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0 }
/* 1.7. RL_SETTING_INFO_INIT as a function (see rl_request_init). */
RL_API rl_status rl_setting_info_init(rl_setting_info* info, uint32_t version, rl_error** err);

/* 1.6. Describes the setting at index (0, 1, ..., in rl_config_describe's
 * order) into *info (its version set by the caller). Past the last setting:
 * RL_E_INVALID_ARG saying so. Thread-safe. */
RL_API rl_status rl_setting_describe(size_t index, rl_setting_info* info, rl_error** err);

/* ------------------------------------------------------------------ */
/* Stores */

typedef struct rl_store rl_store;

/* Opens a store from a URL: "memory://", "redis://[user:pass@]host:port[/db]"
 * with settings as query parameters ("?timeout_ms=50&clock=manual"). cfg is
 * optional (NULL) and may carry store settings too; it is copied, and the
 * caller still frees it. On success *out owns a store; free it with
 * rl_store_free. */
RL_API rl_status rl_store_open(const char* url, const rl_config* cfg, rl_store** out,
                               rl_error** err);
/* Closes the store: every pending asynchronous call completes with
 * RL_E_SHUTDOWN before this returns, and every later call on the store or
 * its limiters fails with RL_E_SHUTDOWN. Idempotent. Must not be called
 * from inside a completion callback of this store. */
RL_API void rl_store_close(rl_store* store);
/* Closes the store (see rl_store_close) and frees the handle. Limiters made
 * from it stay valid to free, and fail their calls with RL_E_SHUTDOWN.
 * NULL is a no-op. */
RL_API void rl_store_free(rl_store* store);

#define RL_STORE_INFO_VERSION 2
/* What a store is, for bindings that adapt to it. Initialise with
 * RL_STORE_INFO_INIT; rl fills the rest. Sizes: version 1 is 24 bytes
 * (on LP64), version 2 is 48. */
typedef struct rl_store_info {
  uint32_t version;
  /* 1 when state lives in this process (memory://): calls never wait for
   * I/O, so the sync functions may run on an event loop's thread. */
  int32_t in_process;
  /* 1 when opened with clock=manual (time moves only through
   * rl_store_clock_set/advance; acquire_wait never waits). */
  int32_t manual_clock;
  /* The URL scheme: "memory" or "redis". Static storage. */
  const char* scheme;
  /* Version 2 (1.5): what decides in Redis (docs/redis-module.md). NULL,
   * NULL, 0, 0 for memory://.
   * The script_mode setting: "auto", "module", "functions" or "scripts".
   * Static storage. */
  const char* script_mode;
  /* What rl's Lua code goes as where it runs: "functions" (FCALL), or
   * "scripts" (EVALSHA) once a server or user without Functions was met.
   * Static storage. */
  const char* lua_mode;
  /* script_mode=auto only (0 otherwise): the nodes seen so far deciding
   * with rl's Redis module and with the Lua code, each by its latest answer
   * (a node found without the module is asked again once its connection is
   * made again). Nothing is seen before the first call. */
  uint32_t module_nodes;
  uint32_t lua_nodes;
} rl_store_info;
#define RL_STORE_INFO_INIT \
  { RL_STORE_INFO_VERSION, 0, 0, NULL, NULL, NULL, 0, 0 }
/* 1.7. RL_STORE_INFO_INIT as a function (see rl_request_init). */
RL_API rl_status rl_store_info_init(rl_store_info* info, uint32_t version, rl_error** err);

/* Describes store into *info (its version set by the caller). Works after
 * the store was closed. */
RL_API rl_status rl_store_describe(const rl_store* store, rl_store_info* info, rl_error** err);

/* 1.4. The URL the store was opened with, in its display form: read by
 * the parser that opened the store and written again with the password,
 * and the value of every secret setting (sentinel_password) and of any
 * unknown query key, replaced by "***"; ports are always shown
 * ("redis://app:***@host:6379/2?timeout_ms=50"; docs/urls.md). Show this,
 * never the URL itself. Valid as long as the store handle (until
 * rl_store_free); works after the store was closed. NULL for a NULL store.
 * Thread-safe. */
RL_API const char* rl_store_display_url(const rl_store* store);

/* Manual clock (stores opened with clock=manual only; otherwise
 * RL_E_INVALID_ARG). Sets the store's time to now_us microseconds, or
 * moves it by delta_us (>= 0). Time never goes backwards. */
RL_API rl_status rl_store_clock_set(rl_store* store, int64_t now_us, rl_error** err);
RL_API rl_status rl_store_clock_advance(rl_store* store, int64_t delta_us, rl_error** err);

/* The state of a store's circuit breaker (docs/failure.md). */
typedef enum rl_breaker_state {
  RL_BREAKER_CLOSED = 0,   /* calls go to the store */
  RL_BREAKER_OPEN = 1,     /* calls take on_failure at once */
  RL_BREAKER_HALF_OPEN = 2 /* one probe is in flight */
} rl_breaker_state;

/* Number of breaker-state values; valid states are 0 ..
 * RL_BREAKER_STATE_COUNT - 1. */
#define RL_BREAKER_STATE_COUNT 3

/* 1.5. The name of a breaker state ("closed", "open", "half_open"), or NULL
 * for a value that is not a state. Static storage; thread-safe. */
RL_API const char* rl_breaker_state_name(int state);

#define RL_STORE_STATS_VERSION 2
/* What a store has done since it opened. Counters never go down. Sizes:
 * version 1 is 248 bytes, version 2 is 288. */
typedef struct rl_store_stats {
  uint32_t version;
  /* An rl_breaker_state; always RL_BREAKER_CLOSED for memory://. */
  int32_t breaker_state;
  /* Times the breaker opened. */
  uint64_t breaker_opened;
  /* Decisions by verdict, indexed by rl_source (room for new sources). */
  uint64_t allowed[4];
  uint64_t denied[4];
  /* Calls that ended in an error, indexed by rl_status. */
  uint64_t failures[16];
  /* Store round trips (none for memory://) and their latency: quantiles
   * are the upper bound of a log-linear bucket, within 12.5%. */
  uint64_t round_trips;
  int64_t round_trip_p50_us;
  int64_t round_trip_p95_us;
  int64_t round_trip_p99_us;
  int64_t round_trip_max_us;
  /* Version 2: leases (docs/algorithms.md, "Leases"), summed over the
   * store's limiters. Slices the store granted, the units in them, the
   * units left in slices when their lease ended, of those the units handed
   * back to the store, and the calls decided from a slice without a store
   * call (also counted in allowed[RL_SOURCE_STORE]). A version-1 struct
   * ends at round_trip_max_us: rl writes only that much of it. */
  uint64_t leases_taken;
  uint64_t lease_units_leased;
  uint64_t lease_units_unused;
  uint64_t lease_units_returned;
  uint64_t lease_decisions;
} rl_store_stats;

/* Initialises an rl_store_stats: `rl_store_stats s = RL_STORE_STATS_INIT;`
 * (in C++ a value-initialised copy, which -Wextra does not warn about). */
#ifdef __cplusplus
#define RL_STORE_STATS_INIT             \
  ([] {                                 \
    rl_store_stats s{};                 \
    s.version = RL_STORE_STATS_VERSION; \
    return s;                           \
  }())
#else
#define RL_STORE_STATS_INIT \
  { .version = RL_STORE_STATS_VERSION }
#endif
/* 1.7. RL_STORE_STATS_INIT as a function (see rl_request_init). */
RL_API rl_status rl_store_stats_init(rl_store_stats* stats, uint32_t version, rl_error** err);

/* Fills *out (its version set by the caller) with the store's statistics.
 * Thread-safe; works after the store was closed. */
RL_API rl_status rl_store_get_stats(rl_store* store, rl_store_stats* out, rl_error** err);

/* The same statistics in the Prometheus text exposition format (metric
 * names start with rl_). Writes at most `capacity` bytes, NUL included, to
 * buf (which may be NULL when capacity is 0) and returns the length of the
 * whole text without its NUL: call again with a larger buffer when the
 * result is >= capacity. 0 for a NULL store. Thread-safe. */
RL_API size_t rl_store_format_metrics(rl_store* store, char* buf, size_t capacity);
/* 1.5. The same text in one call, whole and NUL-terminated, in memory rl
 * allocates: free it with rl_string_free. NULL for a NULL store or when
 * memory ran out. Thread-safe. */
RL_API char* rl_store_metrics(rl_store* store);
/* 1.5. Frees a string rl allocated (rl_store_metrics, rl_headers_render).
 * NULL is harmless. */
RL_API void rl_string_free(char* text);

#define RL_NODE_BREAKER_VERSION 1
/* One node's circuit breaker: a store of one node (redis://, Sentinel's
 * master) has one, a Cluster store one per master (docs/failure.md). */
typedef struct rl_node_breaker {
  uint32_t version;
  /* An rl_breaker_state. */
  int32_t state;
  /* Times it opened. */
  uint64_t opened;
  /* "host:port" (under Sentinel, the master's name), NUL-terminated; a
   * longer name is cut to fit. */
  char node[272];
} rl_node_breaker;

/* The breakers of the nodes that serve keys now (on Cluster, the masters
 * of the slot map): fills out[0] to out[min(capacity, *count) - 1] and
 * sets *count to how many there are (0 for memory://); call again with
 * more room when *count > capacity. out[0].version, set by the caller,
 * is every element's. out may be NULL when capacity is 0. Thread-safe;
 * works after the store was closed. rl_store_stats's breaker_state is the
 * worst of these. */
RL_API rl_status rl_store_get_node_breakers(rl_store* store, rl_node_breaker* out, size_t capacity,
                                            size_t* count, rl_error** err);

/* ------------------------------------------------------------------ */
/* Limiters */

typedef struct rl_limiter rl_limiter;

/* A new limiter over store with the limiter settings in cfg (algorithm,
 * limit, burst, name, ...; see rl_config_describe). cfg is copied; the caller
 * still frees it. Free the limiter with rl_limiter_free. */
RL_API rl_status rl_limiter_new(rl_store* store, const rl_config* cfg, rl_limiter** out,
                                rl_error** err);
/* Frees the limiter. Pending asynchronous calls still complete. NULL is a
 * no-op. */
RL_API void rl_limiter_free(rl_limiter* limiter);

/* One limit of a limiter, as rl parsed it from the `limit` and `burst`
 * settings: `limit` units per `window_us` microseconds, capacity `burst`. */
typedef struct rl_limit_info {
  int64_t limit;
  int64_t window_us;
  int64_t burst;
} rl_limit_info;

/* The limits of limiter, in the order of its `limit` setting: writes the
 * first `capacity` of them to out (which may be NULL when capacity is 0) and
 * returns how many there are (1 to 8; 0 for a NULL limiter). Lets bindings
 * describe a limiter (e.g. HTTP RateLimit-Policy headers) without parsing
 * limit strings again. Thread-safe; works after the store was closed. */
RL_API size_t rl_limiter_limits(const rl_limiter* limiter, rl_limit_info* out, size_t capacity);

/* The limiter's `name` setting ("default" when it was not set): valid as
 * long as the limiter, works after the store was closed. NULL for a NULL
 * limiter. Thread-safe. */
RL_API const char* rl_limiter_name(const rl_limiter* limiter);

#define RL_REQUEST_VERSION 2
/* One request. Initialise with RL_REQUEST_INIT (version 2); version 1
 * requests (without timeout_us) are still accepted. */
typedef struct rl_request {
  uint32_t version;
  const char* key;
  size_t key_len;
  /* Units this request takes (acquire, peek) or gives back (refund). At
   * least 1 (peek also takes 0: the state without a request). */
  int64_t cost;
  /* Version 2. This call's deadline in microseconds from its start, so that
   * a caller's own deadline (a Go context, a Java timeout) reaches the
   * store: a store call keeps the earlier of it and the store's timeout_ms
   * (RL_E_TIMEOUT when it passes). 0: the store's timeout_ms alone. Never
   * negative. memory:// never waits, so it has nothing to cut short. In a
   * batch, which travels as one, the earliest of its requests' deadlines
   * applies to all of them. */
  int64_t timeout_us;
} rl_request;
/* version 2, everything else 0: set key, key_len and cost after it. */
#define RL_REQUEST_INIT \
  { RL_REQUEST_VERSION, NULL, 0, 0, 0 }
/* 1.7. The *_INIT macros as functions, for bindings that cannot expand C
 * macros (cgo, a foreign-function interface): fills *request with
 * RL_REQUEST_INIT of `version` (pass RL_REQUEST_VERSION of your rl.h): the
 * version set, everything else 0 or NULL, and nothing written beyond the
 * size of that version, so a library newer than the caller's rl.h never
 * writes past the caller's struct. A version this library does not know
 * (0, or above its own) is RL_E_INVALID_ARG, with *request untouched. The
 * same holds for rl_decision_init, rl_store_info_init, rl_store_stats_init
 * and rl_setting_info_init. Thread-safe. */
RL_API rl_status rl_request_init(rl_request* request, uint32_t version, rl_error** err);

/* Which path produced a decision. */
typedef enum rl_source {
  RL_SOURCE_STORE = 0,     /* the store itself decided */
  RL_SOURCE_FAIL_OPEN = 1, /* the store had an outage; on_failure=open allowed it */
  RL_SOURCE_LOCAL = 2,     /* the store had an outage; the local fallback decided */
  RL_SOURCE_DENY_CACHE =
      3 /* 1.2: a denial this limiter remembered (deny_cache_keys); no store call */
} rl_source;

/* Number of source values; valid sources are 0 .. RL_SOURCE_COUNT - 1. */
#define RL_SOURCE_COUNT 4

/* 1.2. The name of a source ("store", "fail_open", "local", "deny_cache":
 * the labels of rl_store_format_metrics), or NULL for a value that is not
 * a source. Static storage; thread-safe. */
RL_API const char* rl_source_name(int source);

#define RL_DECISION_VERSION 3
/* One decision. The caller initialises it with RL_DECISION_INIT (or sets
 * version) before the call; rl fills the fields of that version. Being
 * denied is a decision (allowed = 0), not an error.
 * Sizes: versions 1 and 2 are 48 bytes (2 used the padding of 1), version 3
 * is 56. A single decision that rl hands to a callback (rl_callback) is of
 * the newest version: a caller built against an older rl.h reads the first
 * fields it knows. Arrays handed to a batch callback step by their
 * element's size, so rl_limiter_acquire_batch_async hands version 2
 * elements (what callers built against rl.h 1.0 and 1.1 read) and
 * rl_limiter_acquire_batch_async_versioned those of the version its caller
 * asks for. Every element carries its version. */
typedef struct rl_decision {
  uint32_t version;
  /* 1 when the request was admitted and its cost recorded. */
  int32_t allowed;
  /* The limit (units per window) that decided. */
  int64_t limit;
  /* Units one more request could take right now (never negative). */
  int64_t remaining;
  /* 0 when allowed; else time until the same request would be admitted;
   * -1 when it never can be (cost above the burst). */
  int64_t retry_after_us;
  /* Time until the key is back to its full capacity. */
  int64_t reset_after_us;
  /* An rl_source value. */
  int32_t source;
  /* Version 2. Which limit decided, 0-based in the order of the `limit`
   * setting: the one with the smallest remaining (the first on a tie),
   * whose `limit` is above. Exact where limits share a value
   * ("100/s, 100/h"). Index into rl_limiter_limits. */
  int32_t limit_index;
  /* Version 3. algorithm=suppressed: the share of calls suppressed when
   * this one was decided, from 0 (admitted outright, below the limit) to 1
   * (denied outright, above the hard limit); in between, this call was
   * admitted with probability 1 - suppression_factor. A multiple of 2^-24.
   * 0 for every other algorithm. */
  double suppression_factor;
} rl_decision;
#define RL_DECISION_INIT \
  { RL_DECISION_VERSION, 0, 0, 0, 0, 0, 0, 0, 0 }
/* 1.7. RL_DECISION_INIT as a function (see rl_request_init). */
RL_API rl_status rl_decision_init(rl_decision* decision, uint32_t version, rl_error** err);

/* Decides request and records its cost when admitted. Blocks for one store
 * round trip (none for memory://). */
RL_API rl_status rl_limiter_acquire(rl_limiter* limiter, const rl_request* request,
                                    rl_decision* decision, rl_error** err);
/* Decides request without recording anything. */
RL_API rl_status rl_limiter_peek(rl_limiter* limiter, const rl_request* request,
                                 rl_decision* decision, rl_error** err);
/* Gives back request->cost units to the key (never beyond full capacity);
 * *decision (optional, may be NULL) describes the key afterwards. */
RL_API rl_status rl_limiter_refund(rl_limiter* limiter, const rl_request* request,
                                   rl_decision* decision, rl_error** err);
/* Forgets all state of key: it is back to full capacity. */
RL_API rl_status rl_limiter_reset(rl_limiter* limiter, const char* key, size_t key_len,
                                  rl_error** err);
/* Acquires, and while denied waits for the retry_after it was told and
 * tries again, until admitted or until timeout_us has passed. If the wait
 * would end past the deadline it returns the denial at once (RL_OK,
 * allowed = 0), without waiting in vain; a request that can never be
 * admitted (retry_after_us -1) returns at once too. With clock=manual it
 * never waits: it returns the first decision. timeout_us (any value >= 0;
 * beyond RL_MAX_WAIT_US it is RL_MAX_WAIT_US) bounds the whole wait: a retry's store call ends
 * by it too (RL_E_TIMEOUT), and request->timeout_us bounds each store
 * call. This blocks the calling thread; see
 * rl_limiter_acquire_wait_async for the form that does not. From inside a
 * completion callback it is RL_E_UNSUPPORTED (it would wait for itself). */
RL_API rl_status rl_limiter_acquire_wait(rl_limiter* limiter, const rl_request* request,
                                         int64_t timeout_us, rl_decision* decision, rl_error** err);
/* Acquires count requests (1 to RL_MAX_BATCH, each with its own key and
 * cost) in one round trip per store node. Each request is decided on its own, in order.
 * decisions[i] (each with its version set) receives the i-th decision. If
 * any request is malformed, nothing is decided and the error names its
 * index. */
RL_API rl_status rl_limiter_acquire_batch(rl_limiter* limiter, const rl_request* requests,
                                          size_t count, rl_decision* decisions, rl_error** err);
/* 1.3. rl_limiter_acquire_batch with a result per request: where one
 * request's store call fails, the others still get their decisions. On a
 * single Redis node a batch travels as one write, so an outage (timeout,
 * connection lost) fails every request of it, each with that status; a
 * request can still fail alone (a script error on its key), and with Redis
 * Cluster a batch is split by node, so one node can fail while the others
 * answer. Each request that had an outage takes the limiter's on_failure
 * on its own (a decision of source RL_SOURCE_FAIL_OPEN or RL_SOURCE_LOCAL).
 * Returns RL_OK when the batch was accepted and every request has its
 * result: statuses[i] is RL_OK when decisions[i] was filled, else the
 * request's failure (decisions[i] is then left as the caller set it). When
 * errors is not NULL, errors[i] receives a new rl_error (the caller frees
 * each with rl_error_free) for every failed request and NULL for the
 * others (NULL too when its error could not be allocated). decisions
 * carries versions as in rl_limiter_acquire_batch; statuses and errors have
 * count elements.
 * Any other return is the call's own failure, with nothing decided and
 * nothing written to statuses or errors: a malformed batch
 * (RL_E_INVALID_ARG, naming the argument or request index as
 * rl_limiter_acquire_batch does), a closed store (RL_E_SHUTDOWN), or
 * RL_E_UNSUPPORTED from inside a completion callback of a store that waits
 * for I/O. */
RL_API rl_status rl_limiter_acquire_batch_each(rl_limiter* limiter, const rl_request* requests,
                                               size_t count, rl_decision* decisions,
                                               rl_status* statuses, rl_error** errors,
                                               rl_error** err);

/* ------------------------------------------------------------------ */
/* 1.6. HTTP header fields (docs/http-headers.md): the IETF draft
 * "RateLimit header fields for HTTP" and Retry-After, written here once
 * for every binding's middleware:
 *   RateLimit-Policy: "api";q=100;w=60      one item per limit
 *   RateLimit: "api";r=42;t=18              the limit that decided
 *   Retry-After: 18                         a denial that can be retried
 * An item is named after the limiter ("name-0", "name-1", ... when it has
 * several limits), as an RFC 9651 string: in double quotes, with a
 * backslash before " and before a backslash; a name with a byte outside
 * printable ASCII is refused. Seconds are rounded up (a client that waits
 * as told is never early); w is at least 1 for any window, t is 0 only
 * when the key is at full capacity, and Retry-After is at least 1 (a
 * denial never says "retry now"). */

/* The fields, in the order a response carries them. */
typedef enum rl_header {
  RL_HEADER_RATELIMIT_POLICY = 0,
  RL_HEADER_RATELIMIT = 1,
  RL_HEADER_RETRY_AFTER = 2
} rl_header;

/* Number of header values; valid headers are 0 .. RL_HEADER_COUNT - 1. */
#define RL_HEADER_COUNT 3

/* 1.6. The field name of a header ("RateLimit-Policy", "RateLimit",
 * "Retry-After"), or NULL for a value that is not a header. Static
 * storage; thread-safe. */
RL_API const char* rl_header_name(int header);

/* 1.6. Renders the header field values of decision (its version set; a
 * version 1 decision is of limit 0) for a limiter named name (NUL-
 * terminated) with limits[0 .. limit_count - 1] (as rl_limiter_name and
 * rl_limiter_limits give them; burst is not shown). values has count
 * elements, indexed by rl_header: on RL_OK values[i] is a new NUL-terminated
 * string, freed with rl_string_free, or NULL where the field is not sent
 * (Retry-After of an admission or of a request that can never be admitted;
 * every field of an RL_SOURCE_FAIL_OPEN decision, which counted nothing);
 * elements from RL_HEADER_COUNT on are NULL. On failure every element is
 * NULL: RL_E_INVALID_ARG names what was wrong (no limits, a limit_index
 * beyond them, a negative count, a name that cannot be quoted). values may
 * be NULL when count is 0. Thread-safe. */
RL_API rl_status rl_headers_render(const char* name, const rl_limit_info* limits,
                                   size_t limit_count, const rl_decision* decision, char** values,
                                   size_t count, rl_error** err);

/* ------------------------------------------------------------------ */
/* Asynchronous calls */

/* The operation of an asynchronous call. */
typedef enum rl_op {
  RL_OP_ACQUIRE = 0,
  RL_OP_PEEK = 1,
  RL_OP_REFUND = 2,
  RL_OP_RESET = 3 /* request->cost is ignored */
} rl_op;

/* Completion of an asynchronous call. Runs exactly once, on a thread owned
 * by rl (the store's I/O thread, or its timer thread for a wait), never
 * inside the call that started it.
 * decision is set when status is RL_OK (for RL_OP_RESET it is a full-capacity
 * decision), err when it is not. Both are valid only during the callback;
 * the callback must not free them. It must not block for long: it delays the
 * store's other completions. */
typedef void (*rl_callback)(void* user_data, rl_status status, const rl_decision* decision,
                            const rl_error* err);

/* Starts op on request and returns at once. On RL_OK the callback runs
 * exactly once later; on any other status it never runs. The request and
 * its key are copied. */
RL_API rl_status rl_limiter_call_async(rl_limiter* limiter, rl_op op, const rl_request* request,
                                       rl_callback callback, void* user_data, rl_error** err);
/* rl_limiter_call_async with RL_OP_ACQUIRE. */
RL_API rl_status rl_limiter_acquire_async(rl_limiter* limiter, const rl_request* request,
                                          rl_callback callback, void* user_data, rl_error** err);

/* rl_limiter_acquire_wait without blocking anyone: each wait is a timer on
 * a thread of the store (10,000 waiting calls are 10,000 timer entries, not
 * threads). On RL_OK the callback runs exactly once later, on a thread
 * owned by rl, never inside this call: with the admitting decision, the
 * last denial (as rl_limiter_acquire_wait returns it), a failure, or
 * RL_E_SHUTDOWN when the store is closed first. On any other status it
 * never runs. The request and its key are copied. */
RL_API rl_status rl_limiter_acquire_wait_async(rl_limiter* limiter, const rl_request* request,
                                               int64_t timeout_us, rl_callback callback,
                                               void* user_data, rl_error** err);

/* 1.7. A wait started by rl_limiter_acquire_wait_start, for its caller to
 * give up on. */
typedef struct rl_wait rl_wait;

/* 1.7. rl_limiter_acquire_wait_async whose caller can give up on it
 * (rl_wait_cancel): on RL_OK *out receives the wait's handle, and the
 * callback runs exactly once, as for rl_limiter_acquire_wait_async. On any
 * other status *out is NULL and the callback never runs. Free the handle
 * with rl_wait_free, before or after the callback ran. */
RL_API rl_status rl_limiter_acquire_wait_start(rl_limiter* limiter, const rl_request* request,
                                               int64_t timeout_us, rl_callback callback,
                                               void* user_data, rl_wait** out, rl_error** err);
/* 1.7. The caller gave up on wait (an aborted signal, a cancelled context,
 * task or future) and takes none of its units: no store call starts after
 * this, a wait sleeping before its next attempt ends now, and the units the
 * wait was admitted for, whether that admission already reached the
 * callback or arrives after this call, are refunded by rl exactly once (an
 * on_failure=open admission counted nothing and is not). The callback still
 * runs exactly once, never inside this call, with what the wait ended on:
 * the last denial, a failure, or an admission already given back. Cancel
 * only a wait whose admission nobody took. Idempotent; thread-safe, also
 * from a callback; NULL is a no-op. */
RL_API void rl_wait_cancel(rl_wait* wait);
/* 1.7. Frees the handle. The wait goes on unless it was cancelled; its
 * callback runs as before. NULL is a no-op. */
RL_API void rl_wait_free(rl_wait* wait);

/* Completion of an asynchronous batch: count decisions in order, valid
 * only during the callback. Same threading rules as rl_callback. The
 * elements are of version 2 (48 bytes each) for
 * rl_limiter_acquire_batch_async, of the version asked for with
 * rl_limiter_acquire_batch_async_versioned. */
typedef void (*rl_batch_callback)(void* user_data, rl_status status, const rl_decision* decisions,
                                  size_t count, const rl_error* err);
/* Starts rl_limiter_acquire_batch and returns at once; the callback runs
 * exactly once on RL_OK, never otherwise. Requests and keys are copied. */
RL_API rl_status rl_limiter_acquire_batch_async(rl_limiter* limiter, const rl_request* requests,
                                                size_t count, rl_batch_callback callback,
                                                void* user_data, rl_error** err);
/* rl_limiter_acquire_batch_async whose callback receives decisions of
 * decision_version (1 to RL_DECISION_VERSION; pass RL_DECISION_VERSION):
 * the array steps by that version's size. Since 1.2. */
RL_API rl_status rl_limiter_acquire_batch_async_versioned(rl_limiter* limiter,
                                                          const rl_request* requests, size_t count,
                                                          uint32_t decision_version,
                                                          rl_batch_callback callback,
                                                          void* user_data, rl_error** err);

/* 1.3. Completion of rl_limiter_acquire_batch_each_async: count results in
 * request order. statuses[i] is RL_OK when decisions[i] holds the i-th
 * decision; otherwise it is that request's failure, errors[i] its error
 * and decisions[i] all zero but its version. errors[i] is NULL for every
 * request that did not fail. decisions are of the version asked for (the
 * array steps by its size). Everything is valid only during the callback,
 * which must not free it. Same threading rules as rl_callback. */
typedef void (*rl_batch_each_callback)(void* user_data, const rl_decision* decisions,
                                       const rl_status* statuses, const rl_error* const* errors,
                                       size_t count);
/* 1.3. rl_limiter_acquire_batch_each without blocking: returns at once. On
 * RL_OK the callback runs exactly once later, on a thread owned by rl,
 * never inside this call; a failure of the whole batch (an outage, or
 * RL_E_SHUTDOWN when the store closes first) reaches it as every request's
 * status (a batch is never split by a close: memory:// decides all of it,
 * or none).
 * On any other status (a malformed batch, decision_version not 1 to
 * RL_DECISION_VERSION, a NULL callback, a closed store) it never runs.
 * Requests and keys are copied. */
RL_API rl_status rl_limiter_acquire_batch_each_async(rl_limiter* limiter,
                                                     const rl_request* requests, size_t count,
                                                     uint32_t decision_version,
                                                     rl_batch_each_callback callback,
                                                     void* user_data, rl_error** err);

#ifdef __cplusplus
}
#endif

#endif /* RL_RL_H */
