'use strict';
// Every rl_status, name -> value, read from librl's rl_status_name so that
// it always matches the library that is loaded: { RL_OK: 0, RL_E_INVALID_ARG: 1, ... }.
const native = require('./native');
const { namesOf } = require('./names');

const status = Object.freeze(Object.fromEntries(namesOf(native.statusName).map((name, value) => [name, value])));

module.exports = { status };
