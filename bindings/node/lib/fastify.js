'use strict';
// Fastify plugin: the Express middleware's behaviour as an onRequest hook.
//   fastify.register(require('@rl/node/fastify'), { limiter, key, cost })
// limits every route (global: false limits only routes that ask); a route
// overrides it with its own options or opts out:
//   fastify.get('/bulk', { config: { rateLimit: { limiter: bulk, cost: () => 5 } } }, handler)
//   fastify.get('/health', { config: { rateLimit: false } }, handler)
// Options as the middleware's: limiter (required where a route is limited),
// key(request) (default: request.ip), cost(request) (default 1). The
// decision is on request.rateLimit; RateLimit-Policy and RateLimit are
// set, a denial is 429 with Retry-After, a store outage under
// on_failure=closed is 503, and every other failure goes to Fastify's error
// handler. The fields are librl's (docs/http-headers.md). Options are
// checked when the plugin and each route register: a bad one fails
// startup, naming it.
const { requestLimiter, setFields, tooManyRequests, storeUnreachable } = require('./http-decision');
const { lowerCaseHeaderNames } = require('./rate-limit-headers');

const clientAddress = (request) => request.ip ?? 'unknown';
const setHeader = (reply, name, value) => reply.header(name, value);

function rlFastify(fastify, { global = true, ...defaults } = {}, done) {
  if (typeof global !== 'boolean') return done(new TypeError('@rl/node/fastify: global: must be true or false'));
  const hasDefault = defaults.limiter !== undefined;
  const base = { key: clientAddress, ...defaults };
  let decideByDefault;
  try {
    if (hasDefault) decideByDefault = requestLimiter(base, '@rl/node/fastify');
  } catch (err) {
    return done(err);
  }
  if (global && !hasDefault) return done(new TypeError('@rl/node/fastify: limiter: is required with global: true'));

  fastify.decorateRequest('rateLimit', null);
  fastify.addHook('onRoute', (route) => {
    const own = route.config?.rateLimit;
    if (own === false || (own === undefined && !global)) return;
    const where = `@rl/node/fastify: route ${route.method} ${route.url}`;
    const decide = own === undefined || own === true ? decideByDefault : requestLimiter({ ...base, ...own }, where);
    if (!decide) throw new TypeError(`${where}: limiter: is required (the plugin has none)`);
    // A callback hook, not an async one: Fastify waits for done without a
    // promise of the hook's own.
    const hook = (request, reply, done) => {
      decide(request, (outcome, decision, fields, err) => {
        if (outcome === 'error') return done(err);
        if (outcome === 'outage') {
          reply.code(503).type('text/plain; charset=utf-8');
          return reply.send(storeUnreachable);
        }
        request.rateLimit = decision;
        setFields(fields, reply, setHeader, lowerCaseHeaderNames());
        if (outcome === 'allowed') return done();
        reply.code(429).type('text/plain; charset=utf-8');
        reply.send(tooManyRequests);
      });
    };
    route.onRequest = [...(route.onRequest ? [].concat(route.onRequest) : []), hook];
  });
  done();
}

// Hooks reach the routes of the scope that registers the plugin (what
// fastify-plugin does), under a name Fastify shows.
rlFastify[Symbol.for('skip-override')] = true;
rlFastify[Symbol.for('fastify.display-name')] = '@rl/node/fastify';
rlFastify[Symbol.for('plugin-meta')] = { name: '@rl/node/fastify', fastify: '>=4' };

module.exports = rlFastify;
module.exports.default = rlFastify;
module.exports.rlFastify = rlFastify;
