#!/usr/bin/env python3
"""BBR against Linux's BBR on the same emulated path (issue 27): Linux-BBR-to-Linux and
ackclock-BBR-to-Linux, side by side, through `ackclock emulate`.

    sudo bench/live/bbr_vs_linux.py [--runs 3] [--secs 10] [--paths 1,2,3] [--cc bbr]
                                    [--stacks linux,ackclock]

Five paths (one-way delays; the RTT is twice); --paths picks (default 1,2,3):
  1. 50 Mbit/s, RTT 30 ms, a drop-tail buffer of 1 BDP (125 packets);
  2. 10 Mbit/s, RTT 100 ms, 1% random loss on the data direction, 1 BDP of buffer (84);
  3. 100 Mbit/s, RTT 10 ms, 10 BDP of buffer (834 packets);
  4. and 5. the BBR paper's random-loss path (repro experiment 21's fat pipe): 100 Mbit/s,
     RTT 100 ms, 1 BDP of buffer (834 packets), 5% (4) or 15% (5) random loss on the data
     direction.

Each run is a bulk transfer of --secs in fresh namespaces (a fresh emulator per run). The
sender is Linux (a Python sender with TCP_CONGESTION "bbr": the kernel's BBR v1, paced
internally) or ackclock (`stream --preset linux --cc bbr`); the receiver is a socat sink in
the right namespace (Linux, its defaults). From the emulator's pcap of its left device,
for both stacks alike: goodput (bytes over the time from the SYN to the ACK of the last
byte), the RTT of each segment sent once (first transmission to the first ACK covering
it: the path's delay plus the queue), its median and 95th percentile; retransmissions from
`ackclock analyze`. Every run prints one JSON line; the summary prints medians as a
Markdown table with ackclock/Linux ratios.

Needs root, socat, python3. Not a CI test (the live test is crates/cli/tests/live_bbr.rs).
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

from emulated import (BIN, PORT, RIGHT_ADDR, Emulator, analyze, med, pcap_completion,
                      pcap_rtts, require_root_and_tools, sh)

# BBR_KEEP=1 keeps the pcaps (their directory is printed at the end).
KEEP = os.environ.get("BBR_KEEP") == "1"

SENDER = r"""
import socket, sys, time
host, secs, cc = sys.argv[1], float(sys.argv[2]), sys.argv[3]
s = socket.socket()
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
s.connect((host, %d))
buf, end = b"x" * 65536, time.monotonic() + secs
while time.monotonic() < end:
    s.sendall(buf)
s.shutdown(socket.SHUT_WR)
while s.recv(65536):
    pass
