#!/usr/bin/env bash
# Live-mode performance: ackclock <-> Linux over a TUN device, beside (a) kernel <-> kernel
# TCP over a veth pair and (b) a bare TUN read/write loop that moves the same TCP packets
# with no TCP of its own (one packet per read or write system call), at MTU 1500 and 9000,
# all in the same run.
#
#   sudo bench/live/perf.sh [--time SECS] [--mtus "1500 9000"]
#
# Each line is one bulk transfer of SECS seconds in its own namespace(s):
#   veth       iperf3 client and server in two namespaces joined by a veth pair (with the
#              kernel's segmentation offloads, as veth has them by default)
#   tun-fwd    (b): iperf3 client and server in two namespaces joined through
#              `ackclock emulate` with no rate, delay or loss: each packet is read from one
#              TUN device and written to the other, nothing else
#   ackclock   `ackclock stream` (send: TCP_STREAM, recv: TCP_MAERTS) on a TUN device, the
#              Linux side a socat sink or source in the same namespace
# Goodput is application bytes per second (iperf3's receiver figure; ackclock's report).
# CPU is the user + system time of every process of the transfer (both ends, and the
# forwarder in (b)) per KB (1024 bytes) moved, so the rows are comparable; it includes the
# kernel's TCP work done in those processes' system calls (a TUN write runs the receiving
# stack there) but not softirq work that lands in ksoftirqd. Whole-machine CPU is not used:
# the machine is shared. For ackclock its own process CPU per KB (netperf's service demand)
# is printed too.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

TIME=10
MTUS="1500 9000"
while [ $# -gt 0 ]; do
    case "$1" in
        --time) TIME=$2; shift 2 ;;
        --mtus) MTUS=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" -eq 0 ] || { echo "run as root" >&2; exit 1; }
for t in iperf3 socat python3 ip; do
    command -v "$t" >/dev/null || { echo "missing $t" >&2; exit 1; }
done
cargo build --release -q -p ackclock
BIN=$PWD/target/release/ackclock
TMP=$(mktemp -d)
NSS=()
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for n in "${NSS[@]}"; do ip netns del "$n" 2>/dev/null || true; done
    rm -rf "$TMP"
}
trap cleanup EXIT
HZ=$(getconf CLK_TCK)

cat >"$TMP/row.py" <<'PY'
import sys
name, mtu, b, s, c = sys.argv[1:6]
p = sys.argv[6] if len(sys.argv) > 6 else ""
b, s, c = int(float(b)), float(s), float(c)
kb = b / 1024
g = b * 8 / s / 1e6
proc = f"{float(p) * 1e6 / kb:.3f}" if p and kb else "-"
print(f"| {name} | {mtu} | {g:.0f} | {c * 1e6 / kb:.3f} | {proc} |")
PY
row() { python3 "$TMP/row.py" "$@"; }

cat >"$TMP/iperf.py" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
e = j["end"]["sum_received"]
u = j["end"]["cpu_utilization_percent"]
secs = j["end"]["sum_sent"]["seconds"]
print(e["bytes"], e["seconds"], (u["host_total"] + u["remote_total"]) / 100 * secs)
PY
iperf_pair() { # ns_client ns_server server_addr -> "bytes secs cpu_s(client+server)"
    local c=$1 s=$2 addr=$3
    ip netns exec "$s" timeout $((TIME + 20)) iperf3 -s -1 >/dev/null 2>&1 &
    local srv=$!
    sleep 0.3
    ip netns exec "$c" timeout $((TIME + 20)) iperf3 -c "$addr" -t "$TIME" -J >"$TMP/i.json"
    wait "$srv" 2>/dev/null || true
    python3 "$TMP/iperf.py" "$TMP/i.json"
}

