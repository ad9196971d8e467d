'use strict';
// Redis Cluster through the Node binding: the cluster of scripts/with-redis
// (RL_TEST_CLUSTER_URL, three masters). Routing, redirects and failovers
// are librl's (tests/redis/cluster_test.cpp); this shows a Node service
// gets them from the URL alone.
const test = require('node:test');
const assert = require('node:assert');
const rl = require('..');
const { uniqueName } = require('./support/stores');

const clusterUrl = process.env.RL_TEST_CLUSTER_URL;
const noCluster = !clusterUrl && 'RL_TEST_CLUSTER_URL is not set (scripts/with-redis sets it)';

test('keys on every master of a cluster decide exactly, and a batch joins in order', { skip: noCluster }, async () => {
  const store = await rl.open(clusterUrl);
  try {
    const limiter = store.limiter({ algorithm: 'gcra', limit: '5/1h', name: uniqueName('cluster') });
    const requests = [];
    for (let k = 0; k < 30; k++) {
      let admitted = 0;
      for (let i = 0; i < 7; i++) if ((await limiter.acquire(`user-${k}`)).allowed) admitted++;
      assert.equal(admitted, 5, `user-${k}`);
      requests.push({ key: `fresh-${k}`, cost: 5 }, { key: `fresh-${k}`, cost: 1 });
    }
    const decisions = await limiter.acquireBatch(requests);
    decisions.forEach((d, i) => assert.equal(d.allowed, i % 2 === 0, `request ${i}`));
  } finally {
    store.close();
  }
});
