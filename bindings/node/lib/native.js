'use strict';
// The native addon (build/Release/rl_native.node), initialised for this
// environment: each worker_thread that loads it gets its own addon data.
const { RlError } = require('./errors');
const { decisionOf, lastDecision } = require('./decision');

const native = require('../build/Release/rl_native.node');
native.init(RlError, decisionOf, lastDecision);

module.exports = native;
