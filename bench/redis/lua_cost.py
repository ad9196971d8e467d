#!/usr/bin/env python3
"""Redis CPU per decision of rl's Lua (FCALL of the library made from lua/)
beside the peers' scripts, sent straight to a redis-server of its own.

    bench/redis/lua_cost.py [--callgrind [--sim]] [--calls N] [--log-calls N] [--only NAME,...]
                            [--sizes 1,100,1000,10000] [--dead 0,1,2] [--lua DIR] [--keep DIR]
    bench/redis/lua_cost.py [--callgrind] --parts [--calls N]

Each case sends N calls one at a time (1 in flight) and reports, per call:
- usec: `usec_per_call` of the script command (fcall / evalsha) from INFO
  commandstats after CONFIG RESETSTAT (load-dependent: take ratios);
- with --callgrind: the instructions redis-server ran inside fcallCommand
  or evalShaCommand (valgrind --toggle-collect), exact whatever the load;
  with --sim as well, valgrind's cache and branch simulation and an
  estimate of cycles in their place.
The batch cases send one FCALL of the batch function with 50 usual calls
(as core/redis/coalescer.cpp groups them) and give rl's figures per
decision.
Peers: redis_rate's GCRA (allowN), rate-limiter-flexible's RateLimiterRedis
script (SET NX EX + INCRBY + PTTL), the seed-002 ZSET log
(bench/java/.../LettuceSlidingLog.java). The sliding logs are restored to
exactly N live entries (RESTORE, not counted) before each measured call.
--parts measures, instead of the cases, where a fixed_window call's
instructions (or, without --callgrind, its time) go: a ladder of
functions (FCALL) and scripts (EVALSHA) on the same keys and arguments,
each adding one part (nothing, TIME, INCR, the reply; SET NX EX, INCRBY,
PTTL) up to rl's call and the peer's, with the share of Lua's garbage
collector in each; rl's own script as EVALSHA; and the empty function
once rl's library is deleted (what its size costs the collector).
The library is built from lua/ as core/CMakeLists.txt builds it, so a Lua
change is measured without a build; rl's calls are sent as rl sends them
(core/redis/script_call.cpp: the limits alone for Redis TIME and cost 1)
and their replies (8-byte integers, lua/common.lua) decoded.
"""
import argparse
import glob
import hashlib
import math
import os
import random
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ALGORITHMS = ['gcra', 'token_bucket', 'sliding_log', 'sliding_window', 'fixed_window', 'suppressed']
OPS = ['acquire', 'peek', 'refund', 'reset']

REDIS_RATE = """
redis.replicate_commands()
local rate_limit_key = KEYS[1]
local burst = ARGV[1]
local rate = ARGV[2]
local period = ARGV[3]
local cost = tonumber(ARGV[4])
local emission_interval = period / rate
local increment = emission_interval * cost
local burst_offset = emission_interval * burst
local jan_1_2017 = 1483228800
local now = redis.call("TIME")
now = (now[1] - jan_1_2017) + (now[2] / 1000000)
local tat = redis.call("GET", rate_limit_key)
if not tat then
  tat = now
else
  tat = tonumber(tat)
end
tat = math.max(tat, now)
local new_tat = tat + increment
local allow_at = new_tat - burst_offset
local diff = now - allow_at
local remaining = diff / emission_interval
if remaining < 0 then
  local reset_after = tat - now
  local retry_after = diff * -1
  return {
    0, -- allowed
    0, -- remaining
    tostring(retry_after),
    tostring(reset_after),
  }
end
local reset_after = new_tat - now
if reset_after > 0 then
  redis.call("SET", rate_limit_key, new_tat, "EX", math.ceil(reset_after))
end
local retry_after = -1
return {cost, remaining, tostring(retry_after), tostring(reset_after)}
"""

FLEXIBLE = """redis.call('set', KEYS[1], 0, 'EX', ARGV[2], 'NX') \
local consumed = redis.call('incrby', KEYS[1], ARGV[1]) \
local ttl = redis.call('pttl', KEYS[1]) \
if ttl == -1 then \
  redis.call('expire', KEYS[1], ARGV[2]) \
  ttl = 1000 * ARGV[2] \
end \
return {consumed, ttl} \
"""

