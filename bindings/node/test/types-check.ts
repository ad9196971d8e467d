// Compiled by `tsc --noEmit` (npm test), never run: the declarations in
// lib/*.d.ts must accept the documented usage and reject misuse.
import * as rl from '../lib/index';
import RedisTokenBucket from '../lib/redis-token-bucket';

async function documentedUsage(): Promise<void> {
  const store: rl.Store = await rl.open('memory://?clock=manual', { timeoutMs: 50 });
  const limiter = store.limiter({ algorithm: 'gcra', limit: '100/1m', burst: 20, name: 'api' });
  const d: rl.Decision = await limiter.acquire('user:1', 1);
  const allowed: boolean = d.allowed;
  const source: rl.DecisionSource = d.source;
  const now: rl.Decision = limiter.tryAcquire('user:1');
  const outageTolerant = store.limiter({ limit: '10/s', onFailure: 'local', localShare: '1/4' });
  const stats: rl.StoreStats = store.stats();
  const p99: number = stats.roundTrip.p99Ms + stats.decisions.fail_open.allowed + (stats.failures.RL_E_TIMEOUT ?? 0);
  const text: string = store.metrics();
  const up: boolean = store.isHealthy();
  const waited = await limiter.acquireWait(new Uint8Array([1, 2]), 2n, {
    timeoutMs: 100,
    signal: AbortSignal.timeout(10),
  });
  const batch: rl.Decision[] = await limiter.acquireBatch([{ key: 'a' }, { key: 'b', cost: 3 }]);
  const settled: rl.BatchSettledResult[] = await limiter.acquireBatchSettled([{ key: 'a' }]);
  const first = settled[0];
  const settledCode: string | boolean = first.status === 'fulfilled' ? first.value.allowed : first.reason.code;
  await limiter.peek('k');
  await limiter.refund('k', 1);
  await limiter.reset('k');
  store.clock.advance(1000);
  const code: string | undefined = (new rl.RlError('RL_E_INVALID_ARG', 'x') as rl.RlError).code;
  const shutdown: number | undefined = rl.status.RL_E_SHUTDOWN;
  rl.middleware({ limiter, key: (req) => req.ip ?? 'anon', cost: () => 1 });
  const bucket = new RedisTokenBucket({ host: '127.0.0.1', port: 6379 }, 'k', 100, 10, { failOpen: true });
  const ok: boolean = await bucket.allowRequest(2);
  const ms: number = await bucket.getTimeUntilNextToken();
  const healthy: boolean = await bucket.isHealthy();
  const viaIndex = new rl.RedisTokenBucket('redis://127.0.0.1:6379', 'k', 1, 0.5);
  await store[Symbol.asyncDispose]();
  void [source, now, outageTolerant, p99, text, up, allowed, waited, batch, settledCode, code, shutdown, ok, ms, healthy, viaIndex];
}

async function misuse(store: rl.Store): Promise<void> {
  // @ts-expect-error a limit is required
  store.limiter({ algorithm: 'gcra' });
  const limiter = store.limiter({ limit: '1/s' });
  // @ts-expect-error keys are strings or bytes
  await limiter.acquire(42);
  // @ts-expect-error costs are numbers or bigints
  await limiter.acquire('k', '1');
  // @ts-expect-error a decision has no such field
  (await limiter.acquire('k')).retryAfter;
  // @ts-expect-error tryAcquire answers at once, not with a promise
  await limiter.tryAcquire('k').then;
  // @ts-expect-error onFailure is closed, open or local
  store.limiter({ limit: '1/s', onFailure: 'maybe' });
}

void documentedUsage;
void misuse;
