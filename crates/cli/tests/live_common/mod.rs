//! Helpers of the live tests: namespaces and processes that clean up after themselves
//! (Drop guards, so a failing assertion still deletes the namespace and ends the processes,
//! by PID), bounded waits, and clear SKIPs.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ackclock")
}

/// True when the test can run; otherwise prints why not (SKIP: ...).
pub fn can_run(test: &str, tools: &[&str]) -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("SKIP: {test}: live tests need root (TUN devices, network namespaces)");
        return false;
    }
    if !Path::new("/dev/net/tun").exists() {
        println!("SKIP: {test}: /dev/net/tun is missing");
        return false;
    }
    for t in ["ip"].iter().chain(tools) {
        let found = std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(t).is_file()));
        if !found {
            println!("SKIP: {test}: `{t}` is not installed (apt-get install iperf3 socat netcat-openbsd iproute2 iputils-ping)");
            return false;
        }
    }
    true
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A unique short name: `<prefix><pid>x<n>`.
pub fn unique(prefix: &str) -> String {
    format!(
        "{prefix}{}x{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A network namespace, deleted on drop.
pub struct Ns {
    pub name: String,
}

impl Ns {
    pub fn new(prefix: &str) -> Ns {
        let name = unique(prefix);
        let st = Command::new("ip")
            .args(["netns", "add", &name])
            .status()
            .unwrap();
        assert!(st.success(), "ip netns add {name}");
        let ns = Ns { name };
        ns.sh("ip link set lo up");
        ns
    }
    /// A command run inside the namespace.
    pub fn cmd(&self, prog: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, prog]);
        c
    }
    /// `sh -c script` inside the namespace, waited for (at most 60 s); returns stdout.
    pub fn sh(&self, script: &str) -> String {
        let mut c = self.cmd("sh");
        c.args(["-c", script]);
        let o = output_within(c, Duration::from_secs(60));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
    /// `sh -c script` in the background.
    pub fn spawn_sh(&self, script: &str) -> Proc {
        let mut c = self.cmd("sh");
        c.args(["-c", &format!("exec {script}")]);
        Proc::spawn(c)
    }
    /// The ackclock binary inside the namespace, in the background.
    pub fn spawn_ackclock(&self, args: &[&str]) -> Proc {
        let mut c = self.cmd(bin());
        c.args(args);
        Proc::spawn(c)
    }
}

impl Drop for Ns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// A background process: ended (SIGKILL, by PID) and reaped on drop. Its stdout and
/// stderr are read line by line on threads so that no pipe fills.
pub struct Proc {
    pub child: Child,
    lines: mpsc::Receiver<(bool, String)>,
    /// The stdout lines read so far.
    pub out: Vec<String>,
    /// The stderr lines read so far.
    pub err: Vec<String>,
}

impl Proc {
    pub fn spawn(mut c: Command) -> Proc {
        c.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("spawn");
        let (tx, rx) = mpsc::channel();
        let tx2 = tx.clone();
        let so = child.stdout.take().unwrap();
        let se = child.stderr.take().unwrap();
        std::thread::spawn(move || forward_lines(so, false, tx));
        std::thread::spawn(move || forward_lines(se, true, tx2));
        Proc {
            child,
            lines: rx,
            out: Vec::new(),
            err: Vec::new(),
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn keep(&mut self, (is_err, l): (bool, String)) {
        if is_err {
            self.err.push(l);
        } else {
            self.out.push(l);
        }
    }

    /// Waits (bounded) for a line containing `pat` on stdout or stderr (under `--json` the
    /// banners are on stderr: stdout holds the JSON document alone).
    pub fn wait_line(&mut self, pat: &str, within: Duration) -> Option<String> {
        let end = Instant::now() + within;
        if let Some(l) = self.out.iter().chain(&self.err).find(|l| l.contains(pat)) {
            return Some(l.clone());
        }
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    let hit = l.1.contains(pat).then(|| l.1.clone());
                    self.keep(l);
                    if hit.is_some() {
                        return hit;
                    }
                }
                Err(_) => return None,
            }
        }
        None
    }

    /// Waits (at most 10 s) for the stdout line containing `pat` that says the process is
    /// ready (listening, answering); the test fails with what it printed if none comes.
    pub fn ready(&mut self, pat: &str) {
        assert!(
            self.wait_line(pat, Duration::from_secs(10)).is_some(),
            "no line with {pat:?} within 10 s: {:?}",
            self.out
        );
    }

    /// Sends a signal to this process (by PID).
    pub fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's PID.
        unsafe {
            libc::kill(self.pid(), sig);
        }
    }

    /// Waits (bounded) for the exit; on timeout the process is killed. Returns the exit
    /// code (None if killed) and the whole stdout and stderr.
    pub fn finish(mut self, within: Duration) -> (Option<i32>, String, String) {
        let end = Instant::now() + within;
        let code = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break s.code(),
                Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(20)),
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break None;
                }
            }
        };
        // Both pipes close at the exit; what is still queued is read to the end.
        while let Ok(l) = self.lines.recv_timeout(Duration::from_millis(200)) {
            self.keep(l);
        }
        (code, self.out.join("\n"), self.err.join("\n"))
    }
}