ZSET_LOG = ("redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))\n"
            "if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then\n"
            "  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])\n"
            "  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
            "  return 1\n"
            "end\n"
            "return 0\n")


def library_text(lua_dir):
    """lua/ as one Functions library, exactly as core/CMakeLists.txt makes it."""
    read = lambda p: open(os.path.join(lua_dir, p)).read()
    common, entry = read('common.lua'), read('library.lua')
    lib = 'local function setup()\n' + common + '\nlocal algorithms = {}\n'
    regs = ''
    for a in ALGORITHMS:
        lib += 'do\n' + read('algorithms/%s.lua' % a) + 'algorithms.%s = algo\nend\n' % a
        for op in OPS:
            regs += "entries.%s_%s = entry('%s', '%s')\nredis.register_function('@RL_LIBRARY@_%s_%s', entries.%s_%s)\n" % (
                a, op, a, op, a, op, a, op)
    exports = 'operation = operation, decider = decider, now = redis_now, algorithms = algorithms'
    if 'local function decider(' not in common:  # a lua/ from before the batch's decider
        exports = 'operation = operation, algorithms = algorithms'
    lib += 'return { %s }\nend\n' % exports + entry + regs
    lib += "redis.register_function('@RL_LIBRARY@_batch', batch)\n"
    name = 'rl_' + hashlib.sha1(lib.encode()).hexdigest()[:12]
    return name, '#!lua name=%s\n%s' % (name, lib.replace('@RL_LIBRARY@', name))


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(('127.0.0.1', port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.f = self.s.makefile('rb')

    def __call__(self, *args):
        out = b'*%d\r\n' % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b'$%d\r\n%s\r\n' % (len(a), a)
        self.s.sendall(out)
        return self.read()

    def read(self):
        line = self.f.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b'+':
            return rest.decode()
        if kind == b'-':
            raise RuntimeError(rest.decode())
        if kind == b':':
            return int(rest)
        if kind == b'$':
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)[:-2]
            return data
        if kind == b'*':
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError('bad reply %r' % line)


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def limits(min_ttl, limit, window_us, burst=None, g=None):
    burst = limit if burst is None else burst
    d = math.gcd(limit, window_us)
    return '%d %d %d %d %d %d %d' % (min_ttl, limit, window_us, burst, limit // d, window_us // d,
                                    window_us if g is None else g)


def start_server(cmd, log_dir, port):
    """Starts redis-server's command line `cmd` (its output in log_dir/log)
    and returns (the process, a Conn to it) once it answers PING."""
    proc = subprocess.Popen(cmd, stdout=open(os.path.join(log_dir, 'log'), 'w'),
                            stderr=subprocess.STDOUT)
    for _ in range(600):
        try:
            c = Conn(port)
            c('PING')
            return proc, c
        except (OSError, RuntimeError):
            time.sleep(0.1)
    raise SystemExit('redis-server did not start (%s/log)' % log_dir)


class Bench:
    def __init__(self, args):
        self.args = args
        self.dir = tempfile.mkdtemp(prefix='lua-cost-')
        self.port = free_port()
        cmd = ['redis-server', '--port', str(self.port), '--save', '', '--appendonly', 'no',
               '--dir', self.dir, '--bind', '127.0.0.1', '--daemonize', 'no']
        if args.callgrind:
            sim = ['--cache-sim=yes', '--branch-sim=yes'] if args.sim else []
            cmd = ['valgrind', '--tool=callgrind'] + sim + ['--toggle-collect=fcallCommand',
                   '--toggle-collect=evalShaCommand', '--dump-instr=no',
                   '--callgrind-out-file=%s/cg.out.%%p' % self.dir] + cmd
        self.proc, self.c = start_server(cmd, self.dir, self.port)
        self.lib, text = library_text(args.lua)
        entry_text = open(os.path.join(args.lua, 'library.lua')).read()
        self.full_names = '_full' in entry_text
        self.groups = 'bad count' in entry_text
        self.c('FUNCTION', 'LOAD', 'REPLACE', text)
        self.sha = {n: self.c('SCRIPT', 'LOAD', s).decode()
                    for n, s in (('redis_rate', REDIS_RATE), ('flexible', FLEXIBLE), ('zset', ZSET_LOG))}

    def close(self):
        self.proc.terminate()
        self.proc.wait()

    def now_us(self):
        t = self.c('TIME')
        return int(t[0]) * 1000000 + int(t[1])

    def measure(self, command, n, before=None, warm=1):
        """Per call of `command(i)`: (usec, instructions or None)."""
        c = self.c
        for i in range(warm):  # the first call parses the limits, loads setup()
            if before:
                before(i)
            command(i)
        if self.args.callgrind:
            subprocess.run(['callgrind_control', '-z', str(self.proc.pid)], check=True,
                           stdout=subprocess.DEVNULL)
        c('CONFIG', 'RESETSTAT')
        for i in range(n):
            if before:
                before(i)
            command(i)
        stats = c('INFO', 'commandstats').decode()
        usec, calls = 0.0, 0
        for name in ('fcall', 'evalsha'):
            m = re.search(r'cmdstat_%s:calls=(\d+),usec=(\d+)' % name, stats)
            if m:
                calls += int(m.group(1))
                usec += int(m.group(2))
        instr = None
        if self.args.callgrind:
            for f in glob.glob(self.dir + '/cg.out.*'):
                os.remove(f)
            subprocess.run(['callgrind_control', '-d', str(self.proc.pid)], check=True,
                           stdout=subprocess.DEVNULL)
            total = {}
            for f in glob.glob(self.dir + '/cg.out.*'):
                events = ['Ir']
                for line in open(f):
                    if line.startswith('events:'):
                        events = line.split()[1:]
                    if line.startswith('summary:') or line.startswith('totals:'):
                        for e, v in zip(events, line.split()[1:]):
                            total[e] = max(total.get(e, 0), int(v))
            instr = total.get('Ir', 0) / n
            self.gc = sum(gc_instructions(f) for f in glob.glob(self.dir + '/cg.out.*')) / n
            if self.args.sim:  # KCachegrind's estimate of cycles: Ir + 10 Bm + 10 L1m + 100 LLm
                get = lambda *names: sum(total.get(e, 0) for e in names)
                instr = (get('Ir') + 10 * get('Bcm', 'Bim') + 10 * get('I1mr', 'D1mr', 'D1mw') +
                         100 * get('ILmr', 'DLmr', 'DLmw')) / n
                self.sim_detail = {e: v / n for e, v in total.items()}
            if self.args.keep:
                os.makedirs(self.args.keep, exist_ok=True)
                self.phase = getattr(self, 'phase', 0) + 1
                for f in glob.glob(self.dir + '/cg.out.*'):
                    subprocess.run(['cp', f, '%s/phase%d.out' % (self.args.keep, self.phase)])
        assert calls == n, (calls, n)
        return usec / n, instr

    def batch(self, algo, op, keys, lim):
        """One FCALL of the batch function: the usual call (Redis TIME, cost
        1) on each key, as core/redis/coalescer.cpp sends it: one group of
        name, limits, count (a lua/ from before groups: name and limits per
        call; before _full names: name, '', '1', limits per call)."""
        if self.groups:
            args = ['%s_%s' % (algo, op), lim, len(keys)]
        elif self.full_names:
            args = [a for _ in keys for a in ('%s_%s' % (algo, op), lim)]
        else:
            args = [a for _ in keys for a in ('%s_%s' % (algo, op), '', '1', lim)]
        return self.c('FCALL', self.lib + '_batch', len(keys), *keys, *args)

    def fcall(self, algo, op, key, now, cost, lim):
        args = (lim,) if now == '' and cost == 1 else (now, cost, lim)  # as core/redis/script_call.cpp
        return self.c('FCALL', '%s_%s_%s' % (self.lib, algo, op), 1, key, *args)


def gc_instructions(out):
    """Instructions of Lua's collector in a dump: luaC_step's, the function
    lua_gc calls (Redis calls lua_gc every 50 scripts or functions; Lua
    steps on its own when its allocations are due). Debian's redis-server
    names lua_gc but not Lua's static functions: its callee is found by
    the call."""
    text = subprocess.run(['callgrind_annotate', '--tree=calling', '--inclusive=yes', '--threshold=100', out],
                          capture_output=True, text=True).stdout
    m = re.search(r'^\s*[\d,]+ .*\*\s+\?\?\?:lua_gc .*\n\s*[\d,]+ .*>\s+(\S+) ', text, re.M)
    if not m:
        return 0
    m = re.search(r'^\s*([\d,]+) .*\*\s+%s ' % re.escape(m.group(1)), text, re.M)
    return int(m.group(1).replace(',', '')) if m else 0


# --parts: functions and scripts that each add one part of a fixed_window
# call. A probe's arguments are the shape of the call it stands beside: rl's
# (key, limits) or the peer's (key, cost, TTL).
PROBE_LIBRARY = """#!lua name=rlprobe
local function nop(keys, argv) return 0 end
local function time(keys, argv) local t = redis.call('TIME') return 0 end
local function time_incr(keys, argv) local t = redis.call('TIME') redis.call('INCR', keys[1]) return 0 end
local function time_incr_pack(keys, argv)
  local t = redis.call('TIME')
  local n = redis.call('INCR', keys[1])
  return struct.pack('<i8i8i8i8i8', 1, n, 0, t[1] * 1000000 + t[2], 0)
end
redis.register_function('rlprobe_nop', nop)
redis.register_function('rlprobe_time', time)
redis.register_function('rlprobe_time_incr', time_incr)
redis.register_function('rlprobe_time_incr_pack', time_incr_pack)
"""
PROBE_SCRIPTS = [
    ('nop', "return 0"),
    ('time', "local t = redis.call('TIME') return 0"),
    ('set', "redis.call('set', KEYS[1], 0, 'EX', ARGV[2], 'NX') return 0"),
    ('set_incrby', "redis.call('set', KEYS[1], 0, 'EX', ARGV[2], 'NX') "
                   "local consumed = redis.call('incrby', KEYS[1], ARGV[1]) return 0"),
    ('set_incrby_pttl', "redis.call('set', KEYS[1], 0, 'EX', ARGV[2], 'NX') "
                        "local consumed = redis.call('incrby', KEYS[1], ARGV[1]) "
                        "local ttl = redis.call('pttl', KEYS[1]) return 0"),
]


def parts(b, n):
    """The ladder of --parts, one row per probe: usec and instructions per
    call, and of them the collector's."""
    c = b.c
    c('FUNCTION', 'LOAD', 'REPLACE', PROBE_LIBRARY)
    sha = {name: c('SCRIPT', 'LOAD', text).decode() for name, text in PROBE_SCRIPTS}
    read = lambda p: open(os.path.join(b.args.lua, p)).read()
    rl_script = read('common.lua') + read('algorithms/fixed_window.lua') + read('operations/acquire.lua')
    sha['rl'] = c('SCRIPT', 'LOAD', rl_script).decode()
    keys = ['{k%d}' % i for i in range(1000)]
    lim = limits(0, 1000000000, 3600000000)
    rl_key = lambda i: 'rl:b:%s:v1:fixed_window:x' % keys[i % 1000]
    probe_key = lambda i: 'rl:p:%s:v1:fixed_window:x' % keys[i % 1000]  # as long as rl's
    peer_key = lambda i: 'rlflx:%s' % keys[i % 1000]
    fcall = lambda f: lambda i: c('FCALL', f, 1, probe_key(i), lim)
    evalsha = lambda name, key: lambda i: c('EVALSHA', sha[name], 1, key(i), 1, 3600)
    ladder = [
        ('FCALL, rl\'s arguments: return 0', fcall('rlprobe_nop')),
        ('FCALL: TIME', fcall('rlprobe_time')),
        ('FCALL: TIME + INCR', fcall('rlprobe_time_incr')),
        ('FCALL: TIME + INCR + struct.pack of 5', fcall('rlprobe_time_incr_pack')),
        ('FCALL: rl fixed_window acquire', lambda i: b.fcall('fixed_window', 'acquire', rl_key(i), '', 1, lim)),
        ('EVALSHA, rl\'s arguments: rl fixed_window acquire',
         lambda i: c('EVALSHA', sha['rl'], 1, 'rl:s:%s:v1:fixed_window:x' % keys[i % 1000], lim)),
        ('EVALSHA, the peer\'s arguments: return 0', evalsha('nop', peer_key)),
        ('EVALSHA: TIME', evalsha('time', peer_key)),
        ('EVALSHA: SET NX EX', evalsha('set', lambda i: 'rlflx:s:%s' % keys[i % 1000])),
        ('EVALSHA: SET NX EX + INCRBY', evalsha('set_incrby', lambda i: 'rlflx:i:%s' % keys[i % 1000])),
        ('EVALSHA: SET NX EX + INCRBY + PTTL',
         evalsha('set_incrby_pttl', lambda i: 'rlflx:p:%s' % keys[i % 1000])),
        ('EVALSHA: the peer (+ its table of 2)', lambda i: c('EVALSHA', b.sha['flexible'], 1, peer_key(i), 1, 3600)),
    ]
    rows = []

    def row(name, command):
        usec, instr = b.measure(command, n, warm=1000)
        rows.append((name, usec, instr, b.gc if instr is not None else None))
        print(parts_row(rows[-1]), flush=True)

    for name, command in ladder:
        row(name, command)
    # The Functions VM without rl's library: what its size costs the collector.
    c('FUNCTION', 'DELETE', b.lib)
    row('FCALL, rl\'s arguments: return 0, rl\'s library not loaded', fcall('rlprobe_nop'))
    print()
    print('| probe (fixed_window shape) | us | instr | of them Lua\'s collector | without it |')
    print('| --- | ---: | ---: | ---: | ---: |')
    for r in rows:
        print(parts_row(r))


def parts_row(r):
    name, usec, instr, gc = r
    if instr is None:
        return '| %s | %.2f | - | - | - |' % (name, usec)
    return '| %s | %.2f | %.0f | %.0f | %.0f |' % (name, usec, instr, gc, instr - gc)


def verdict(reply):
    """rl's reply (lua/common.lua: integers of 8 bytes, little-endian) as a list."""
    if isinstance(reply, list):
        return reply
    return list(struct.unpack('<%dq' % (len(reply) // 8), reply))


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--callgrind', action='store_true')
    p.add_argument('--sim', action='store_true',
                   help='with --callgrind: simulate caches and branches; the instr columns become '
                        'estimated cycles (Ir + 10 mispredicts + 10 L1 misses + 100 LL misses)')
    p.add_argument('--lua', default=os.path.join(ROOT, 'lua'),
                   help='the lua/ directory to measure (e.g. an older one: git archive REV lua | tar -x -C DIR)')
    p.add_argument('--calls', type=int, default=2000)
    p.add_argument('--log-calls', type=int, default=200)
    p.add_argument('--only', default='')
    p.add_argument('--sizes', default='1,100,1000,10000')
    p.add_argument('--dead', default='0',
                   help='sliding logs: dead entries before the live ones, e.g. 0,1,2 (a busy key loses '
                        'about one between two calls)')
    p.add_argument('--parts', action='store_true',
                   help='where a fixed_window call\'s instructions (--callgrind) or time go (see the header)')
    p.add_argument('--keep', help='with --callgrind: copy each measured phase\'s callgrind output here')
    args = p.parse_args()
    b = Bench(args)
    if args.parts:
        try:
            parts(b, args.calls)
        finally:
            b.close()
        return
    rows = []
    only = [o for o in args.only.split(',') if o]

    def case(name, rl, peer, n, before=None, check=None, warm=1, per=1):
        """per: decisions per rl call (a batch): rl's figures are per decision."""
        if only and not any(name.startswith(o) for o in only):
            return
        r = b.measure(rl, n, before, warm)
        r = (r[0] / per, None if r[1] is None else r[1] / per)
        detail = getattr(b, 'sim_detail', None)
        if detail:
            detail = {e: v / per for e, v in detail.items()}
        q = b.measure(peer, n * per, before, warm)  # as many decisions as rl's
        if detail:  # per decision: rl's events, then the peer's
            for who, d in (('rl', detail), ('peer', b.sim_detail)):
                print('  %s %s: %s' % (name, who, ' '.join('%s=%.0f' % kv for kv in sorted(d.items()))))
        if check:
            check()
        rows.append((name, r, q))
        print(fmt(rows[-1]), flush=True)

    try:
        n = args.calls
        keys = ['{k%d}' % i for i in range(1000)]
        # gcra, 10^6/s (bench/go): every call admitted, one key.
        lim = limits(0, 1000000, 1000000)
        case('gcra admitted',
             lambda i: b.fcall('gcra', 'acquire', 'rl:b:{g}:v1:gcra:x', '', 1, lim),
             lambda i: b.c('EVALSHA', b.sha['redis_rate'], 1, 'rate:{g}', 1000000, 1000000, 1, 1), n)
        lim3 = limits(0, 3, 1000000)  # limit_reduced 3: a fraction in the state
        case('gcra admitted 3/s',
             lambda i: b.fcall('gcra', 'acquire', 'rl:b:%s:v1:gcra:3' % keys[i % 1000], '', 1, lim3),
             lambda i: b.c('EVALSHA', b.sha['redis_rate'], 1, 'rate:3:%s' % keys[i % 1000], 3, 3, 1, 1),
             min(n, 1000), warm=1000)
        lim1h = limits(0, 1, 3600000000)
        case('gcra denied',
             lambda i: b.fcall('gcra', 'acquire', 'rl:b:{d}:v1:gcra:1h', '', 1, lim1h),
             lambda i: b.c('EVALSHA', b.sha['redis_rate'], 1, 'rate:{d}', 1, 1, 3600, 1), n)
        # fixed_window, 1e9 per hour (bench/node), 1,000 keys.
        limf = limits(0, 1000000000, 3600000000)
        case('fixed_window admitted',
             lambda i: b.fcall('fixed_window', 'acquire', 'rl:b:%s:v1:fixed_window:x' % keys[i % 1000], '', 1,
                               limf),
             lambda i: b.c('EVALSHA', b.sha['flexible'], 1, 'rlflx:%s' % keys[i % 1000], 1, 3600), n, warm=1000)
        limf1 = limits(0, 1, 3600000000)
        case('fixed_window denied',
             lambda i: b.fcall('fixed_window', 'acquire', 'rl:b:{d}:v1:fixed_window:1', '', 1, limf1),
             lambda i: b.c('EVALSHA', b.sha['flexible'], 1, 'rlflx:{d}', 1, 3600), n)
        # A batch (core/redis/coalescer.cpp: the calls that waited behind
        # one in flight) of 50 usual calls on 50 keys, per decision.
        B = 50
        batches = [keys[j * B:(j + 1) * B] for j in range(len(keys) // B)]
        check_batch = lambda r: all(verdict(x)[0] == 1 for x in r) or sys.exit('batch denied: %r' % r[:2])
        case('fixed_window batch of %d' % B,
             lambda i: check_batch(b.batch('fixed_window', 'acquire',
                                           ['rl:b:%s:v1:fixed_window:x' % k for k in batches[i % len(batches)]],
                                           limf)),
             lambda i: b.c('EVALSHA', b.sha['flexible'], 1, 'rlflx:%s' % keys[i % 1000], 1, 3600),
             max(1, n // B), warm=len(batches), per=B)
        case('gcra batch of %d' % B,
             lambda i: check_batch(b.batch('gcra', 'acquire',
                                           ['rl:b:%s:v1:gcra:x' % k for k in batches[i % len(batches)]], lim)),
             lambda i: b.c('EVALSHA', b.sha['redis_rate'], 1, 'rate:%s' % keys[i % 1000], 1000000, 1000000, 1, 1),
             max(1, n // B), warm=len(batches), per=B)
        for size in [int(s) for s in args.sizes.split(',')]:
            for dead in [int(d) for d in args.dead.split(',')]:
                sliding_log(b, case, size, args.log_calls, dead)
    finally:
        b.close()
    print()
    print('| case | rl us | peer us | ratio us |%s' % (' rl instr | peer instr | ratio instr |' if args.callgrind else ''))
    print('| --- | ---: | ---: | ---: |%s' % (' ---: | ---: | ---: |' if args.callgrind else ''))
    for row in rows:
        print(fmt(row))


def fmt(row):
    name, (ru, ri), (pu, pi) = row
    s = '| %s | %.2f | %.2f | %.2fx |' % (name, ru, pu, ru / pu if pu else float('nan'))
    if ri is not None:
        s += ' %.0f | %.0f | %.2fx |' % (ri, pi, ri / pi)
    return s


def sliding_log(b, case, size, calls, dead=0):
    """N live entries, 1 h window: admitted (limit N + 1) and denied (limit N);
    with `dead`, that many dead entries before them (ZREMRANGEBYSCORE's or
    the trim's work)."""
    c = b.c
    rl_key, zkey = 'rl:b:{s%d}:v2:sliding_log:x' % size, 'zlog:{s%d}' % size
    window_us = 3600 * 1000000
    now = b.now_us()
    # One entry per instant, 1 ms apart, ending now (the measured calls
    # read Redis TIME); the dead ones a minute and more before the window.
    # Written as rl writes them (lua/algorithms/sliding_log.lua: at, cost,
    # running total), by RPUSH: an acquire would trim the dead ones.
    start = now - size * 1000
    at = [now - window_us - 60000000 - (dead - j) * 1000 for j in range(dead)]
    at += [start + i * 1000 for i in range(size)]
    entries = [struct.pack('<qqq', t, 1, i + 1) for i, t in enumerate(at)]
    c('DEL', rl_key, zkey)
    for i in range(0, len(entries), 1000):
        c('RPUSH', rl_key, *entries[i:i + 1000])
    c('PERSIST', rl_key)
    rl_dump = c('DUMP', rl_key)
    for t in at[:dead]:
        c('ZADD', zkey, t // 1000, '%x' % (t // 1000 * 7919))
    c('EVAL', "for i = 1, tonumber(ARGV[1]) do local at = tonumber(ARGV[2]) + i "
              "redis.call('ZADD', KEYS[1], at, string.format('%x', at * 7919)) end", 1, zkey, size,
      start // 1000)
    z_dump = c('DUMP', zkey)

    def restore(i):
        c('RESTORE', rl_key, 0, rl_dump, 'REPLACE')
        c('RESTORE', zkey, 0, z_dump, 'REPLACE')

    admit, deny = limits(0, size + 1, window_us), limits(0, size, window_us)
    ms = lambda: int(time.time() * 1000)
    member = lambda: '%016x' % random.getrandbits(64)

    def rl_call(lim, want):
        def call(i):
            r = verdict(b.fcall('sliding_log', 'acquire', rl_key, '', 1, lim))
            assert r[0] == want, r
        return call

    def z_call(limit, want):
        def call(i):
            r = c('EVALSHA', b.sha['zset'], 1, zkey, ms(), 3600000, limit, member())
            assert r == want, r
        return call

    more = ', %d dead' % dead if dead else ''
    case('sliding_log admitted, %d entries%s' % (size, more), rl_call(admit, 1), z_call(size + 1, 1), calls,
         restore)
    case('sliding_log denied, %d entries%s' % (size, more), rl_call(deny, 0), z_call(size, 0), calls, restore)
    c('DEL', rl_key, zkey)


if __name__ == '__main__':
    main()
