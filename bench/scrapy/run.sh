#!/usr/bin/env bash
# Crawls the side-by-side benchmark's synthetic site with Scrapy (spider.py)
# and prints the same columns as the benchmark's compare.sh, counted by the
# site server: HTML pages fetched of the site's total, duplicate fetches,
# peak requests in flight, wall seconds, unique pages/s, requests/s, CPU
# seconds and peak RSS.
#
#   bench/scrapy/run.sh [-pages N] [-links K] [-workers W] [-latency D] [-runs R]
#   bench/scrapy/run.sh -url http://127.0.0.1:8700/ [-workers W] [-runs R]   # a site already serving
#
# Run from the project's root. SITE_DIR is the shared benchmark (default
# ../shared/bench): its site server is built and started with the flags
# compare.sh gives it (SITE_BIN names a site binary already built). Scrapy
# is Debian's (apt-get install python3-scrapy), run by /usr/bin/python3
# (PYTHON=... for another).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-/usr/bin/python3}
pages=10000 links=20 workers=16 latency=0s runs=1 url=""
while [ $# -gt 0 ]; do
  case "$1" in
    -pages) pages=$2; shift 2 ;;
    -links) links=$2; shift 2 ;;
    -workers) workers=$2; shift 2 ;;
    -latency) latency=$2; shift 2 ;;
    -runs) runs=$2; shift 2 ;;
    -url) url=$2; shift 2 ;;
    *) echo "unknown flag $1" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
trap 'kill "${site_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

if [ -z "$url" ]; then
  if [ -z "${SITE_BIN:-}" ]; then
    SITE_BIN=$work/site
    ( cd "${SITE_DIR:-../shared/bench}" && go build -o "$SITE_BIN" ./site )
  fi
  "$SITE_BIN" -pages "$pages" -links "$links" -latency "$latency" >"$work/site.out" 2>"$work/site.log" &
  site_pid=$!
  for _ in $(seq 100); do
    url=$(head -1 "$work/site.out" 2>/dev/null || true)
    [ -n "$url" ] && curl -fs "${url}__stats" >/dev/null 2>&1 && break
    sleep 0.1
  done
fi
curl -fs "${url}__stats" >/dev/null || { echo "no benchmark site at $url" >&2; exit 1; }
total=$(curl -fs "${url}__stats" | sed -E 's/.*"html_pages_total":([0-9]+).*/\1/')

printf "%-13s %11s %6s %6s %8s %8s %8s %7s %7s\n" engine pages dups maxin seconds pages/s reqs/s cpu_s rss_mb
for _ in $(seq "$runs"); do
  curl -fs "${url}__reset" >/dev/null
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" timeout 3600 \
    "$py" "$here/spider.py" -root "$url" -workers "$workers" >"$work/out" 2>&1 || true
  read -r el us ss rss < "$work/time"
  st=$(curl -fs "${url}__stats")
  html=$(sed -E 's/.*"html_pages":([0-9]+).*/\1/' <<<"$st")
  dups=$(sed -E 's/.*"duplicate_fetches":([0-9]+).*/\1/' <<<"$st")
  maxin=$(sed -E 's/.*"max_inflight":([0-9]+).*/\1/' <<<"$st")
  reqs=$(sed -E 's/.*"requests":([0-9]+).*/\1/' <<<"$st")
  printf "%-13s %11s %6s %6s %8s %8s %8s %7s %7s\n" scrapy "$html/$total" "$dups" "$maxin" "$el" \
    "$(awk -v h="$html" -v t="$el" 'BEGIN{ if (t>0) printf "%.0f", h/t; else print 0 }')" \
    "$(awk -v h="$reqs" -v t="$el" 'BEGIN{ if (t>0) printf "%.0f", h/t; else print 0 }')" \
    "$(awk -v a="$us" -v b="$ss" 'BEGIN{printf "%.2f", a+b}')" "$(( rss / 1024 ))"
  grep '^engine=' "$work/out" >&2 || { echo "spider.py failed:" >&2; tail -20 "$work/out" >&2; }
done
