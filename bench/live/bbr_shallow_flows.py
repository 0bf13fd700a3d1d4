#!/usr/bin/env python3
"""Many BBR flows through a shallow buffer (issue 27, google/bbr's nsperf `shallow` test):
N Linux-BBR flows, then N ackclock-BBR flows, through the same `ackclock emulate` path, to
check what the simulator shows (scenarios/bbr_shallow.toml): the share of each flow, the
total, and the retransmissions.

    sudo bench/live/bbr_shallow_flows.py [--flows 10] [--secs 20] [--runs 2] [--cc bbr]

The path: 100 Mbit/s, RTT 40 ms, a drop-tail buffer of 7 packets (2% of the BDP). Linux's
flows come from one Python process (a thread per socket, TCP_CONGESTION "bbr", started 10 ms
apart); ackclock's from `ackclock stream -P N --preset linux --cc bbr`. The receiver is a
socat sink in the right namespace (Linux). From the emulator's pcap of its left device, per
flow: the bytes acknowledged (the highest cumulative ACK) and the data packets sent more
than once; over the flows: the total goodput, Jain's fairness index of the bytes, the
smallest and largest share. Every run prints one JSON line; the summary prints medians.

Needs root, socat, python3. Not a CI test.
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

from emulated import BIN, PORT, RIGHT_ADDR, Emulator, require_root_and_tools, sh, tcp_packets

SENDER = r"""
import socket, sys, threading, time
host, secs, cc, n = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
end = time.monotonic() + secs
def flow():
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    s.connect((host, %d))
    buf = b"x" * 65536
    while time.monotonic() < end:
        s.sendall(buf)
    s.shutdown(socket.SHUT_WR)
    while s.recv(65536):
        pass
ts = []
for _ in range(n):
    t = threading.Thread(target=flow)
    t.start()
    ts.append(t)
    time.sleep(0.01)
for t in ts:
    t.join()
""" % PORT

PATH = ["--rate", "100mbit", "--delay", "20ms", "--queue", "droptail:7"]


def per_flow(pcap):
    """Per source port: (bytes cumulatively acknowledged, data packets resent, first SYN
    time, last ACK time)."""
    isn, acked, sent, resent, first, last = {}, {}, {}, {}, {}, {}
    for t, sport, dport, seq, ack, flags, plen, _ in tcp_packets(pcap):
        if dport == PORT:
            if flags & 0x02:
                isn.setdefault(sport, seq)
                first.setdefault(sport, t)
                continue
            if sport not in isn or plen <= 0:
                continue
            end = (seq - isn[sport] - 1 + plen) % 2**32
            if end <= sent.get(sport, 0):
                resent[sport] = resent.get(sport, 0) + 1
            else:
                sent[sport] = end
        elif sport == PORT and flags & 0x10 and dport in isn:
            a = (ack - isn[dport] - 1) % 2**32
            if a < 2**31 and a > acked.get(dport, 0):
                acked[dport] = a
                last[dport] = t
    return {p: (acked.get(p, 0), resent.get(p, 0), first[p], last.get(p, first[p]))
            for p in isn}


def jain(xs):
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if any(xs) else 0.0


def run_one(tmp, tag, stack, flows, secs, cc):
    emu = Emulator(tmp, tag, PATH, prefix="bs")
    try:
        limit = str(int(30 + secs * 3))
        if stack == "linux":
            sh(["ip", "netns", "exec", emu.left, "timeout", limit, sys.executable, "-c",
                SENDER, RIGHT_ADDR, str(secs), cc, str(flows)])
        else:
            sh(["ip", "netns", "exec", emu.left, "timeout", limit, BIN, "stream",
                "--connect", f"{RIGHT_ADDR}:{PORT}", "--json", "--preset", "linux",
                "--cc", cc, "--time", f"{secs}s", "-P", str(flows)])
        time.sleep(0.2)
    finally:
        emu.stop()
    f = per_flow(emu.pcap)
    qd, ld = emu.drops()
    os.remove(emu.pcap)
    got = [v[0] for v in f.values()]
    start = min(v[2] for v in f.values())
    end = max(v[3] for v in f.values())
    total = sum(got)
    r = {"stack": stack, "flows_seen": len(f), "total_mbps": total * 8 / (end - start) / 1e6,
         "jain": jain(got), "min_share": min(got) / total if total else 0,
         "max_share": max(got) / total if total else 0,
         "resent_pkts": sum(v[1] for v in f.values()), "queue_drops": qd,
         "per_flow_mb": sorted(round(g / 1e6, 1) for g in got)}
    print(json.dumps({"tag": tag, **r}), flush=True)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flows", type=int, default=10)
    ap.add_argument("--secs", type=float, default=20)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--cc", default="bbr", help="the congestion control of both stacks")
    a = ap.parse_args()
    require_root_and_tools()
    tmp = tempfile.mkdtemp(prefix="bbr-shallow-")
    rows, n = [], 0
    try:
        for stack in ["linux", "ackclock"]:
            rs = []
            for _ in range(a.runs):
                n += 1
                rs.append(run_one(tmp, f"s{n}", stack, a.flows, a.secs, a.cc))
            rows.append((stack, rs))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nmedians of {a.runs} runs of {a.secs:g} s, {a.flows} flows, --cc {a.cc}\n")
    print("| stack | total (Mbit/s) | Jain | smallest share | largest share | resent pkts "
          "| queue drops |")
    print("|---|---|---|---|---|---|---|")
    for stack, rs in rows:
        m = {k: statistics.median(r[k] for r in rs)
             for k in ["total_mbps", "jain", "min_share", "max_share", "resent_pkts",
                       "queue_drops"]}
        print(f"| {stack} | {m['total_mbps']:.1f} | {m['jain']:.2f} | {m['min_share']:.3f} "
              f"| {m['max_share']:.3f} | {m['resent_pkts']:g} | {m['queue_drops']:g} |")


if __name__ == "__main__":
    main()
