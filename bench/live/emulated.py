"""What the live benchmarks against Linux share (bench/live/rack_vs_linux.py,
bench/live/bbr_vs_linux.py): `ackclock emulate` between two fresh namespaces with a socat
sink on the right, the reading of its pcap (completion time, per-segment RTT), and
`ackclock analyze` on it. Needs root, socat and python3.
"""
import json
import os
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.join(ROOT, "target", "release", "ackclock")
PORT = 5001
RIGHT_ADDR = "198.18.2.1"

LINUX_COUNTERS = [
    "TcpRetransSegs", "TcpExtTCPLossProbes", "TcpExtTCPLossProbeRecovery",
    "TcpExtTCPTimeouts", "TcpExtTCPSpuriousRTOs", "TcpExtTCPDSACKUndo", "TcpExtTCPLossUndo",
    "TcpExtTCPSackRecoveryFail", "TcpExtTCPDSACKRecv", "TcpExtTCPSACKReorder",
    "TcpExtTCPFastRetrans", "TcpExtTCPSackRecovery", "TcpExtTCPFullUndo", "TcpExtTCPPartialUndo",
]


def require_root_and_tools():
    """Exits with a message unless run as root with socat, ip and ss on the PATH."""
    if os.geteuid() != 0:
        sys.exit("run as root: it creates namespaces and TUN devices")
    for t in ["socat", "ip", "ss"]:
        if not shutil.which(t):
            sys.exit(f"missing {t}")


def sh(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


class Emulator:
    """`ackclock emulate` between two fresh namespaces; stopped (SIGTERM, by PID) on exit."""

    def __init__(self, tmp, tag, flags, config=None, prefix="rk"):
        self.left = f"{prefix}l{os.getpid()}{tag}"
        self.right = f"{prefix}r{os.getpid()}{tag}"
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


def tcp_packets(path):
    """The TCP/IPv4 packets of a pcap file: (time in seconds, source port, destination
    port, seq, ack, flags, payload length, TCP option bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    scale = 1e-9 if magic == 0xA1B23C4D else 1e-6
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack("<IIII", data[off:off + 16])
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if len(pkt) < 40 or pkt[0] >> 4 != 4 or pkt[9] != 6:
            continue
        ihl = (pkt[0] & 15) * 4
        tot = struct.unpack(">H", pkt[2:4])[0]
        sport, dport, seq, ack = struct.unpack(">HHII", pkt[ihl:ihl + 12])
        doff = (pkt[ihl + 12] >> 4) * 4
        yield (sec + frac * scale, sport, dport, seq, ack, pkt[ihl + 13], tot - ihl - doff,
               pkt[ihl + 20:ihl + doff])


def pcap_completion(path, total=None):
    """Seconds from the first SYN to port 5001 to the first ACK from it covering the last
    data byte, and the data bytes (the highest sequence sent, from the ISN)."""
    syn_t, isn, top, acks = None, None, 0, []
    for t, sport, dport, seq, ack, flags, plen, _ in tcp_packets(path):
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


def sack_blocks(opts):
    """The SACK blocks (RFC 2018, option kind 5) of a TCP option area, as (left, right)."""
    i, out = 0, []
    while i < len(opts):
        kind = opts[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2:
            break
        n = opts[i + 1]
        if kind == 5:
            body = opts[i + 2:i + n]
            out += [struct.unpack(">II", body[k:k + 8]) for k in range(0, len(body) - 7, 8)]
        i += n
    return out


def pcap_rtts(path):
    """RTT samples (seconds) of the data sent to PORT, as the emulator's left device saw
    them: from a segment's first transmission to the first ACK that covers it, cumulatively
    or by a SACK block (so a segment above a hole is timed by its SACK, not by the repair of
    the hole), for segments never sent twice (Karn). Also the data bytes sent (the highest
    sequence from the ISN)."""
    import bisect
    isn, top, rtts = None, 0, []
    ends, seg, resent, done = [], {}, set(), set()
    lo = 0  # ends[:lo] are all cumulatively acknowledged
    for t, sport, dport, seq, ack, flags, plen, opts in tcp_packets(path):
        if dport == PORT:
            if flags & 0x02:
                isn = seq
                continue
            if isn is None or plen <= 0:
                continue
            start = (seq - isn - 1) % 2**32
            end = start + plen
            top = max(top, end)
            if end in seg:
                resent.add(end)
            elif not ends or end > ends[-1]:
                seg[end] = (start, t)
                ends.append(end)
        elif sport == PORT and flags & 0x10 and isn is not None:
            a = (ack - isn - 1) % 2**32
            if a >= 2**31:
                continue

            def sample(e):
                if e not in done:
                    done.add(e)
                    if e not in resent:
                        rtts.append(t - seg[e][1])

            hi = bisect.bisect_right(ends, a)
            for k in range(lo, hi):
                sample(ends[k])
            lo = max(lo, hi)
            for left, right in sack_blocks(opts):
                left, right = (left - isn - 1) % 2**32, (right - isn - 1) % 2**32
                k = bisect.bisect_right(ends, left)
                while k < len(ends) and ends[k] <= right:
                    if seg[ends[k]][0] >= left:
                        sample(ends[k])
                    k += 1
    return rtts, top


def med(rs, k):
    """The median of field `k` over the runs `rs` that have it (NaN if none)."""
    v = [r[k] for r in rs if r[k] is not None]
    return statistics.median(v) if v else float("nan")
