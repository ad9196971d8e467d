#!/usr/bin/env python3
"""Instructions redis-server runs per sliding_log decision of rl's Redis
module (inside `call`, under callgrind: exact whatever the load), by the
number of live entries in the log, on one hot key and on distinct keys.

    bench/redis/module_sliding_log_cost.py [--build DIR] [--sizes 10,1000,10000]
                                           [--batches N] [--keep DIR]

Each log starts with exactly N live entries (RPUSH, not counted), one per
microsecond, in a window of N us; the measured calls pass `now` one
microsecond on each time, so the log keeps N live entries (one dies, one
is added). Cases, per decision:
- batch hot: RL.BATCH of 64 acquires of one key at one `now` (what the
  store sends for 64 calls in flight on a hot key: one RPUSH, 63 LSET -1);
- batch distinct: RL.BATCH of 64 acquires, each of its own key;
- single: RL.ACQUIRE of one key, one call at a time;
- lua single: the Lua library's acquire (FCALL) on the same log, for scale.
Every call is admitted (limit 10^7), as in bench/java.
"""
import argparse
import glob
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lua_cost import free_port, library_text, limits, start_server, verdict  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIMIT = 10_000_000
BATCH = 64


class Server:
    def __init__(self, build, keep):
        self.dir = tempfile.mkdtemp(prefix='rl-modsl-')
        self.keep = keep
        port = free_port()
        cmd = ['valgrind', '--tool=callgrind', '--toggle-collect=call', '--dump-instr=no',
               '--callgrind-out-file=%s/cg.out.%%p' % self.dir,
               'redis-server', '--port', str(port), '--save', '', '--appendonly', 'no',
               '--dir', self.dir, '--bind', '127.0.0.1', '--daemonize', 'no',
               '--loadmodule', os.path.join(build, 'redis-module', 'librl_redis.so')]
        self.proc, self.c = start_server(cmd, self.dir, port)
        self.lib, text = library_text(os.path.join(ROOT, 'lua'))
        self.c('FUNCTION', 'LOAD', 'REPLACE', text)
        self.phase = 0

    def control(self, flag):
        subprocess.run(['callgrind_control', flag, str(self.proc.pid)], check=True,
                       stdout=subprocess.DEVNULL)

    def instructions(self, run, decisions):
        """Instructions per decision of run() (counters zeroed before)."""
        self.control('-z')
        run()
        for f in glob.glob(self.dir + '/cg.out.*'):
            os.remove(f)
        self.control('-d')
        total = 0
        for f in glob.glob(self.dir + '/cg.out.*'):
            for line in open(f):
                # What callgrind collected (callgrind_annotate's PROGRAM
                # TOTALS); `totals:` can hold more than was collected.
                if line.startswith('summary:'):
                    total += int(line.split()[1])
            if self.keep:
                os.makedirs(self.keep, exist_ok=True)
                self.phase += 1
                subprocess.run(['cp', f, '%s/phase%d.out' % (self.keep, self.phase)])
        return total / decisions

    def close(self):
        self.proc.terminate()
        self.proc.wait()


def fill(c, key, size, base):
    """`size` entries as rl writes them: at base.. us, cost 1, running total."""
    c('DEL', key)
    entries = [struct.pack('<qqq', base + i, 1, i + 1) for i in range(size)]
    for i in range(0, size, 1000):
        c('RPUSH', key, *entries[i:i + 1000])


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--build', default=os.path.join(ROOT, 'build'))
    p.add_argument('--sizes', default='10,1000,10000')
    p.add_argument('--batches', type=int, default=10)
    p.add_argument('--keep', help='copy each case\'s callgrind dump here (phaseN.out)')
    a = p.parse_args()
    s = Server(a.build, a.keep)
    c = s.c
    try:
        for size in [int(x) for x in a.sizes.split(',')]:
            lim = limits(0, LIMIT, size)
            hot, single, lua = 'hot{%d}' % size, 'one{%d}' % size, 'lua{%d}' % size
            distinct = ['d{%d}:%d' % (size, i) for i in range(BATCH)]
            # An hour ahead of the server's clock: the keys' expiry (PEXPIREAT
            # of the newest entry + N us) stays in the future.
            t = c('TIME')
            base = int(t[0]) * 1000000 + int(t[1]) + 3600 * 1000000
            now = base + size

            def fill_all(keys):
                for k in keys:
                    fill(c, k, size, now - size)

            def check(replies):
                for r in replies:
                    assert verdict(r)[0] == 1, verdict(r)

            def batches(keys):
                def run():
                    nonlocal now
                    for _ in range(a.batches):
                        args = []
                        for k in keys:
                            args += [k, 'sliding_log_acquire', now, 1, lim]
                        check(c('RL.BATCH', *args))
                        now += 1
                return run

            def singles(command):
                def run():
                    nonlocal now
                    for _ in range(a.batches * BATCH):
                        check([command(now)])
                        now += 1
                return run

            n = a.batches * BATCH
            row = {'size': size}
            cases = [
                ('batch_hot', [hot], batches([hot] * BATCH)),
                ('batch_distinct', distinct, batches(distinct)),
                ('single', [single],
                 singles(lambda t: c('RL.ACQUIRE', single, 'sliding_log', t, 1, lim))),
                ('lua_single', [lua],
                 singles(lambda t: c('FCALL', '%s_sliding_log_acquire' % s.lib, 1, lua, t, 1, lim))),
            ]
            for name, keys, run in cases:
                fill_all(keys)
                row[name] = s.instructions(run, n)
                for k in keys:  # still N live entries: the case measured what it says
                    assert c('LLEN', k) == size, (name, k, c('LLEN', k))
            print(' '.join('%s=%d' % kv for kv in row.items()), flush=True)
            c('FLUSHALL')
    finally:
        s.close()


if __name__ == '__main__':
    main()
