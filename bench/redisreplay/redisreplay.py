#!/usr/bin/env python3
"""Records and replays the Redis frontier's script calls, to measure the
server CPU of its Lua scripts on one workload, the same every time, and to
check that a changed script answers as the old one did. See README.md.

  redisreplay.py convert MONITOR OUT.dat OUT.scripts
  redisreplay.py replay DAT SCRIPTS [--rounds N] [--replies PREFIX] [SHA8=FILE ...]
  redisreplay.py compare A B

Standard library only. replay starts a redis-server of its own (no AOF, no
snapshots) on a free loopback port for each run.
"""
import hashlib, os, re, socket, subprocess, sys, tempfile, time

ESC = {'n': b'\n', 'r': b'\r', 't': b'\t', 'a': b'\a', 'b': b'\b', '"': b'"', '\\': b'\\'}
TOKEN = re.compile(rb'"((?:[^"\\]|\\.)*)"')
LINE = re.compile(rb'^(\d+\.\d+) \[\d+ ([^\]]*)\] (.*)$')


def unquote(s):
    """Reverses redis-cli's quoting of a MONITOR argument (sdscatrepr)."""
    out, i = bytearray(), 0
    while i < len(s):
        if s[i] == 0x5c:
            n = chr(s[i + 1])
            if n == 'x':
                out.append(int(s[i + 2:i + 4], 16))
                i += 4
            else:
                out += ESC[n]
                i += 2
        else:
            out.append(s[i])
            i += 1
    return bytes(out)


def convert(monitor, dat, scripts):
    os.makedirs(scripts, exist_ok=True)
    n = 0
    with open(monitor, 'rb') as f, open(dat, 'wb') as o:
        for line in f:
            m = LINE.match(line.rstrip(b'\n'))
            if not m or m.group(2) == b'lua':
                continue  # a script's own calls: the replay makes them again
            args = [unquote(a) for a in TOKEN.findall(m.group(3))]
            if args and args[0].lower() == b'eval':
                sha = hashlib.sha1(args[1]).hexdigest()
                with open(os.path.join(scripts, sha[:8] + '.lua'), 'wb') as s:
                    s.write(args[1])
            o.write(m.group(1) + b' %d\n' % len(args))
            for a in args:
                o.write(b'%d\n' % len(a) + a + b'\n')
            n += 1
    print('%d commands' % n)


def read_dat(path):
    cmds = []
    with open(path, 'rb') as f:
        while True:
            head = f.readline()
            if not head:
                return cmds
            _, n = head.split()
            args = []
            for _ in range(int(n)):
                k = int(f.readline())
                args.append(f.read(k))
                f.read(1)
            cmds.append(args)


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(('127.0.0.1', port))
        self.f = self.s.makefile('rb')

    def call(self, *args):
        args = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        self.s.sendall(b''.join([b'*%d\r\n' % len(args)] + [b'$%d\r\n%s\r\n' % (len(a), a) for a in args]))
        return self.read()

    def read(self):
        line = self.f.readline()[:-2]
        t, v = line[:1], line[1:]
        if t == b'*':
            return None if int(v) < 0 else [self.read() for _ in range(int(v))]
        if t == b'$':
            return None if int(v) < 0 else self.f.read(int(v) + 2)[:-2]
        if t == b':':
            return int(v)
        if t == b'-':
            return ('error', v)
        return v


def cpu(c):
    info = c.call('INFO', 'cpu').decode()
    return sum(float(l.split(':')[1]) for l in info.split('\r\n')
               if l.startswith('used_cpu_user:') or l.startswith('used_cpu_sys:'))


# Commands of the clients that are not replayed: the connection's own, and
# those whose reply would differ without changing the crawl.
SKIP = {b'hello', b'subscribe', b'unsubscribe', b'monitor', b'client', b'eval', b'multi', b'exec'}


