#!/usr/bin/env node
'use strict';
// An HTTP server rate limited by rl's middleware:
//   node examples/node/http-server.js [URL]      (URL default memory://; PORT default 3000)
//   curl -i -H 'x-api-key: alice' http://127.0.0.1:3000/hello
// Each API key (or client address) may make 5 requests a minute; /bulk
// costs 5. Answers carry RateLimit-Policy and RateLimit; a denied request
// gets 429 with Retry-After. ON_FAILURE=open|local|closed (default closed)
// chooses what a store outage gives (docs/failure.md); GET /metrics serves
// the store's Prometheus metrics. The middleware is Express/Connect-compatible:
// with Express it is just app.use(rl.middleware({ ... })).
const http = require('node:http');
const rl = require('../../bindings/node');

const keyOf = (req) => req.headers['x-api-key'] ?? req.socket.remoteAddress;
const costOf = (req) => (req.url.startsWith('/bulk') ? 5 : 1);

// Starts the server; resolves to { server, store, port, close() }.
async function startServer({ url = 'memory://', port = 3000, limit = '5/1m', onFailure = 'closed' } = {}) {
  const store = await rl.open(url);
  const limiter = store.limiter({ algorithm: 'gcra', limit, name: 'api', onFailure });
  const rateLimit = rl.middleware({ limiter, key: keyOf, cost: costOf });

  const server = http.createServer((req, res) => {
    if (req.url === '/metrics') {
      res.setHeader('Content-Type', 'text/plain; version=0.0.4; charset=utf-8');
      res.end(store.metrics());
      return;
    }
    rateLimit(req, res, (err) => {
      if (err) {
        // The limiter failed other than by an outage (the middleware
        // answers those with 503 itself): here, a closed store. 500, as
        // Go's rlhttp answers them by default.
        res.statusCode = 500;
        res.end(`rate limiter failed: ${err.code}\n`);
        return;
      }
      res.setHeader('Content-Type', 'application/json');
      res.end(`${JSON.stringify({ hello: keyOf(req), path: req.url })}\n`);
    });
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  const close = () => {
    server.close();
    store.close();
  };
  return { server, store, port: server.address().port, close };
}

if (require.main === module) {
  const url = process.argv[2] ?? 'memory://';
  startServer({ url, port: Number(process.env.PORT ?? 3000), onFailure: process.env.ON_FAILURE }).then(
    ({ port }) => console.log(`listening on http://127.0.0.1:${port} (store ${url})`),
    (err) => {
      console.error(`http-server: ${err.code ?? ''} ${err.message}`);
      process.exitCode = 1;
    },
  );
}

module.exports = { startServer };