impl Drop for Proc {
    /// SIGTERM first (ackclock then removes what it created), SIGKILL after 3 s.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.signal(libc::SIGTERM);
            let end = Instant::now() + Duration::from_secs(3);
            while Instant::now() < end {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Namespaces someone else (ackclock emulate) creates: deleted on drop if still there.
pub struct NsNames(pub Vec<String>);

impl Drop for NsNames {
    fn drop(&mut self) {
        for n in &self.0 {
            if Path::new("/run/netns").join(n).exists() {
                let _ = Command::new("ip").args(["netns", "del", n]).status();
            }
        }
    }
}

/// Starts `ackclock emulate --json` with `args` between two fresh namespaces, named
/// `<prefix>L<pid>x<n>` (left) and `<prefix>R<pid>x<n>` (right); returns the emulator, the
/// guard that deletes the namespaces, and their names.
pub fn emulate(prefix: &str, args: &[&str]) -> (Proc, NsNames, String, String) {
    let left = unique(&format!("{prefix}L"));
    let right = unique(&format!("{prefix}R"));
    let names = NsNames(vec![left.clone(), right.clone()]);
    let mut c = Command::new(bin());
    c.args(["emulate", "--left", &left, "--right", &right, "--json"]);
    c.args(args);
    let mut p = Proc::spawn(c);
    assert!(
        p.wait_line("ready", Duration::from_secs(15)).is_some(),
        "emulate did not start: {:?}",
        p.out
    );
    (p, names, left, right)
}

/// A command's whole stdout as JSON: under `--json` stdout holds the JSON document and
/// nothing else (as `iperf3 -J`), so that `| jq .` reads it.
pub fn stdout_json(out: &str) -> serde_json::Value {
    serde_json::from_str(out)
        .unwrap_or_else(|e| panic!("{e}: stdout is not one JSON document:\n{out}"))
}

/// Sends each line read from `r` on `tx`, tagged with `is_err`, until the pipe closes.
fn forward_lines(r: impl Read, is_err: bool, tx: mpsc::Sender<(bool, String)>) {
    for l in BufReader::new(r).lines() {
        let Ok(l) = l else { break };
        if tx.send((is_err, l)).is_err() {
            break;
        }
    }
}

/// Stops a process that runs until a signal (SIGTERM), and returns its JSON document.
pub fn stop_json(p: Proc, what: &str) -> serde_json::Value {
    p.signal(libc::SIGTERM);
    let (code, out, err) = p.finish(Duration::from_secs(15));
    assert_eq!(code, Some(0), "{what}: exit {code:?}\n{out}\n{err}");
    println!("{what}:\n{out}");
    stdout_json(&out)
}

/// Runs a process to its end (bounded) and returns its JSON document.
pub fn finish_json(p: Proc, what: &str, within: Duration) -> serde_json::Value {
    let (code, out, err) = p.finish(within);
    assert_eq!(code, Some(0), "{what}: exit {code:?}\n{out}\n{err}");
    println!("{what}:\n{out}");
    stdout_json(&out)
}

/// `sh -c script` in an existing namespace (by name), waited for (at most 60 s).
pub fn sh_in(ns: &str, script: &str) -> String {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns, "sh", "-c", script]);
    let o = output_within(c, Duration::from_secs(60));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A background command in an existing namespace.
pub fn spawn_in(ns: &str, prog: &str, args: &[&str]) -> Proc {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns, prog]);
    c.args(args);
    Proc::spawn(c)
}

/// Runs a command to completion, killing it (by PID) after `within`.
pub fn output_within(mut c: Command, within: Duration) -> Output {
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn");
    let end = Instant::now() + within;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                break;
            }
        }
    }
    child.wait_with_output().expect("wait")
}

/// A temporary directory removed on drop.
pub struct TmpDir(pub PathBuf);

