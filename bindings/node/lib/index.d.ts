// Types of @rl/node (hand-written; checked by `tsc --noEmit` in npm test).

/** A decision. Being denied is a decision (allowed: false), not an error. */
export interface Decision {
  /** The request was admitted and its cost recorded. */
  allowed: boolean;
  /** The limit (units per window) that decided. */
  limit: number;
  /** Units one more request could take right now (never negative). */
  remaining: number;
  /**
   * 0 when allowed; else milliseconds until the same request would be
   * admitted (fractional: librl counts microseconds). -1 means never: the
   * cost is above the burst.
   */
  retryAfterMs: number;
  /** Milliseconds until the key is back to full capacity (fractional). */
  resetAfterMs: number;
  /** Which limit decided: its index in `limiter.limits` (exact even when limits share a value). */
  limitIndex: number;
  /**
   * Who decided: 'store' (the store itself), 'fail_open' (the store had an
   * outage and the limiter's onFailure is 'open'), 'local' (an outage,
   * decided by the in-process fallback of onFailure 'local') or
   * 'deny_cache' (a denial the limiter remembered, setting deny_cache_keys).
   */
  source: DecisionSource;
  /**
   * algorithm 'suppressed': the share of calls suppressed when this one was
   * decided, 0 (admitted outright) to 1 (denied outright, above the hard
   * limit); in between the call was admitted with probability 1 - factor.
   * 0 for every other algorithm.
   */
  suppressionFactor: number;
}

/** rl_source: which path produced a decision (docs/failure.md). */
export type DecisionSource = 'store' | 'fail_open' | 'local' | 'deny_cache';

/** What a store has done since it opened (rl_store_get_stats). Counters never go down. */
export interface StoreStats {
  /** The breaker is closed: calls go to the store. */
  healthy: boolean;
  breaker: 'closed' | 'open' | 'half_open';
  /** Times the breaker opened. */
  breakerOpened: number;
  /** Decisions by source and verdict. */
  decisions: Record<DecisionSource, { allowed: number; denied: number }>;
  /** Calls that ended in an error, by status name ('RL_E_TIMEOUT', ...; every status but RL_OK). */
  failures: Record<string, number>;
  /** Store round trips (none for memory://); quantiles are the upper bound of a bucket, within 12.5%. */
  roundTrip: { count: number; p50Ms: number; p95Ms: number; p99Ms: number; maxMs: number };
  /**
   * Leases of every limiter of the store (lease=auto): slices taken, the units in them, the units
   * left unused when a lease ended, of those the units handed back, and calls decided from a slice.
   */
  leases: { taken: number; unitsLeased: number; unitsUnused: number; unitsReturned: number; decisions: number };
}

/** A key: a string (its UTF-8 bytes) or raw bytes; 1 to maxKeyLength bytes. */
export type Key = string | Uint8Array;
/** Units of a request: a safe integer, or a BigInt within int64. */
export type Cost = number | bigint;
/** A setting value: strings are passed as they are, numbers as their text, arrays joined with ', '. */
export type SettingValue = string | number | bigint | ReadonlyArray<string | number | bigint>;

export type { LimiterSettings, StoreSettingsOfLibrl } from './settings';
import type { LimiterSettings, StoreSettingsOfLibrl } from './settings';

/**
 * A limiter's settings: every limiter setting of librl, typed from its
 * settings table (lib/settings.d.ts, generated), camelCase or snake_case.
 */
export interface LimiterOptions extends LimiterSettings {
  /** One or more limits: '100/1m', '10/s, 1000/h' or ['10/s', '1000/h']. */
  limit: SettingValue;
  [setting: string]: SettingValue | boolean | undefined;
}

/** A store's settings (beside its URL's query): every store setting of librl, typed likewise. */
export interface StoreSettings extends StoreSettingsOfLibrl {
  [setting: string]: SettingValue | boolean | undefined;
}

export interface OpenOptions {
  /** memory:// answers on the JS thread (default true); false routes its calls through rl's I/O thread. */
  inline?: boolean;
}

export interface CallOptions {
  /** This call's deadline at the store, when shorter than the store's timeoutMs (RlError RL_E_TIMEOUT). */
  timeoutMs?: number;
}

export interface AcquireWaitOptions {
  /** Give up (returning the denial) when waiting would pass this many ms. Default: Infinity. */
  timeoutMs?: number;
  /** Aborting rejects the wait with the signal's reason. */
  signal?: AbortSignal;
}

export interface BatchRequest {
  key: Key;
  /** Default 1. */
  cost?: Cost;
}

/** One request's result in acquireBatchSettled: Promise.allSettled's shape. */
export type BatchSettledResult =
  | { status: 'fulfilled'; value: Decision }
  | { status: 'rejected'; reason: RlError };