def run_once(cmds, sources, replies, run):
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()
    work = tempfile.mkdtemp()
    server = subprocess.Popen(['redis-server', '--port', str(port), '--bind', '127.0.0.1', '--save', '',
                               '--appendonly', 'no', '--dir', work], stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                c = Conn(port)
                if c.call('PING') == b'PONG':
                    break
            except OSError:
                time.sleep(0.05)
        shas = {k: c.call('SCRIPT', 'LOAD', v) for k, v in sources.items()}
        info = c.call('INFO', 'server').decode()
        now_run = re.search(r'run_id:([0-9a-f]+)', info).group(1).encode()
        c.call('CONFIG', 'RESETSTAT')
        c0, out, missing = cpu(c), [], set()
        for a in cmds:
            name = a[0].lower()
            if name in SKIP:
                continue
            if name == b'evalsha':
                k = a[1][:8].decode()
                if k not in shas:
                    missing.add(k)
                    continue
                # The recording server's run_id, where a call carries it
                # (the run its seen cache dropped links under), is this
                # server's: else the script answers "stale" and does
                # nothing.
                a = [b'EVALSHA', shas[k]] + [now_run if x == run else x for x in a[2:]]
            r = c.call(*a)
            if name == b'evalsha':
                out.append(repr(r))
        c1 = cpu(c)
        stats = c.call('INFO', 'commandstats').decode()
        ev = [l for l in stats.split('\r\n') if l.startswith('cmdstat_evalsha:')]
        fields = dict(kv.split('=') for kv in ev[0].split(':', 1)[1].split(',')) if ev else {}
        if missing:
            print('no source for scripts %s: their calls were skipped' % sorted(missing), file=sys.stderr)
        if replies:
            with open(replies, 'w') as f:
                f.write('\n'.join(out) + '\n')
        return int(fields.get('calls', 0)), int(fields.get('usec', 0)), c1 - c0
    finally:
        server.kill()
        server.wait()
        subprocess.run(['rm', '-rf', work])


def replay(argv):
    dat, scripts, rounds, prefix, over = argv[0], argv[1], 1, None, {}
    rest = argv[2:]
    while rest:
        a = rest.pop(0)
        if a == '--rounds':
            rounds = int(rest.pop(0))
        elif a == '--replies':
            prefix = rest.pop(0)
        else:
            k, v = a.split('=', 1)
            over[k] = open(v, 'rb').read()
    run = b''
    if dat.endswith('.dat') and os.path.exists(dat[:-4] + '.run'):
        run = open(dat[:-4] + '.run', 'rb').read().strip()
    if not run:
        print('no %s.run (the recording server run_id): calls that carry it will answer "stale"' % dat[:-4], file=sys.stderr)
    base = {}
    for name in os.listdir(scripts):
        if name.endswith('.lua'):
            base[name[:-4]] = open(os.path.join(scripts, name), 'rb').read()
    changed = dict(base, **over)
    cmds = read_dat(dat)
    for r in range(rounds):
        for label, sources in [('base', base)] + ([('changed', changed)] if over else []):
            calls, usec, cpus = run_once(cmds, sources, prefix and '%s.%s' % (prefix, label), run)
            print('%-7s round %d: %d script calls, %.1f ms in them (%.1f us a call), server CPU %.3f s'
                  % (label, r + 1, calls, usec / 1000, usec / max(calls, 1), cpus))


def compare(a, b):
    """Compares two replies files with the server's run_id (40 hex digits)
    and numbers of 7 or more digits (times, waits) taken as equal."""
    norm = lambda p: [re.sub(r'[0-9]{7,}', 'N', re.sub(r'[0-9a-f]{40}', 'R', l)) for l in open(p)]
    x, y = norm(a), norm(b)
    diff = [i for i in range(max(len(x), len(y))) if i >= len(x) or i >= len(y) or x[i] != y[i]]
    if not diff:
        print('the same %d replies' % len(x))
        return 0
    i = diff[0]
    print('%d of %d replies differ; the first, reply %d:\n%s\n%s' % (len(diff), max(len(x), len(y)), i + 1,
          x[i].strip() if i < len(x) else '(none)', y[i].strip() if i < len(y) else '(none)'))
    return 1


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd, argv = sys.argv[1], sys.argv[2:]
    if cmd == 'convert' and len(argv) == 3:
        convert(*argv)
    elif cmd == 'replay' and len(argv) >= 2:
        replay(argv)
    elif cmd == 'compare' and len(argv) == 2:
        sys.exit(compare(*argv))
    else:
        sys.exit(__doc__)
