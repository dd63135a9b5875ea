#!/usr/bin/env bash
# Alternating rounds of the no-parse ceiling, the bare fetch-and-scan loop
# and the crawl (bench/floor) on the shared benchmark site, with CPU per
# request for each and the medians of the ratios: the 1,000-worker figures
# of docs/performance.md. Run from the project's root:
#
#   bench/floor.sh [-rounds N] [-workers W] [-latency D] [-pages N] [-cpuprofile DIR]
#
# With -cpuprofile, each run writes DIR/ENGINE-ROUND.pprof (go tool pprof
# bench-floor DIR/crawl-1.pprof, with the binary the script copies there).
# SITE_DIR is the shared benchmark (default ../shared/bench), whose site
# counts the requests each engine made.
set -euo pipefail
rounds=7 workers=1000 latency=20ms pages=10000 profiles=""
while [ $# -gt 0 ]; do
  case $1 in
    -rounds) rounds=$2; shift 2 ;;
    -workers) workers=$2; shift 2 ;;
    -latency) latency=$2; shift 2 ;;
    -pages) pages=$2; shift 2 ;;
    -cpuprofile) profiles=$2; shift 2 ;;
    *) echo "floor.sh: unknown flag $1" >&2; exit 2 ;;
  esac
done
site_dir=${SITE_DIR:-../shared/bench}
work=$(mktemp -d)
trap 'kill "${site_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
( cd "$site_dir" && go build -o "$work/site" ./site )
go build -o "$work/floor" ./bench/floor
if [ -n "$profiles" ]; then
  mkdir -p "$profiles" && cp "$work/floor" "$profiles/bench-floor"
fi

# one ENGINE ROUND: serves a fresh site, runs the engine on it, prints
# "engine requests cpu_s pages".
one() {
  "$work/site" -pages "$pages" -latency "$latency" >"$work/site.out" 2>"$work/site.log" &
  site_pid=$!
  local addr="" stats
  for _ in $(seq 100); do
    addr=$(sed -n 's|^http://\(.*\)/$|\1|p' "$work/site.out" | head -1)
    [ -n "$addr" ] && curl -fs "http://$addr/__stats" >/dev/null 2>&1 && break
    sleep 0.1
  done
  local out prof=()
  [ -n "$profiles" ] && prof=(-cpuprofile "$profiles/$1-$2.pprof")
  out=$("$work/floor" -engine "$1" -root "http://$addr/" -workers "$workers" -pages "$pages" "${prof[@]}")
  stats=$(curl -fs "http://$addr/__stats")
  kill "$site_pid"; wait "$site_pid" 2>/dev/null || true
  local req
  req=$(echo "$stats" | grep -o '"requests":[0-9]*' | cut -d: -f2)
  echo "$1 $req $(echo "$out" | sed -n 's/.*fetched=\([0-9]*\) cpu_s=\([0-9.]*\).*/\2 \1/p')"
}

printf "%-6s %-8s %9s %9s %10s %9s %9s\n" round engine requests pages cpu_us/req "/ceiling" "/bare"
for r in $(seq "$rounds"); do
  c=$(one ceiling "$r"); b=$(one bare "$r"); k=$(one crawl "$r")
  echo "$r $c $b $k"
done | awk -v pages="$pages" '
  function median(a, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  {
    r = $1
    c = $4 * 1e6 / $3; b = $8 * 1e6 / $7; k = $12 * 1e6 / $11
    printf "%-6s %-8s %9d %9s %10.1f\n", r, "ceiling", $3, $5 "/" pages, c
    printf "%-6s %-8s %9d %9s %10.1f %9.2f\n", r, "bare", $7, $9 "/" pages, b, b / c
    printf "%-6s %-8s %9d %9s %10.1f %9.2f %9.2f\n", r, "crawl", $11, $13 "/" pages, k, k / c, k / b
    n++; bc[n] = b / c; kc[n] = k / c; kb[n] = k / b
  }
  END {
    printf "medians over %d rounds: bare/ceiling %.2f, crawl/ceiling %.2f, crawl/bare %.2f\n", n, median(bc, n), median(kc, n), median(kb, n)
  }'
