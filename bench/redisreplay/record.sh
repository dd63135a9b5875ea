#!/usr/bin/env bash
# record.sh OUT -- COMMAND...: runs COMMAND (with bash -c, $REDIS_ADDR set
# to a redis-server of its own, without AOF or snapshots, on a free
# loopback port) while MONITOR records every command the server runs, then
# writes OUT.dat (the clients' commands, in order, with their times),
# OUT.scripts/ (the source of every script the clients loaded, named by the
# first 8 hex digits of its SHA-1) and OUT.run (the server's run_id). The server is new and empty, so each
# script arrives once as EVAL (go-redis's fallback from NOSCRIPT), which is
# where its source is read. Example, from the project's root:
#
#   bench/redisreplay/record.sh /tmp/bench -- 'cd redisfrontier && BENCH_REDIS=$REDIS_ADDR go test -run "^$" -bench "BenchmarkFrontier/new=1$" -benchtime 20000x .'
#   bench/redisreplay/record.sh /tmp/crawl -- 'bench/hosts.sh ...'   # or the command with -redis redis://$REDIS_ADDR/0
set -euo pipefail
out=$1; shift
[ "${1:-}" = "--" ] && shift
[ $# -ge 1 ] || { echo "usage: record.sh OUT -- COMMAND..." >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$(dirname "$out")"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
work=$(mktemp -d)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >"$work/server.log" 2>&1 &
server=$!
trap 'kill $server ${mon:-} 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
# The server's run_id, which the calls carry (the seen cache's check):
# the replay puts its own server's in its place.
redis-cli -p "$port" info server | sed -n 's/^run_id:\([0-9a-f]*\).*/\1/p' >"$out.run"
redis-cli -p "$port" monitor >"$out.monitor" &
mon=$!
sleep 0.2
REDIS_ADDR=127.0.0.1:$port bash -c "$*"
sleep 0.5
kill $mon
wait $mon 2>/dev/null || true
python3 "$here/redisreplay.py" convert "$out.monitor" "$out.dat" "$out.scripts"
rm -f "$out.monitor"
