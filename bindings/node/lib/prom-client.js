'use strict';
// A store's statistics in a prom-client registry:
//   const { registerStoreMetrics } = require('@rl/node/prom-client');
//   registerStoreMetrics(store);                                 // prom-client's default registry
//   registerStoreMetrics({ main, edge }, { registry, label: 'store' });  // several stores
// The metrics are librl's own exposition (store.metrics()), parsed here and
// handed to prom-client family by family, so they carry the same names, help
// and labels in every binding. prom-client is not a dependency of rl.
const { Store } = require('./store');

// `{a="x",b="y"}` -> { a: 'x', b: 'y' } (the exposition's escapes: \\ \" \n).
function parseLabels(text) {
  const labels = {};
  const pattern = /([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  for (const [, name, raw] of text.matchAll(pattern)) {
    labels[name] = raw.replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

// Prometheus text format 0.0.4 -> Map(name -> { help, type, samples: [{ name, labels, value }] }).
function parseExposition(text) {
  const families = new Map();
  const family = (name) => {
    if (!families.has(name)) families.set(name, { help: '', type: 'untyped', samples: [] });
    return families.get(name);
  };
  let current = null;
  for (const line of text.split('\n')) {
    let m;
    if ((m = /^# HELP (\S+) (.*)$/.exec(line))) {
      family(m[1]).help = m[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    } else if ((m = /^# TYPE (\S+) (\S+)$/.exec(line))) {
      current = m[1];
      family(current).type = m[2];
    } else if ((m = /^([A-Za-z_:][A-Za-z0-9_:]*)(\{.*\})? (\S+)$/.exec(line))) {
      // A sample belongs to the family last typed (a summary's _sum, _count).
      const owner = current && m[1].startsWith(current) ? current : m[1];
      family(owner).samples.push({ name: m[1], labels: parseLabels(m[2] || ''), value: Number(m[3]) });
    }
  }
  return families;
}

function storesOf(stores) {
  if (stores instanceof Store) return [[null, stores]];
  const entries = stores && typeof stores === 'object' ? Object.entries(stores) : [];
  if (entries.length === 0 || !entries.every(([, s]) => s instanceof Store)) {
    throw new TypeError('registerStoreMetrics: stores must be a Store or an object of named Stores');
  }
  return entries;
}

/**
 * Registers the store's (or stores') metric families in a prom-client
 * registry (default: prom-client's global one) and returns their names.
 * Each scrape reads the stores' statistics afresh. With several stores,
 * each sample carries `label` (default 'store') naming its store.
 */
function registerStoreMetrics(stores, { registry, label = 'store' } = {}) {
  const named = storesOf(stores);
  const target = registry || require('prom-client').register;
  const names = [];
  for (const [name, { help, type }] of parseExposition(named[0][1].metrics())) {
    target.registerMetric({
      name,
      help,
      type,
      aggregator: 'sum',
      get() {
        const values = [];
        for (const [storeName, store] of named) {
          const own = parseExposition(store.metrics()).get(name);
          for (const s of own ? own.samples : []) {
            const labels = storeName === null ? s.labels : { ...s.labels, [label]: storeName };
            values.push({ metricName: s.name, labels, value: s.value });
          }
        }
        return { name, help, type, aggregator: 'sum', values };
      },
      reset() {},
    });
    names.push(name);
  }
  return names;
}

module.exports = { registerStoreMetrics, parseExposition };
