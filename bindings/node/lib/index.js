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
const settings = Object.freeze(native.settings().map(([name, description]) => Object.freeze({ name, description })));

module.exports = {
  open,
  middleware,
  RlError,
  status,
  settings,
  version: native.version,
  maxKeyLength: native.maxKeyLength,
  Store,
  Limiter,
  RedisTokenBucket,
};
