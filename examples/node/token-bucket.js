#!/usr/bin/env node
'use strict';
// The ioredis token bucket, moved to rl by changing one line:
//   - const RedisTokenBucket = require('./src/algorithms/javascript/redis-token-bucket');
//   + const { RedisTokenBucket } = require('@rl/node');   // here: the repo's copy
// The constructor takes ioredis options ({ host, port, password, db }), an
// ioredis client, or a URL, instead of a client.
//   node examples/node/token-bucket.js [redis://127.0.0.1:6379]
const { RedisTokenBucket } = require('../../bindings/node');

const costs = { read: 1, write: 5, bulk: 50 };

async function main(url = 'redis://127.0.0.1:6379') {
  // 10 tokens, refilled at 2 per second; fails open if Redis is down
  // (rl's onFailure 'open': stats() counts those decisions).
  const limiter = new RedisTokenBucket(url, 'rate_limit:user:123', 10, 2);
  console.log('healthy:', await limiter.isHealthy());
  for (const operation of ['read', 'write', 'read', 'write', 'bulk', 'read']) {
    const cost = costs[operation];
    if (await limiter.allowRequest(cost)) {
      console.log(`${operation} (cost ${cost}): allowed`);
    } else {
      const wait = await limiter.getTimeUntilNextToken(cost);
      console.log(`${operation} (cost ${cost}): rate limited, retry in ${wait === Infinity ? 'never' : `${wait} ms`}`);
    }
  }
  const { decisions, breaker } = await limiter.stats();
  console.log(`breaker ${breaker}; failed open: ${decisions.fail_open.allowed}`);
  RedisTokenBucket.closeAll();
}

main(process.argv[2]).catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
