#!/usr/bin/env bash
# Side by side on the same emulated path: Linux reno vs ackclock newreno, Linux cubic vs
# ackclock cubic, at 0% and 1% loss; goodput and retransmissions, printed as a table.
#
#   sudo bench/live/side_by_side.sh [--time SECS] [--runs N] [--rate 10mbit] [--delay 25ms]
#                                   [--queue droptail:64] [--losses "0 1%"]
#
# The path: `ackclock emulate` between two namespaces it creates, --rate each way, --delay
# one way (so RTT = 2 x delay), a drop-tail queue of 64 packets, and random loss on the data
# direction only (left to right; the ACK path is clean). Linux runs iperf3 (-C reno or
# cubic) from the left namespace to an iperf3 server in the right one; ackclock runs
# `ackclock stream` on its own TUN device behind the left namespace (198.18.0.2, forwarded by
# the left kernel) to a socat sink in the right one. Every flow runs alone on the path.
#
# Needs root, iperf3, socat, python3 (for the JSON). Not a CI test: timing on a shared
# machine varies; the figures go to BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

TIME=20
RUNS=1
RATE=10mbit
DELAY=25ms
QUEUE=droptail:64
LOSSES="0 1%"
while [ $# -gt 0 ]; do
    case "$1" in
        --time) TIME=$2; shift 2 ;;
        --runs) RUNS=$2; shift 2 ;;
        --rate) RATE=$2; shift 2 ;;
        --delay) DELAY=$2; shift 2 ;;
        --queue) QUEUE=$2; shift 2 ;;
        --losses) LOSSES=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

[ "$(id -u)" -eq 0 ] || { echo "run as root: it creates namespaces and TUN devices" >&2; exit 1; }
for t in iperf3 socat python3 ip; do
    command -v "$t" >/dev/null || { echo "missing $t (apt-get install iperf3 socat iproute2 python3)" >&2; exit 1; }
done
cargo build --release -q -p ackclock
BIN=$PWD/target/release/ackclock

L=ackss-left-$$
R=ackss-right-$$
EMU_PID=
TMP=$(mktemp -d)
cleanup() {
    [ -n "$EMU_PID" ] && kill "$EMU_PID" 2>/dev/null && wait "$EMU_PID" 2>/dev/null || true
    for n in "$L" "$R"; do ip netns del "$n" 2>/dev/null || true; done
    rm -rf "$TMP"
}
trap cleanup EXIT

start_emulator() { # loss
    local loss=$1
    "$BIN" emulate --rate "$RATE" --delay "$DELAY" --queue "$QUEUE" --loss "$loss" \
        --reverse-loss 0 --left "$L" --right "$R" --seed $RANDOM >"$TMP/emu.out" 2>&1 &
    EMU_PID=$!
    for _ in $(seq 100); do grep -q ready "$TMP/emu.out" 2>/dev/null && return 0; sleep 0.1; done
    echo "emulator did not start:" >&2; cat "$TMP/emu.out" >&2; exit 1
}
stop_emulator() {
    kill "$EMU_PID"; wait "$EMU_PID" 2>/dev/null || true; EMU_PID=
}

linux_run() { # cc -> "goodput_bps retrans_segs"
    local cc=$1
    ip netns exec "$R" timeout $((TIME + 30)) iperf3 -s -1 >/dev/null 2>&1 &
    local srv=$!
    sleep 0.3
    ip netns exec "$L" timeout $((TIME + 30)) iperf3 -c 198.18.2.1 -C "$cc" -t "$TIME" -J >"$TMP/iperf.json" || true
    wait "$srv" 2>/dev/null || true
    python3 - "$TMP/iperf.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
e = j["end"]
print(e["sum_received"]["bits_per_second"], e["sum_sent"].get("retransmits", 0),
      e["sum_sent"]["bytes"] // 1448)
EOF
}

ackclock_run() { # preset -> "goodput_bps retrans_segs data_segs"
    local preset=$1
    ip netns exec "$R" timeout $((TIME + 30)) socat -u TCP-LISTEN:5001,reuseaddr OPEN:/dev/null &
    local srv=$!
    sleep 0.3
    ip netns exec "$L" timeout $((TIME + 30)) "$BIN" stream --connect 198.18.2.1:5001 \
        --time "${TIME}s" --preset "$preset" --wscale --sndbuf 1M --rcvbuf 1M --json >"$TMP/ack.out" 2>&1 || true
    wait "$srv" 2>/dev/null || true
    tail -n 1 "$TMP/ack.out" | python3 -c '
import json, sys
j = json.loads(sys.stdin.read())
print(j["goodput_bps"], j["retransmitted_segs"], int(j["bytes"]) // max(1, j["snd_mss"]))'
}

printf "\npath: %s, one-way delay %s (RTT 2 x %s), queue %s, loss on the data direction; %s s per run, %s run(s)\n\n" \
    "$RATE" "$DELAY" "$DELAY" "$QUEUE" "$TIME" "$RUNS"
printf "| loss | stack | goodput (Mbit/s) | retransmitted segments | retransmissions / data segments |\n"
printf "|---|---|---|---|---|\n"
for loss in $LOSSES; do
    start_emulator "$loss"
    for stack in "Linux reno" "ackclock newreno" "Linux cubic" "ackclock cubic"; do
        tot_g=0; tot_r=0; tot_d=0
        for _ in $(seq "$RUNS"); do
            case "$stack" in
                "Linux reno") out=$(linux_run reno) ;;
                "Linux cubic") out=$(linux_run cubic) ;;
                "ackclock newreno") out=$(ackclock_run newreno) ;;
                "ackclock cubic") out=$(ackclock_run cubic) ;;
            esac
            read -r g r d <<<"$out"
            tot_g=$(python3 -c "print($tot_g + $g)")
            tot_r=$((tot_r + r)); tot_d=$((tot_d + d))
        done
        python3 -c "
g = $tot_g / $RUNS / 1e6
r = $tot_r / $RUNS
print(f'| $loss | $stack | {g:.2f} | {r:.0f} | {100.0 * $tot_r / max(1, $tot_d):.2f}% |')"
    done
    stop_emulator
done
