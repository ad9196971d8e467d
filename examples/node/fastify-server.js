#!/usr/bin/env node
'use strict';
// A Fastify server rate limited by rl's plugin (npm install fastify beside rl):
//   node examples/node/fastify-server.js [URL]    (URL default memory://; PORT default 3000)
//   curl -i -H 'x-api-key: alice' http://127.0.0.1:3000/hello
// Every route: 5 requests a minute per API key (or client address), the
// RateLimit fields on each answer, 429 with Retry-After when over. /bulk
// costs 5 of a limit of its own, /health is not limited, and /metrics
// serves the store's metrics through prom-client.
const path = require('node:path');
const rl = require('../../bindings/node');
// fastify and prom-client: this project's, else those installed beside
// the binding (its dev dependencies, which its tests use).
const nearby = (name) => require(require.resolve(name, { paths: [process.cwd(), path.join(__dirname, '../../bindings/node')] }));
const Fastify = nearby('fastify');
const promClient = nearby('prom-client');
const rlFastify = require('../../bindings/node/lib/fastify');
const { registerStoreMetrics } = require('../../bindings/node/lib/prom-client');

// Starts the server; resolves to { app, store, port, close() }.
async function startServer({ url = 'memory://', port = 3000 } = {}) {
  const store = await rl.open(url);
  const registry = new promClient.Registry();
  registerStoreMetrics(store, { registry });
  const app = Fastify();
  await app.register(rlFastify, {
    limiter: store.limiter({ limit: '5/1m', name: 'api' }),
    key: (req) => req.headers['x-api-key'] ?? req.ip,
  });
  const bulk = store.limiter({ limit: '10/1m', name: 'bulk' });
  app.get('/hello', async (req) => ({ remaining: req.rateLimit.remaining }));
  app.post('/bulk', { config: { rateLimit: { limiter: bulk, cost: () => 5 } } }, async () => ({ imported: true }));
  app.get('/health', { config: { rateLimit: false } }, async () => 'ok');
  app.get('/metrics', { config: { rateLimit: false } }, async (req, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
  await app.listen({ port, host: '127.0.0.1' });
  return {
    app,
    store,
    port: app.server.address().port,
    close: async () => {
      await app.close();
      await store.close();
    },
  };
}

module.exports = { startServer };

if (require.main === module) {
  startServer({ url: process.argv[2], port: Number(process.env.PORT ?? 3000) }).then(
    ({ port }) => console.log(`listening on http://127.0.0.1:${port}`),
    (err) => {
      console.error(err.message);
      process.exit(1);
    },
  );
}