printf "\n%s s per transfer; load average before: %s\n\n" "$TIME" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf "| path | MTU | goodput (Mbit/s) | CPU, all processes (us/KB) | ackclock process CPU (us/KB) |\n"
printf "|---|---|---|---|---|\n"
for MTU in $MTUS; do
    MSS=$((MTU - 40))
    # (a) kernel <-> kernel over veth.
    A=ackpa-$$-$MTU; B=ackpb-$$-$MTU; NSS+=("$A" "$B")
    ip netns add "$A"; ip netns add "$B"
    ip link add "va$$" netns "$A" type veth peer name "vb$$" netns "$B"
    ip -n "$A" addr add 198.18.8.1/24 dev "va$$"; ip -n "$B" addr add 198.18.8.2/24 dev "vb$$"
    ip -n "$A" link set "va$$" mtu "$MTU" up; ip -n "$B" link set "vb$$" mtu "$MTU" up
    ip -n "$A" link set lo up; ip -n "$B" link set lo up
    sleep 0.2
    read -r bytes secs cpu < <(iperf_pair "$A" "$B" 198.18.8.2)
    row "(a) kernel <-> kernel, veth" "$MTU" "$bytes" "$secs" "$cpu"
    ip netns del "$A"; ip netns del "$B"

    # (b) the bare TUN forwarder.
    L=ackpl-$$-$MTU; R=ackpr-$$-$MTU; NSS+=("$L" "$R")
    "$BIN" emulate --left "$L" --right "$R" --mtu "$MTU" --rt-priority 0 --json >"$TMP/emu.out" 2>&1 &
    EMU=$!; PIDS+=("$EMU")
    for _ in $(seq 100); do grep -q ready "$TMP/emu.out" && break; sleep 0.1; done
    read -r bytes secs cpu < <(iperf_pair "$L" "$R" 198.18.2.1)
    kill "$EMU"; wait "$EMU" 2>/dev/null || true
    # The forwarder's CPU over its whole life (it sleeps outside the transfer).
    emu_cpu=$(tail -n 1 "$TMP/emu.out" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["cpu_s"])')
    row "(b) bare TUN read/write loop (kernel TCP through it)" "$MTU" "$bytes" "$secs" \
        "$(python3 -c "print($cpu + $emu_cpu)")"

    # ackclock <-> Linux, both directions.
    N=ackpn-$$-$MTU; NSS+=("$N")
    ip netns add "$N"; ip -n "$N" link set lo up
    for mode in send recv; do
        # socat's CPU: its shell's cutime + cstime once socat has been waited for.
        if [ "$mode" = send ]; then
            linux="socat -u TCP-LISTEN:5001,reuseaddr OPEN:/dev/null"
        else
            linux="socat -u OPEN:/dev/zero TCP-LISTEN:5001,reuseaddr,sndbuf=4194304"
        fi
        ip netns exec "$N" timeout $((TIME + 20)) \
            sh -c "$linux 2>/dev/null; awk '{print \$16 + \$17}' /proc/\$\$/stat" >"$TMP/socat.cpu" &
        SRV=$!
        sleep 0.3
        ip netns exec "$N" "$BIN" stream --connect 198.18.0.1:5001 --mode "$mode" --time "${TIME}s" \
            --preset modern --mtu "$MTU" --mss "$MSS" --sndbuf 4M --rcvbuf 4M --json >"$TMP/a.out" 2>&1 || true
        wait "$SRV" 2>/dev/null || true
        socat_cpu=$(python3 -c "print(int(open('$TMP/socat.cpu').read().strip() or 0) / $HZ)")
        read -r bytes secs cpu < <(tail -n 1 "$TMP/a.out" | python3 -c '
import json, sys
j = json.loads(sys.stdin.read())
print(j["bytes"], j["elapsed_s"], j["cpu_s"])')
        name="ackclock -> Linux (TCP_STREAM)"
        [ "$mode" = recv ] && name="Linux -> ackclock (TCP_MAERTS)"
        row "$name" "$MTU" "$bytes" "$secs" "$(python3 -c "print($cpu + $socat_cpu)")" "$cpu"
    done
    ip netns del "$N"
done
printf "\nload average after: %s\n" "$(cut -d' ' -f1-3 /proc/loadavg)"
