#!/usr/bin/env bash
# ackclock-sim against ns-3 on the same two dumbbell scenarios (bench/ns3/README.md).
#
#   bash bench/ns3/run.sh            # 3 rounds, medians
#   RUNS=5 OUT=/tmp/x bash bench/ns3/run.sh
#
# Installs what it needs with apt-get (libns3-dev, g++, time, jq) if missing, builds
# bench/ns3/dumbbell.cc against Debian's ns-3 and ackclock in release, then runs, in each
# round, both simulators on scenario (a) and then on (b), each under /usr/bin/time -v, and
# prints the medians as a Markdown table. Not for CI: it downloads packages and takes
# about two minutes a round on a 2-core machine.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${OUT:-${TMPDIR:-/tmp}/ackclock-ns3-bench}"
RUNS="${RUNS:-3}"
mkdir -p "$OUT"

# The two scenarios: ackclock's scenario file and the same thing as dumbbell's flags.
declare -A TOML=([a]="$HERE/a.toml" [b]="$HERE/b.toml")
declare -A NS3ARGS=(
  [a]="--pairs=8 --accessRate=100Mbps --accessDelay=1ms --accessQueuePkts=1000 --bottleneckRate=1.5Mbps --bottleneckDelay=25ms --queuePkts=16 --duration=100 --mss=1460 --sndBufBytes=65536 --rcvBufBytes=131072"
  [b]="--pairs=64 --accessRate=1Gbps --accessDelay=1ms --accessQueuePkts=1000 --bottleneckRate=100Mbps --bottleneckDelay=25ms --queuePkts=100 --duration=30 --mss=1460 --sndBufBytes=65536 --rcvBufBytes=131072"
)
declare -A DURATION=([a]=100 [b]=30)

# --- tools -------------------------------------------------------------------------------
need=()
[ -d /usr/include/ns3 ] && ls /usr/lib/x86_64-linux-gnu/libns3-core.so >/dev/null 2>&1 || need+=(libns3-dev)
command -v g++ >/dev/null || need+=(g++)
[ -x /usr/bin/time ] || need+=(time)
command -v jq >/dev/null || need+=(jq)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >&2
fi
NS3_VERSION="$(dpkg-query -W -f='${Version}' libns3-dev 2>/dev/null || echo unknown)"

# --- builds ------------------------------------------------------------------------------
# Debian's ns3-*.pc files list libgsl.so, which only libgsl-dev provides, and carry a stray
# "-I/usr;": link the six libraries directly (-lns3-core etc.; the sonames are
# libns3-core.so.37 and so on for 3.37).
NS3_LIBS="-lns3-applications -lns3-point-to-point -lns3-traffic-control -lns3-internet -lns3-network -lns3-core"
if [ ! -x "$OUT/dumbbell" ] || [ "$HERE/dumbbell.cc" -nt "$OUT/dumbbell" ]; then
  echo "building dumbbell (ns-3 $NS3_VERSION)..." >&2
  g++ -O2 -std=c++17 -o "$OUT/dumbbell" "$HERE/dumbbell.cc" $NS3_LIBS
fi
echo "building ackclock (release)..." >&2
(cd "$ROOT" && cargo build --release -p ackclock >&2)
# Run a private copy, so a concurrent rebuild of target/ cannot swap it mid-benchmark.
cp "$ROOT/target/release/ackclock" "$OUT/ackclock"

# --- runs --------------------------------------------------------------------------------
now_ns() { date +%s%N; }
rss_kb() { awk -F': ' '/Maximum resident set size/ {print $2}' "$1"; }
cpu_s() { awk -F': ' '/User time|System time/ {t += $2} END {printf "%.2f", t}' "$1"; }
check_exit() {
  local st
  st="$(awk -F': ' '/Exit status/ {print $2}' "$1")"
  if [ "$st" != 0 ]; then
    echo "$2 failed (exit status ${st:-?}); see $1" >&2
    exit 1
  fi
}

RAW="$OUT/raw.tsv"
printf 'round\tscenario\tsim\twall_s\tloop_wall_s\trss_kb\tbottleneck_tx\tdrops\tbytes_delivered\tcpu_s\tload1\n' > "$RAW"

run_ackclock() { # round scenario
  local r=$1 s=$2 d="$OUT/ackclock-$2" t0 t1 wall tx drops bytes loop
  rm -rf "$d"
  t0=$(now_ns)
  /usr/bin/time -v -o "$OUT/time-ackclock-$s.txt" \
    "$OUT/ackclock" sim "${TOML[$s]}" --out "$d" --no-plots > "$OUT/stdout-ackclock-$s.txt" || true
  t1=$(now_ns)
  check_exit "$OUT/time-ackclock-$s.txt" "ackclock sim ${TOML[$s]}"
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", (b - a) / 1e9}')
  loop=$(sed -n 's/.* events in \([0-9.]*\) s wall.*/\1/p' "$OUT/stdout-ackclock-$s.txt")
  tx=$(jq '[.links[] | select(.name == "gw_left-gw_right")][0].packets' "$d/summary.json")
  drops=$(jq '[.links[] | select(.name == "gw_left-gw_right")][0].queue_drops' "$d/summary.json")
  bytes=$(jq '[.flows[].bytes_delivered] | add' "$d/summary.json")
  printf '%s\t%s\tackclock\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$s" "$wall" "${loop:-NA}" \
    "$(rss_kb "$OUT/time-ackclock-$s.txt")" "$tx" "$drops" "$bytes" \
    "$(cpu_s "$OUT/time-ackclock-$s.txt")" "$(cut -d' ' -f1 /proc/loadavg)" >> "$RAW"
}

