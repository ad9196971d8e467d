'use strict';
// bench/frameworks' Fastify server: /bare, /limited behind rl's Fastify
// plugin (its route config), /store: the microseconds one acquire of the same
// limiter takes, timed in the app.
//   RL_URL=redis://... node fastify-server.js   # prints "listening on http://127.0.0.1:PORT"
const path = require('node:path');
const rl = require('../../bindings/node');
const rlFastify = require('../../bindings/node/lib/fastify');
const fastify = require(require.resolve('fastify', { paths: [path.join(__dirname, '../../bindings/node')] }));

async function main() {
  const store = await rl.open(process.env.RL_URL || 'memory://');
  const limiter = store.limiter({ name: 'bench-fw', limit: '1000000000/1s' });
  const app = fastify();
  await app.register(rlFastify, { limiter, global: false, key: (req) => req.headers['x-api-key'] ?? req.ip });
  app.get('/bare', async () => 'ok');
  app.get('/limited', { config: { rateLimit: true } }, async () => 'ok');
  app.get('/store', async (req) => {
    const began = process.hrtime.bigint();
    await limiter.acquire(req.headers['x-api-key'] ?? 'anon');
    return String(Number(process.hrtime.bigint() - began) / 1000);
  });
  const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT || 0) });
  console.log(`listening on ${address}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
