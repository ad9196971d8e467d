'use strict';
// rl for Node: const rl = require('@rl/node').
const native = require('./native');
const { RlError } = require('./errors');
const { status } = require('./status');
const { open, Store } = require('./store');
const { Limiter } = require('./limiter');
const { middleware } = require('./middleware');
const RedisTokenBucket = require('./redis-token-bucket');

/** Every setting librl knows: [{ name, description }]. */
const settings = [];
for (let i = 0, pair; (pair = native.configDescribe(i)) !== null; i++) {
  settings.push(Object.freeze({ name: pair[0], description: pair[1] }));
}
Object.freeze(settings);

module.exports = {
  open,
  middleware,
  RlError,
  status,
  settings,
  version: native.version(),
  maxKeyLength: native.maxKeyLength,
  Store,
  Limiter,
  RedisTokenBucket,
};
