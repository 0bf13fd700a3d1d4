#!/usr/bin/env python3
"""Loss recovery against Linux 6.x on one emulated path (issue 26): Linux-to-Linux and
ackclock (--preset linux) to Linux, side by side, through `ackclock emulate`.

    sudo bench/live/rack_vs_linux.py [--runs 5] [--bulk-runs 3] [--bulk-secs 8]
                                     [--rate 50mbit] [--delay 15ms] [--queue droptail:100]

Two cases, each run in fresh namespaces (a fresh emulator per run):

- tail: a short transfer of 30 full segments (30 x 1448 bytes) whose last K data segments
  (K = 1, 2, 3) are dropped once, by the emulator's scripted drop (`--config` with
  `impairments.scripted = [{ kind = "data_segment", dst_port = 5001, nth = [...] }]` on
  the left-to-right direction; counting includes retransmissions, so the first
  transmissions of the last K segments are the ones lost). Completion time: from the
  sender's SYN to the first ACK that covers the last data byte, both as seen on the
  emulator's left device (its pcap). Stacks: Linux (a Python sender: one sendall, then
  shutdown), ackclock `--preset linux`, and ackclock `--preset linux --loss-detection
  rack` (no tail loss probe: the RTO-based reference).
- reorder: a bulk transfer of --bulk-secs through `--reorder P:D` (both directions).
  Goodput: bytes delivered over the time from the SYN to the ACK of the last byte (pcap).

Retransmissions and spurious retransmissions (D-SACK) come from `ackclock analyze --json`
on the same pcap for both stacks (the sender's direction). Linux's own counters (its
namespace's /proc/net/netstat: TCPLossProbes, TCPSpuriousRTOs, TCPDSACKUndo, ...) and
ackclock's (`stream --json`) are printed beside them. The receiver is a socat sink in the
right namespace (Linux, its defaults). Every run prints one JSON line; the summary prints
medians as Markdown tables.

Needs root, socat, python3. Not a CI test (the live test is crates/cli/tests/live_rack.rs).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from emulated import (BIN, PORT, RIGHT_ADDR, Emulator, analyze, med, pcap_completion,
                      require_root_and_tools, sh)

MSS = 1448
SEGS = 30
# RACK_KEEP=1 keeps the pcaps (their directory is printed at the end).
KEEP = os.environ.get("RACK_KEEP") == "1"

SENDER = r"""
import socket, sys, time
host, n, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
s = socket.create_connection((host, %d))
if n:
    s.sendall(b"x" * n)
else:
    buf, end = b"x" * 65536, time.monotonic() + secs
    while time.monotonic() < end:
        s.sendall(buf)
s.shutdown(socket.SHUT_WR)
while s.recv(65536):
    pass
""" % PORT


def run_one(tmp, tag, stack, flags, config, nbytes, secs):
    emu = Emulator(tmp, tag, flags, config)
    try:
        own = {}
        limit = 30 + secs * 3
        if stack == "linux":
            sh(["ip", "netns", "exec", emu.left, "timeout", str(limit), sys.executable, "-c",
                SENDER, RIGHT_ADDR, str(nbytes), str(secs)])
            own = emu.linux_counters()
        else:
            extra = ["--bytes", str(nbytes)] if nbytes else ["--time", f"{secs}s"]
            preset = ["--preset", "linux"] + (["--loss-detection", "rack"] if stack == "ackclock-rack" else [])
            out = sh(["ip", "netns", "exec", emu.left, "timeout", str(limit), BIN, "stream",
                      "--connect", f"{RIGHT_ADDR}:{PORT}", "--json"] + preset + extra)
            j = json.loads(out.strip().splitlines()[-1])
            own = {k: j[k] for k in ["retransmitted_segs", "recoveries", "fast_retransmits", "timeouts",
                                      "tlp_probes", "tlp_recoveries", "spurious_rtos",
                                      "spurious_recoveries", "undos", "dsacks_in",
                                      "rack_reorder_timeouts"]}
        time.sleep(0.2)
    finally:
        emu.stop()
    done, top = pcap_completion(emu.pcap, nbytes or None)
    qd, ld = emu.drops()
    a = analyze(emu.pcap)
    if not KEEP:
        os.remove(emu.pcap)
    r = {"stack": stack, "bytes": top, "completion_s": done,
         "goodput_mbps": (top * 8 / done / 1e6) if done else None, **a, "queue_drops": qd, "loss_drops": ld, "own": own}
    print(json.dumps({"tag": tag, **r}), flush=True)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bulk-runs", type=int, default=3)
    ap.add_argument("--bulk-secs", type=float, default=8)
    ap.add_argument("--rate", default="50mbit")
    ap.add_argument("--delay", default="15ms")
    ap.add_argument("--queue", default="droptail:100")
    ap.add_argument("--tails", default="1,2,3")
    ap.add_argument("--reorders", default="1%:5ms,3%:10ms")
    ap.add_argument("--skip-tail", action="store_true")
    ap.add_argument("--skip-reorder", action="store_true")
    a = ap.parse_args()
    require_root_and_tools()
    path = ["--rate", a.rate, "--delay", a.delay, "--queue", a.queue]
    tmp = tempfile.mkdtemp(prefix="rack-vs-linux-")
    rows = []
    n = 0
    try:
        if not a.skip_tail:
            for k in [int(x) for x in a.tails.split(",")]:
                nth = list(range(SEGS - k + 1, SEGS + 1))
                cfg = ("[left_to_right]\nimpairments = { scripted = [ { kind = \"data_segment\", "
                       f"dst_port = {PORT}, nth = {nth} }} ] }}\n")
                for stack in ["linux", "ackclock", "ackclock-rack"]:
                    rs = []
                    for _ in range(a.runs):
                        n += 1
                        rs.append(run_one(tmp, f"t{n}", stack, path, cfg, SEGS * MSS, 0))
                    rows.append((f"tail, last {k} dropped", stack, rs))
        if not a.skip_reorder:
            for ro in a.reorders.split(","):
                for stack in ["linux", "ackclock"]:
                    rs = []
                    for _ in range(a.bulk_runs):
                        n += 1
                        rs.append(run_one(tmp, f"r{n}", stack, path + ["--reorder", ro], None,
                                          0, a.bulk_secs))
                    rows.append((f"reorder {ro}", stack, rs))
    finally:
        if KEEP:
            print(f"pcaps kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"\npath: {a.rate}, one-way {a.delay}, {a.queue}; medians of {a.runs} (tail) / "
          f"{a.bulk_runs} (reorder) runs\n")
    print("| case | stack | completion / goodput | retransmitted | spurious (D-SACK) "
          "| path drops (queue + loss) | runs: completion (ms) or goodput (Mbit/s) |")
    print("|---|---|---|---|---|---|---|")
    for case, stack, rs in rows:
        if case.startswith("tail"):
            m = f"{med(rs, 'completion_s') * 1e3:.0f} ms"
            each = ", ".join(f"{r['completion_s'] * 1e3:.0f}" if r["completion_s"] else "-" for r in rs)
        else:
            m = f"{med(rs, 'goodput_mbps'):.1f} Mbit/s"
            each = ", ".join(f"{r['goodput_mbps']:.1f}" if r["goodput_mbps"] else "-" for r in rs)
        print(f"| {case} | {stack} | {m} | {med(rs, 'rexmt'):g} | {med(rs, 'spurious'):g} "
              f"| {med(rs, 'queue_drops'):g} + {med(rs, 'loss_drops'):g} | {each} |")


if __name__ == "__main__":
    main()