export declare class Limiter {
  private constructor();
  /** The settings it was made with, as librl strings. */
  readonly settings: Readonly<Record<string, string>>;
  /** Its limits as librl parsed them, in the order of the `limit` setting. */
  readonly limits: ReadonlyArray<Readonly<{ limit: number; windowUs: number; burst: number }>>;
  /** Its name as librl holds it ('default' when not set). */
  readonly name: string;
  readonly store: Store;
  acquire(key: Key, cost?: Cost, options?: CallOptions): Promise<Decision>;
  /**
   * acquire without a promise, for memory:// opened inline (the default):
   * the decision at the cost of a function call. On any other store it
   * throws RlError RL_E_UNSUPPORTED (it would block the event loop).
   */
  tryAcquire(key: Key, cost?: Cost): Decision;
  peek(key: Key, cost?: Cost, options?: CallOptions): Promise<Decision>;
  refund(key: Key, cost?: Cost, options?: CallOptions): Promise<Decision>;
  reset(key: Key, options?: CallOptions): Promise<void>;
  /** Many keys in one round trip, decided in order; any request's failure rejects the call. */
  acquireBatch(requests: ReadonlyArray<BatchRequest>): Promise<Decision[]>;
  /**
   * acquireBatch with a result per request, as Promise.allSettled shapes
   * them; rejects only for a malformed batch or a closed store.
   */
  acquireBatchSettled(requests: ReadonlyArray<BatchRequest>): Promise<BatchSettledResult[]>;
  acquireWait(key: Key, cost?: Cost, options?: AcquireWaitOptions): Promise<Decision>;
}

export interface ManualClock {
  /** Sets the store's time to `us` microseconds. */
  set(us: number | bigint): void;
  /** Moves the store's time forward by `us` microseconds. */
  advance(us: number | bigint): void;
}

/** What decides in Redis (script_mode; docs/redis-module.md). */
export interface DecidesWith {
  /** The script_mode setting. */
  readonly scriptMode: 'auto' | 'module' | 'functions' | 'scripts';
  /** What rl's Lua code goes as: 'functions' (FCALL), or 'scripts' once a server or user without Functions was met. */
  readonly luaMode: 'functions' | 'scripts';
  /** scriptMode 'auto' only (0 otherwise): nodes seen deciding with rl's Redis module. */
  readonly moduleNodes: number;
  /** scriptMode 'auto' only (0 otherwise): nodes seen deciding with the Lua code. */
  readonly luaNodes: number;
}

export declare class Store {
  private constructor();
  /**
   * The URL it was opened with in librl's display form (rl_store_display_url): the password and
   * every secret setting replaced by '***' ('redis://user:***@host:6379?sentinel_password=***').
   */
  readonly url: string;
  readonly closed: boolean;
  /** True when opened with clock=manual. */
  readonly manualClock: boolean;
  /** The URL scheme: 'memory' or 'redis'. */
  readonly scheme: string;
  /** The manual clock, for tests: stores opened with clock=manual only (else RlError RL_E_INVALID_ARG). */
  readonly clock: ManualClock;
  limiter(options: LimiterOptions): Limiter;
  /** What decides in Redis now (rl_store_describe); null for memory://. Works after close. */
  decidesWith(): DecidesWith | null;
  /** What the store has done since it opened; works after close. */
  stats(): StoreStats;
  /** The same statistics in the Prometheus text exposition format (version 0.0.4), as librl renders them. */
  metrics(): string;
  /** True while the store's circuit breaker is closed (always for memory://). */
  isHealthy(): boolean;
  /** Calls in flight and later calls reject with RlError RL_E_SHUTDOWN. Idempotent. */
  close(): void;
  [Symbol.asyncDispose](): Promise<void>;
}

export declare function open(url: string, settings?: StoreSettings, options?: OpenOptions): Promise<Store>;

/** A failure reported by librl. */
export declare class RlError extends Error {
  constructor(code: string, message: string);
  /** The C status name: 'RL_E_INVALID_ARG', 'RL_E_SHUTDOWN', ... (see `status`). */
  readonly code: string;
}

/** Every rl_status by name, read from the loaded librl: { RL_OK: 0, RL_E_INVALID_ARG: 1, ... }. */
export declare const status: Readonly<Record<string, number>>;
export declare const settings: ReadonlyArray<Readonly<{ name: string; description: string }>>;
export declare const version: string;
export declare const maxKeyLength: number;

export interface IncomingRequest {
  ip?: string;
  /** Set by the middleware: the request's decision. */
  rateLimit?: Decision;
  socket?: { remoteAddress?: string };
}
export interface OutgoingResponse {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body?: string): unknown;
}
export interface MiddlewareOptions<Req extends IncomingRequest> {
  limiter: Limiter;
  /** The key of a request (default: its client address). */
  key?: (req: Req) => Key | Promise<Key>;
  /** The cost of a request (default: 1). */
  cost?: (req: Req) => Cost | Promise<Cost>;
}
/**
 * Express/Connect middleware: the decision on req.rateLimit, RateLimit-Policy and RateLimit
 * headers (not on fail_open decisions); 429 with Retry-After when denied; 503 on a store outage
 * under onFailure 'closed'; other failures go to next(err).
 */
export declare function middleware<Req extends IncomingRequest = IncomingRequest>(
  options: MiddlewareOptions<Req>,
): (req: Req, res: OutgoingResponse, next: (err?: unknown) => void) => Promise<void>;

export { default as RedisTokenBucket } from './redis-token-bucket';