impl TmpDir {
    pub fn new(name: &str) -> TmpDir {
        let d = std::env::temp_dir().join(unique(&format!("ackclock-live-{name}-")));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TmpDir(d)
    }
    pub fn path(&self, f: &str) -> PathBuf {
        self.0.join(f)
    }
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Deterministic pseudo-random bytes (xorshift64*), so a file's content is reproducible.
pub fn write_random_file(path: &Path, len: usize, seed: u64) {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        v.extend_from_slice(&x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    v.truncate(len);
    std::fs::write(path, v).unwrap();
}

/// Whether two files have the same bytes (and says where they differ if not).
pub fn same_file(a: &Path, b: &Path) -> Result<(), String> {
    let x = std::fs::read(a).map_err(|e| format!("{}: {e}", a.display()))?;
    let y = std::fs::read(b).map_err(|e| format!("{}: {e}", b.display()))?;
    if x.len() != y.len() {
        return Err(format!("lengths differ: {} vs {}", x.len(), y.len()));
    }
    match x.iter().zip(&y).position(|(p, q)| p != q) {
        None => Ok(()),
        Some(i) => Err(format!("first difference at byte {i}")),
    }
}

/// The size of the byte-exact transfers: 100 MiB, or ACKCLOCK_LIVE_BYTES.
pub fn transfer_bytes() -> usize {
    match std::env::var("ACKCLOCK_LIVE_BYTES") {
        Ok(v) => v.parse().expect("ACKCLOCK_LIVE_BYTES: a byte count"),
        Err(_) => 100 << 20,
    }
}

/// The TCP packets of a pcap file: (source port, destination port, flags, window, options,
/// payload length).
pub struct Seg {
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub flags: ackclock_wire::TcpFlags,
    pub window: u16,
    pub options: ackclock_wire::TcpOptions,
    pub len: usize,
}

pub fn read_pcap(path: &Path) -> Vec<Seg> {
    let f = std::fs::File::open(path).expect("pcap exists");
    let mut r = ackclock_wire::pcap::PcapReader::new(std::io::BufReader::new(f)).unwrap();
    let mut v = Vec::new();
    while let Some(rec) = r.next_record() {
        let rec = rec.unwrap();
        if let Ok(p) = ackclock_wire::parse_ipv4_tcp(rec.data) {
            v.push(Seg {
                sport: p.tcp.src_port(),
                dport: p.tcp.dst_port(),
                seq: p.tcp.seq(),
                flags: p.tcp.flags(),
                window: p.tcp.window(),
                options: p.tcp.options().unwrap_or_default(),
                len: p.tcp.payload().len(),
            });
        }
    }
    v
}

/// Distinct payload bytes of `segs` (retransmissions counted once): the union of their
/// sequence ranges, relative to the first segment's.
pub fn unique_bytes<'a>(segs: impl IntoIterator<Item = &'a Seg>) -> usize {
    let segs: Vec<&Seg> = segs.into_iter().filter(|s| s.len > 0).collect();
    let Some(first) = segs.first() else { return 0 };
    let base = first.seq;
    let mut r: Vec<(u64, u64)> = segs
        .iter()
        .map(|s| {
            // Signed distance from the first segment, so data before it counts too.
            let off = i64::from(s.seq.wrapping_sub(base) as i32) + (1 << 32);
            (off as u64, off as u64 + s.len as u64)
        })
        .collect();
    r.sort_unstable();
    let (mut total, mut end) = (0u64, 0u64);
    for (a, b) in r {
        let a = a.max(end);
        if b > a {
            total += b - a;
            end = b;
        }
    }
    total as usize
}

/// The capture time of every record of a pcap file, in nanoseconds, in file order.
pub fn pcap_times(path: &Path) -> Vec<u64> {
    let f = std::fs::File::open(path).expect("pcap exists");
    let mut r = ackclock_wire::pcap::PcapReader::new(std::io::BufReader::new(f)).unwrap();
    let mut v = Vec::new();
    while let Some(rec) = r.next_record() {
        v.push(rec.unwrap().ts.as_nanos());
    }
    v
}

/// A live capture stamps each packet with its own time: the times never go back, and
/// nearly all differ (a capture stamped once per loop turn had 24 distinct times for 1158
/// packets). Returns the share of distinct times.
pub fn assert_exact_times(times: &[u64], what: &str) -> f64 {
    assert!(times.len() >= 1000, "{what}: only {} packets", times.len());
    if let Some(i) = times.windows(2).position(|w| w[1] < w[0]) {
        panic!(
            "{what}: packet {} is stamped {} ns before packet {i}",
            i + 1,
            times[i] - times[i + 1]
        );
    }
    // Sorted, so equal times are neighbours.
    let distinct = 1 + times.windows(2).filter(|w| w[1] != w[0]).count();
    let share = distinct as f64 / times.len() as f64;
    assert!(
        share > 0.9,
        "{what}: {distinct} distinct timestamps for {} packets",
        times.len()
    );
    share
}

/// Waits until `cond` holds, looking every 20 ms, at most `within`; the test fails saying
/// `what` did not happen. Readiness is a condition, never a fixed sleep: a busy machine
/// takes longer, an idle one does not wait for nothing.
pub fn wait_until(what: &str, within: Duration, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + within;
    loop {
        if cond() {
            return;
        }
        assert!(Instant::now() < end, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether a socket listens on TCP `port` in the namespace `ns` (`ss -ltn`).
pub fn tcp_listening(ns: &str, port: u16) -> bool {
    let out = sh_in(ns, &format!("ss -Hltn 'sport = :{port}'"));
    !out.trim().is_empty()
}

/// Waits (at most 10 s) until something listens on TCP `port` in `ns`: a server started
/// in the background is ready for its client.
pub fn wait_tcp_listening(ns: &str, port: u16) {
    wait_until(
        &format!("a listener on TCP port {port} in {ns}"),
        Duration::from_secs(10),
        || tcp_listening(ns, port),
    );
}

/// Bytes the Linux side has received on its established TCP connections in `ns` (the sum
/// of `bytes_received` in `ss -ti`).
pub fn tcp_bytes_received(ns: &str) -> u64 {
    sh_in(ns, "ss -Htin state established")
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("bytes_received:"))
        .filter_map(|v| v.parse::<u64>().ok())
        .sum()
}

/// Bytes the Linux side has had acknowledged on its established TCP connections in `ns`
/// (the sum of `bytes_acked` in `ss -ti`).
pub fn tcp_bytes_acked(ns: &str) -> u64 {
    sh_in(ns, "ss -Htin state established")
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("bytes_acked:"))
        .filter_map(|v| v.parse::<u64>().ok())
        .sum()
}

/// Packets the kernel of `ns` has sent out of its interfaces other than loopback (into
/// TUN devices, to the emulator), from `/proc/net/dev`.
pub fn tx_packets(ns: &str) -> u64 {
    let dev = sh_in(ns, "cat /proc/net/dev");
    dev.lines()
        .skip(2)
        .filter_map(|l| l.split_once(':'))
        .filter(|(name, _)| name.trim() != "lo")
        .filter_map(|(_, v)| v.split_whitespace().nth(9)?.parse::<u64>().ok())
        .sum()
}

/// UDP datagrams the kernel of `ns` delivered to its sockets (`Udp: InDatagrams` of
/// `/proc/net/snmp`).
pub fn udp_in_datagrams(ns: &str) -> u64 {
    let snmp = sh_in(ns, "cat /proc/net/snmp");
    let mut udp = snmp.lines().filter(|l| l.starts_with("Udp:"));
    let (Some(names), Some(values)) = (udp.next(), udp.next()) else {
        return 0;
    };
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(n, _)| *n == "InDatagrams")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

/// Waits (at most `within`) until `count` stops changing for 300 ms: what was in flight
/// has arrived. Returns the count.
pub fn wait_settled(what: &str, within: Duration, mut count: impl FnMut() -> u64) -> u64 {
    let end = Instant::now() + within;
    let mut last = count();
    let mut since = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let now = count();
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() >= Duration::from_millis(300) {
            return now;
        }
        assert!(
            Instant::now() < end,
            "{what}: still changing after {within:?}"
        );
    }
}

/// What `ackclock analyze --json` says about the one connection of a capture: its
/// duration (first SYN to last packet) and, for the direction toward port 5001,
/// retransmitted and spurious (D-SACK) segments and goodput.
#[derive(Debug)]
pub struct Figures {
    /// First SYN to last packet, seconds.
    pub duration_s: f64,
    /// Retransmitted data packets.
    pub rexmt: u64,
    /// Of those, spurious ones (D-SACK).
    pub spurious: u64,
    /// Goodput of the data direction.
    pub goodput_mbps: f64,
    /// The median and 90th percentile of the data direction's RTT samples (Karn's), ms.
    pub rtt_p50_ms: f64,
    /// The 90th percentile.
    pub rtt_p90_ms: f64,
}

pub fn figures(pcap: &Path) -> Figures {
    let o = output_within(
        {
            let mut c = std::process::Command::new(bin());
            c.args(["analyze", "--json", "--no-figures"]).arg(pcap);
            c
        },
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("analyze --json");
    let conns = j["connections"].as_array().expect("connections");
    assert_eq!(conns.len(), 1, "one connection per capture: {j}");
    let c = &conns[0];
    let d = c["directions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["to"].as_str().is_some_and(|t| t.ends_with(":5001")))
        .expect("the data direction");
    Figures {
        duration_s: c["duration_s"].as_f64().unwrap(),
        rexmt: d["rexmt_pkts"].as_u64().unwrap(),
        spurious: d["spurious"]["total"].as_u64().unwrap(),
        goodput_mbps: d["goodput_bps"].as_f64().unwrap() / 1e6,
        rtt_p50_ms: d["rtt_ms"]["p50"].as_f64().unwrap_or(f64::NAN),
        rtt_p90_ms: d["rtt_ms"]["p90"].as_f64().unwrap_or(f64::NAN),
    }
}

/// Which sender runs in the left namespace.
#[derive(Clone, Copy, Debug)]
pub enum Sender {
    /// Linux's TCP (its defaults: CUBIC, RACK-TLP, PRR, F-RTO), fed by socat in one write.
    Linux,
    /// Linux's TCP with this congestion control (the left namespace's
    /// `net.ipv4.tcp_congestion_control`), fed by socat.
    LinuxWith(&'static str),
    /// `ackclock stream` with these flags (a preset among them).
    Ackclock(&'static [&'static str]),
}

/// One transfer of `file` (its whole length) through a fresh emulator (namespaces named
/// from `prefix`) with the path flags `path`; returns analyze's figures and, for ackclock,
/// its `stream --json` document.
pub fn emulated_transfer(
    d: &TmpDir,
    tag: &str,
    prefix: &str,
    path: &[&str],
    file: &Path,
    sender: Sender,
) -> (Figures, Option<serde_json::Value>) {
    let pcap = d.path(&format!("{tag}.pcap"));
    let mut args: Vec<&str> = vec!["--pcap", pcap.to_str().unwrap()];
    args.extend(path);
    let (emu, _names, left, right) = emulate(prefix, &args);
    // A freshly attached TUN device drops traffic for about 0.1 s.
    std::thread::sleep(Duration::from_millis(300));
    let sink = spawn_in(
        &right,
        "socat",
        &["-u", "TCP-LISTEN:5001,reuseaddr", "OPEN:/dev/null"],
    );
    wait_tcp_listening(&right, 5001);
    let len = std::fs::metadata(file).unwrap().len().to_string();
    let within = Duration::from_secs(30);
    if let Sender::LinuxWith(cc) = sender {
        sh_in(
            &left,
            &format!("sysctl -qw net.ipv4.tcp_congestion_control={cc}"),
        );
    }
    let own = match sender {
        Sender::Linux | Sender::LinuxWith(_) => {
            // -b 65536: socat writes the 30-segment file in one write, so Linux cuts it
            // into full-sized segments and the scripted drop hits the last ones.
            let p = spawn_in(
                &left,
                "socat",
                &[
                    "-b",
                    "65536",
                    "-u",
                    &format!("OPEN:{}", file.display()),
                    "TCP:198.18.2.1:5001",
                ],
            );
            let (code, out, err) = p.finish(within);
            assert_eq!(code, Some(0), "socat sender: {out}\n{err}");
            None
        }
        Sender::Ackclock(flags) => {
            let mut a = vec![
                "stream",
                "--connect",
                "198.18.2.1:5001",
                "--bytes",
                &len,
                "--json",
            ];
            a.extend(flags);
            Some(finish_json(spawn_in(&left, bin(), &a), tag, within))
        }
    };
    let _ = sink.finish(Duration::from_secs(10));
    let _ = stop_json(emu, "emulate");
    let f = figures(&pcap);
    println!("{tag}: {f:?}");
    // ACKCLOCK_LIVE_KEEP=DIR keeps each capture (named by tag and time) for a look at a
    // run that failed.
    if let Some(keep) = std::env::var_os("ACKCLOCK_LIVE_KEEP") {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |t| t.as_millis());
        let to = Path::new(&keep).join(format!("{tag}-{stamp}.pcap"));
        if let Err(e) = std::fs::copy(&pcap, &to) {
            println!("ACKCLOCK_LIVE_KEEP: {}: {e}", to.display());
        }
    }
    (f, own)
}
