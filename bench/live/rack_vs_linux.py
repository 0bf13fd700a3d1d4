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
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.join(ROOT, "target", "release", "ackclock")
MSS = 1448
SEGS = 30
PORT = 5001
RIGHT_ADDR = "198.18.2.1"
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

LINUX_COUNTERS = [
    "TcpRetransSegs", "TcpExtTCPLossProbes", "TcpExtTCPLossProbeRecovery",
    "TcpExtTCPTimeouts", "TcpExtTCPSpuriousRTOs", "TcpExtTCPDSACKUndo", "TcpExtTCPLossUndo",
    "TcpExtTCPSackRecoveryFail", "TcpExtTCPDSACKRecv", "TcpExtTCPSACKReorder",
    "TcpExtTCPFastRetrans", "TcpExtTCPSackRecovery", "TcpExtTCPFullUndo", "TcpExtTCPPartialUndo",
]


def sh(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


class Emulator:
    """`ackclock emulate` between two fresh namespaces; stopped (SIGTERM, by PID) on exit."""

    def __init__(self, tmp, tag, flags, config=None):
        self.left, self.right = f"rkl{os.getpid()}{tag}", f"rkr{os.getpid()}{tag}"
        self.pcap = os.path.join(tmp, f"{tag}.pcap")
        self.out = open(os.path.join(tmp, f"{tag}.emu"), "w+")
        cmd = [BIN, "emulate", "--left", self.left, "--right", self.right, "--pcap", self.pcap,
               "--json"]
        if config:
            cfg = os.path.join(tmp, f"{tag}.toml")
            with open(cfg, "w") as f:
                f.write(config)
            cmd += ["--config", cfg]
        self.p = subprocess.Popen(cmd + flags, stdout=self.out, stderr=subprocess.STDOUT)
        end = time.monotonic() + 15
        while time.monotonic() < end:
            self.out.seek(0)
            if "ready" in self.out.read():
                break
            time.sleep(0.05)
        else:
            self.stop()
            raise RuntimeError("emulator did not start")
        # A freshly attached TUN device drops traffic for about 0.1 s.
        time.sleep(0.3)
        self.sink = subprocess.Popen(
            ["ip", "netns", "exec", self.right, "socat", "-u",
             f"TCP-LISTEN:{PORT},reuseaddr,fork", "OPEN:/dev/null"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.monotonic() + 5
        while f":{PORT}" not in sh(["ip", "netns", "exec", self.right, "ss", "-ltn"]):
            if time.monotonic() > end:
                raise RuntimeError("socat sink not listening")
            time.sleep(0.05)

    def stop(self):
        for p in [getattr(self, "sink", None), self.p]:
            if p and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for n in (self.left, self.right):
            if os.path.exists(f"/run/netns/{n}"):
                subprocess.run(["ip", "netns", "del", n], check=False)

    def drops(self):
        """Data-direction drops of the stopped emulator: (queue, loss incl. scripted)."""
        self.out.seek(0)
        j = json.loads([x for x in self.out.read().splitlines() if x.startswith("{")][-1])
        d = j["left_to_right"]
        return d["queue_drops"], d["loss_drops"]

    def linux_counters(self):
        text = sh(["ip", "netns", "exec", self.left, "cat", "/proc/net/netstat", "/proc/net/snmp"])
        lines = text.splitlines()
        vals = {}
        for h, v in zip(lines[0::2], lines[1::2]):
            hk, vk = h.split(), v.split()
            pre = hk[0].rstrip(":")
            for k, x in zip(hk[1:], vk[1:]):
                vals[pre + k] = int(x)
        return {k: vals.get(k, 0) for k in LINUX_COUNTERS}


def pcap_completion(path, total=None):
    """Seconds from the first SYN to port 5001 to the first ACK from it covering the last
    data byte, and the data bytes (the highest sequence sent, from the ISN)."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    scale = 1e-9 if magic == 0xA1B23C4D else 1e-6
    off, syn_t, isn, top, acks = 24, None, None, 0, []
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack("<IIII", data[off:off + 16])
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        t = sec + frac * scale
        if len(pkt) < 40 or pkt[0] >> 4 != 4 or pkt[9] != 6:
            continue
        ihl = (pkt[0] & 15) * 4
        tot = struct.unpack(">H", pkt[2:4])[0]
        sport, dport, seq, ack = struct.unpack(">HHII", pkt[ihl:ihl + 12])
        doff = (pkt[ihl + 12] >> 4) * 4
        flags = pkt[ihl + 13]
        plen = tot - ihl - doff
        if dport == PORT:
            if flags & 0x02 and syn_t is None:
                syn_t, isn = t, seq
            elif isn is not None and plen > 0:
                top = max(top, (seq + plen - isn - 1) % 2**32)
        elif sport == PORT and flags & 0x10 and isn is not None:
            acks.append((t, (ack - isn - 1) % 2**32))
    want = total if total is not None else top
    done = next((t for t, a in acks if a >= want and a < 2**31), None)
    return (done - syn_t if done is not None and syn_t is not None else None), top


def analyze(path):
    j = json.loads(sh([BIN, "analyze", "--json", "--no-figures", path]))
    for c in j["connections"]:
        for d in c["directions"]:
            if d["to"].endswith(f":{PORT}") and d["unique_bytes"] > 0:
                return {"rexmt": d["rexmt_pkts"], "spurious": d["spurious"]["total"],
                        "dsack": d["spurious"]["dsack"], "data_pkts": d["data_pkts"]}
    raise RuntimeError(f"no data connection in {path}")


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


def med(rs, k):
    v = [r[k] for r in rs if r[k] is not None]
    return statistics.median(v) if v else float("nan")


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
    if os.geteuid() != 0:
        sys.exit("run as root: it creates namespaces and TUN devices")
    for t in ["socat", "ip", "ss"]:
        if not shutil.which(t):
            sys.exit(f"missing {t}")
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