run_ns3() { # round scenario
  local r=$1 s=$2 t0 t1 wall line kv
  t0=$(now_ns)
  # shellcheck disable=SC2086
  /usr/bin/time -v -o "$OUT/time-ns3-$s.txt" \
    "$OUT/dumbbell" ${NS3ARGS[$s]} > "$OUT/stdout-ns3-$s.txt" || true
  t1=$(now_ns)
  check_exit "$OUT/time-ns3-$s.txt" "dumbbell ${NS3ARGS[$s]}"
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", (b - a) / 1e9}')
  line=$(grep '^ns3 ' "$OUT/stdout-ns3-$s.txt")
  kv() { tr ' ' '\n' <<< "$line" | sed -n "s/^$1=//p"; }
  printf '%s\t%s\tns-3\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$s" "$wall" "$(kv run_wall_s)" \
    "$(rss_kb "$OUT/time-ns3-$s.txt")" "$(kv bottleneck_tx_pkts)" "$(kv bottleneck_drops)" \
    "$(kv bytes_delivered)" "$(cpu_s "$OUT/time-ns3-$s.txt")" "$(cut -d' ' -f1 /proc/loadavg)" >> "$RAW"
}

for r in $(seq 1 "$RUNS"); do
  for s in a b; do
    echo "round $r/$RUNS, scenario ($s): ackclock..." >&2
    run_ackclock "$r" "$s"
    echo "round $r/$RUNS, scenario ($s): ns-3..." >&2
    run_ns3 "$r" "$s"
  done
done

# --- table -------------------------------------------------------------------------------
median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
col() { # scenario sim column -> values, one a line
  awk -F'\t' -v s="$1" -v m="$2" -v c="$3" 'NR > 1 && $2 == s && $3 == m {print $c}' "$RAW"
}

echo
echo "ns-3 $NS3_VERSION (Debian libns3-dev), ackclock $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'), $RUNS rounds, medians; $(nproc) cores, load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| scenario | simulator | wall (s) | of which event loop (s) | CPU user+sys (s) | peak RSS (MiB) | bottleneck pkts | pkts/wall s | goodput (Mb/s) | drops | drop rate | speedup, wall (CPU) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
declare -A W G C
for s in a b; do
  for m in ackclock ns-3; do
    wall=$(col $s $m 4 | median)
    loop=$(col $s $m 5 | grep -v NA | median || true)
    rss=$(col $s $m 6 | median)
    cpu=$(col $s $m 10 | median)
    C[$s$m]=$cpu
    # The simulations are deterministic: the counters are the same every round.
    if [ "$(col $s $m 7 | sort -u | wc -l)" != 1 ] || [ "$(col $s $m 9 | sort -u | wc -l)" != 1 ]; then
      echo "warning: $m ($s) counters differ between rounds; see $RAW" >&2
    fi
    tx=$(col $s $m 7 | median)
    drops=$(col $s $m 8 | median)
    bytes=$(col $s $m 9 | median)
    W[$s$m]=$wall
    G[$s$m]=$(awk -v b="$bytes" -v d="${DURATION[$s]}" 'BEGIN {printf "%.6f", b * 8 / d / 1e6}')
    if [ "$m" = ns-3 ]; then
      speed=$(awk -v n="$wall" -v a="${W[${s}ackclock]}" -v nc="$cpu" -v ac="${C[${s}ackclock]}" \
        'BEGIN {printf "ackclock %.1fx (%s) faster", n / a, (ac > 0 ? sprintf("%.1fx", nc / ac) : "n/a")}')
    else
      speed=""
    fi
    awk -v s="$s" -v m="$m" -v w="$wall" -v l="${loop:-}" -v c="$cpu" -v r="$rss" -v tx="$tx" \
      -v dr="$drops" -v g="${G[$s$m]}" -v sp="$speed" 'BEGIN {
        printf "| (%s) | %s | %.3f | %s | %.2f | %.1f | %d | %.0f | %.4f | %d | %.2f %% | %s |\n",
          s, m, w, (l == "" ? "n/a" : sprintf("%.2f", l)), c, r / 1024, tx, tx / w, g, dr,
          100 * dr / (tx + dr), sp }'
  done
done
echo
for s in a b; do
  awk -v s="$s" -v a="${W[${s}ackclock]}" -v n="${W[${s}ns-3]}" -v ac="${C[${s}ackclock]}" \
    -v nc="${C[${s}ns-3]}" 'BEGIN {
    x = n / a; printf "(%s) speed: ackclock %.1fx faster than ns-3 in wall time (%s in CPU time): target >= 10x %s\n",
      s, x, (ac > 0 ? sprintf("%.1fx", nc / ac) : "n/a"), (x >= 10 ? "met" : "NOT met") }'
  awk -v s="$s" -v a="${G[${s}ackclock]}" -v n="${G[${s}ns-3]}" 'BEGIN {
    d = 100 * (a - n) / n; printf "(%s) goodput: ackclock %.4f Mb/s, ns-3 %.4f Mb/s, difference %+.2f %%%s\n", s, a, n, d,
      (s == "a" ? ((d < 5 && d > -5) ? ": target within 5 % met" : ": target within 5 % NOT met") : "") }'
done
echo
echo "raw per-round figures: $RAW"
