'use strict';
// RlError: a failure librl reported. `code` is the C status name
// ('RL_E_INVALID_ARG', 'RL_E_SHUTDOWN', ...), `message` librl's message,
// which names the bad argument or setting. Being denied is not an error.

class RlError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'RlError';
    this.code = code;
  }
}

module.exports = { RlError };