""" % PORT

PATHS = {
    "1": ("50 Mbit/s, 30 ms, 1 BDP", ["--rate", "50mbit", "--delay", "15ms",
                                       "--queue", "droptail:125"]),
    "2": ("10 Mbit/s, 100 ms, 1% loss", ["--rate", "10mbit", "--delay", "50ms",
                                          "--queue", "droptail:84", "--loss", "1%",
                                          "--reverse-loss", "0"]),
    "3": ("100 Mbit/s, 10 ms, 10 BDP", ["--rate", "100mbit", "--delay", "5ms",
                                         "--queue", "droptail:834"]),
    # The BBR paper's random-loss path (repro experiment 21's fat pipe), at 5% and 15%.
    "4": ("100 Mbit/s, 100 ms, 5% loss", ["--rate", "100mbit", "--delay", "50ms",
                                           "--queue", "droptail:834", "--loss", "5%",
                                           "--reverse-loss", "0"]),
    "5": ("100 Mbit/s, 100 ms, 15% loss", ["--rate", "100mbit", "--delay", "50ms",
                                            "--queue", "droptail:834", "--loss", "15%",
                                            "--reverse-loss", "0"]),
}


def percentile(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p))] if v else None


def run_one(tmp, tag, stack, flags, secs, cc):
    emu = Emulator(tmp, tag, flags, prefix="bb")
    try:
        limit = str(int(30 + secs * 3))
        if stack == "linux":
            sh(["ip", "netns", "exec", emu.left, "timeout", limit, sys.executable, "-c",
                SENDER, RIGHT_ADDR, str(secs), cc])
            own = emu.linux_counters()
        else:
            out = sh(["ip", "netns", "exec", emu.left, "timeout", limit, BIN, "stream",
                      "--connect", f"{RIGHT_ADDR}:{PORT}", "--json", "--preset", "linux",
                      "--cc", cc, "--time", f"{secs}s"])
            j = json.loads(out.strip().splitlines()[-1])
            own = {k: j.get(k) for k in ["retransmitted_segs", "recoveries", "timeouts",
                                          "tlp_probes", "spurious_rtos", "undos"]}
        time.sleep(0.2)
    finally:
        emu.stop()
    done, top = pcap_completion(emu.pcap)
    rtts, _ = pcap_rtts(emu.pcap)
    qd, ld = emu.drops()
    a = analyze(emu.pcap)
    if not KEEP:
        os.remove(emu.pcap)
    r = {"stack": stack, "bytes": top, "seconds": done,
         "goodput_mbps": (top * 8 / done / 1e6) if done else None,
         "rtt_p50_ms": (percentile(rtts, 0.5) or 0) * 1e3,
         "rtt_p95_ms": (percentile(rtts, 0.95) or 0) * 1e3, "rtt_samples": len(rtts),
         **a, "queue_drops": qd, "loss_drops": ld, "own": own}
    print(json.dumps({"tag": tag, **r}), flush=True)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--secs", type=float, default=10)
    ap.add_argument("--paths", default="1,2,3")
    ap.add_argument("--cc", default="bbr", help="ackclock's --cc (Linux runs bbr always)")
    ap.add_argument("--stacks", default="linux,ackclock", help="which senders to run")
    a = ap.parse_args()
    require_root_and_tools()
    tmp = tempfile.mkdtemp(prefix="bbr-vs-linux-")
    rows = []
    n = 0
    try:
        for p in a.paths.split(","):
            name, flags = PATHS[p]
            for stack in a.stacks.split(","):
                rs = []
                for _ in range(a.runs):
                    n += 1
                    cc = "bbr" if stack == "linux" else a.cc
                    rs.append(run_one(tmp, f"p{p}n{n}", stack, flags, a.secs, cc))
                rows.append((name, stack, rs))
    finally:
        if KEEP:
            print(f"pcaps kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nmedians of {a.runs} runs of {a.secs:g} s; ackclock --cc {a.cc}, Linux bbr\n")
    print("| path | stack | goodput (Mbit/s) | RTT p50 (ms) | RTT p95 (ms) | retransmitted "
          "| path drops (queue + loss) | runs: goodput |")
    print("|---|---|---|---|---|---|---|---|")
    by = {}
    for name, stack, rs in rows:
        by[(name, stack)] = rs
        each = ", ".join(f"{r['goodput_mbps']:.1f}" if r["goodput_mbps"] else "-" for r in rs)
        print(f"| {name} | {stack} | {med(rs, 'goodput_mbps'):.1f} | {med(rs, 'rtt_p50_ms'):.1f} "
              f"| {med(rs, 'rtt_p95_ms'):.1f} | {med(rs, 'rexmt'):g} "
              f"| {med(rs, 'queue_drops'):g} + {med(rs, 'loss_drops'):g} | {each} |")
    print("\n| path | goodput ackclock/Linux | RTT p50 ackclock/Linux | RTT p95 ackclock/Linux |")
    print("|---|---|---|---|")
    for name, _ in [PATHS[p] for p in a.paths.split(",")]:
        if (name, "ackclock") not in by or (name, "linux") not in by:
            continue
        ours, theirs = by[(name, "ackclock")], by[(name, "linux")]
        ratio = [med(ours, k) / med(theirs, k) for k in ["goodput_mbps", "rtt_p50_ms", "rtt_p95_ms"]]
        print(f"| {name} | {ratio[0]:.2f} | {ratio[1]:.2f} | {ratio[2]:.2f} |")


if __name__ == "__main__":
    main()
