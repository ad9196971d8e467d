'use strict';
// Turns an options object into librl settings: [key, value, key, value, ...]
// strings in the object's order. camelCase keys become librl's snake_case
// (timeoutMs -> timeout_ms); arrays become comma-separated lists
// (limit: ['10/s', '1000/h']). librl validates keys and values and names
// the bad one; only values of the wrong JS type are caught here.

function settingName(key) {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function settingValue(name, value) {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'bigint' || (typeof value === 'number' && Number.isFinite(value))) return String(value);
  if (Array.isArray(value)) return value.map((item) => settingValue(name, item)).join(', ');
  throw new TypeError(`${name}: must be a string, a number or a boolean, not ${value === null ? 'null' : typeof value}`);
}

function toSettings(options, what) {
  if (options === undefined) return [];
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${what}: must be an object of settings`);
  }
  const entries = [];
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    const name = settingName(key);
    entries.push(name, settingValue(name, value));
  }
  return entries;
}

module.exports = { toSettings };
