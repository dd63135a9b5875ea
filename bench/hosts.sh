#!/usr/bin/env bash
# Crawls the many-host site of bench/hosts with the command, in memory and
# with 1, 2, 3... processes sharing the crawl through one Redis server (a
# redis-server of its own, on a free loopback port, started and stopped by
# the script), every name dialled to the site through -resolve. For each
# run: the processes, the seconds until the last exits, pages per second,
# the page requests beyond the first of each (dups, which must be 0), the
# Redis commands per URL, and the least and most requests of one host. Run
# from the project's root:
#
#   bench/hosts.sh [-hosts N] [-pages N] [-latency D] [-procs "0 1 2 3"] [-- CRAWL FLAGS...]
#
# -procs 0 is the crawl in memory, without Redis. The crawl's flags
# default to -workers 100 -host_workers 300.
set -euo pipefail
hosts=300 pages=10000 latency=20ms procs="0 1 2 3"
while [ $# -gt 0 ]; do
  case $1 in
    -hosts) hosts=$2; shift 2 ;;
    -pages) pages=$2; shift 2 ;;
    -latency) latency=$2; shift 2 ;;
    -procs) procs=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "hosts.sh: unknown flag $1" >&2; exit 2 ;;
  esac
done
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(-workers 100 -host_workers 300)
work=$(mktemp -d)
trap 'kill ${site_pid:-} ${redis_pid:-} 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/site" ./bench/hosts
( cd cmd/crawl && go build -o "$work/crawl" . )
roots=()
for i in $(seq 0 $((hosts - 1))); do roots+=("http://h$i.bench/"); done

redis_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
calls() { redis-cli -p "$redis_port" info commandstats | sed -n 's/.*:calls=\([0-9]*\),.*/\1/p' | awk '{n += $1} END {print n + 0}'; }

printf "%-6s %8s %8s %8s %6s %10s %14s\n" procs secs urls pages/s dups redis/url host_min-max
round=0
for k in $procs; do
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
  before=$(calls)
  start=$(date +%s.%N)
  if [ "$k" -eq 0 ]; then
    "$work/crawl" "${args[@]}" "${roots[@]}" >"$work/out-0" 2>&1
  else
    pids=()
    for p in $(seq "$k"); do
      "$work/crawl" "${args[@]}" -redis "redis://127.0.0.1:$redis_port/0" -crawl "bench-hosts-$$-$round" "${roots[@]}" >"$work/out-$p" 2>&1 &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
  fi
  end=$(date +%s.%N)
  after=$(calls)
  stats=$(curl -fs "http://$addr/__stats")
  kill "$site_pid"; wait "$site_pid" 2>/dev/null || true
  echo "$stats" | python3 -c '
import json, sys
k, secs, calls = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
s = json.load(sys.stdin)
urls = s["pages"]
ph = s["per_host"]
print("%-6s %8.2f %8d %8.0f %6d %10.1f %14s" % (k if k != "0" else "memory", secs, urls, urls / secs, s["duplicates"],
      calls / urls if k != "0" else 0, "%d-%d" % (min(ph), max(ph))))
' "$k" "$(echo "$end - $start" | bc)" "$((after - before))"
done
