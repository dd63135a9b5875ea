#!/usr/bin/env bash
# Crawls the many-host site of bench/hosts with the command, in memory and
# with 1, 2, 3... processes sharing the crawl through Redis: one
# redis-server (-masters 1, -redis), or a Redis Cluster of N masters
# (-masters N, -redis_cluster, the crawl in 256 shards), each a
# redis-server of its own on a free loopback port, started and stopped by
# the script; every name dialled to the site through -resolve. For each
# run: the masters, the processes, the seconds until the last exits,
# pages per second, the page requests beyond the first of each (dups,
# which must be 0), the Redis commands per URL, the least and most of
# them a master served (its share of the commands), and the least and
# most requests of one host. Run from the project's root:
#
#   bench/hosts.sh [-hosts N] [-pages N] [-latency D] [-procs "0 1 2 3"] [-masters "1 3"] [-- CRAWL FLAGS...]
#
# -procs 0 is the crawl in memory, without Redis (run once, with the first
# of -masters). The crawl's flags default to -workers 100
# -host_workers 300.
set -euo pipefail
hosts=300 pages=10000 latency=20ms procs="0 1 2 3" masters=1
while [ $# -gt 0 ]; do
  case $1 in
    -hosts) hosts=$2; shift 2 ;;
    -pages) pages=$2; shift 2 ;;
    -latency) latency=$2; shift 2 ;;
    -procs) procs=$2; shift 2 ;;
    -masters) masters=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "hosts.sh: unknown flag $1" >&2; exit 2 ;;
  esac
done
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(-workers 100 -host_workers 300)
work=$(mktemp -d)
redis_pids=()
trap 'kill ${site_pid:-} ${redis_pids[@]:-} 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/site" ./bench/hosts
( cd cmd/crawl && go build -o "$work/crawl" . )
roots=()
for i in $(seq 0 $((hosts - 1))); do roots+=("http://h$i.bench/"); done

free_port() {
  # A port whose cluster bus port (+10000) is free too.
  python3 -c '
import socket
while True:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]
    if p + 10000 > 65535: continue
    t = socket.socket()
    try:
        t.bind(("127.0.0.1", p + 10000)); print(p); break
    except OSError: pass
'
}
# start_redis N starts N redis-servers (N > 1: as a Redis Cluster of N
# masters) and sets ports to theirs.
start_redis() {
  kill "${redis_pids[@]}" 2>/dev/null || true
  redis_pids=() ports=()
  local n=$1 i port extra=()
  [ "$n" -gt 1 ] && extra=(--cluster-enabled yes --cluster-node-timeout 2000)
  for i in $(seq "$n"); do
    port=$(free_port)
    mkdir -p "$work/redis-$port"
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/redis-$port" \
      --cluster-config-file nodes.conf "${extra[@]}" >"$work/redis-$port.log" 2>&1 &
    redis_pids+=($!) ports+=("$port")
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  done
  if [ "$n" -gt 1 ]; then
    local addrs=()
    for port in "${ports[@]}"; do addrs+=("127.0.0.1:$port"); done
    redis-cli --cluster create "${addrs[@]}" --cluster-yes >"$work/cluster.log" 2>&1
    for _ in $(seq 200); do
      ok=1
      for port in "${ports[@]}"; do
        redis-cli -p "$port" cluster info | grep -q cluster_state:ok || ok=0
      done
      [ $ok -eq 1 ] && break
      sleep 0.1
    done
  fi
}
# calls prints the commands each server has served so far, one a line.
calls() {
  local port
  for port in "${ports[@]}"; do
    redis-cli -p "$port" info commandstats | sed -n 's/.*:calls=\([0-9]*\),.*/\1/p' | awk '{n += $1} END {print n + 0}'
  done
}

printf "%-7s %-6s %8s %8s %8s %6s %10s %14s %14s\n" masters procs secs urls pages/s dups redis/url master_min-max host_min-max
round=0
first=1
for m in $masters; do
start_redis "$m"
for k in $procs; do
  if [ "$k" -eq 0 ] && [ $first -eq 0 ]; then continue; fi
  round=$((round + 1))
  "$work/site" -hosts "$hosts" -pages "$pages" -latency "$latency" >"$work/site.out" 2>"$work/site.log" &
  site_pid=$!
  addr=""
  for _ in $(seq 100); do
    addr=$(sed -n 's|^http://\(.*\)/$|\1|p' "$work/site.out" | head -1)
    [ -n "$addr" ] && curl -fs "http://$addr/__stats" >/dev/null 2>&1 && break
    sleep 0.1
  done
  args=(-q "${flags[@]}" -resolve "*.bench:80:$addr")
  before=$(calls | tr '\n' ' ')
  start=$(date +%s.%N)
  if [ "$k" -eq 0 ]; then
    "$work/crawl" "${args[@]}" "${roots[@]}" >"$work/out-0" 2>&1
  else
    pids=()
    for p in $(seq "$k"); do
      if [ "$m" -gt 1 ]; then
        where=(-redis_cluster "127.0.0.1:${ports[0]}")
      else
        where=(-redis "redis://127.0.0.1:${ports[0]}/0")
      fi
      "$work/crawl" "${args[@]}" "${where[@]}" -crawl "bench-hosts-$$-$round" "${roots[@]}" >"$work/out-$p" 2>&1 &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
  fi
  end=$(date +%s.%N)
  after=$(calls | tr '\n' ' ')
  stats=$(curl -fs "http://$addr/__stats")
  kill "$site_pid"; wait "$site_pid" 2>/dev/null || true
  echo "$stats" | python3 -c '
import json, sys
m, k, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
per = [int(a) - int(b) for a, b in zip(sys.argv[5].split(), sys.argv[4].split())]
calls = sum(per)
s = json.load(sys.stdin)
urls = s["pages"]
ph = s["per_host"]
share = "%d-%d%%" % (100 * min(per) / max(calls, 1), 100 * max(per) / max(calls, 1)) if k != "0" else "-"
print("%-7s %-6s %8.2f %8d %8.0f %6d %10.1f %14s %14s" % (m if k != "0" else "-", k if k != "0" else "memory", secs, urls,
      urls / secs, s["duplicates"], calls / urls if k != "0" else 0, share, "%d-%d" % (min(ph), max(ph))))
' "$m" "$k" "$(echo "$end - $start" | bc)" "$before" "$after"
done
first=0
done
