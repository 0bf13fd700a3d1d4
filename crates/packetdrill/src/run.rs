//! The interpreter: one fresh [`Endpoint`] per script, driven in virtual time. Inbound
//! lines become packets handed to the endpoint, outbound lines are matched against what it
//! emits, system calls map onto its API. Sequence numbers are mapped between script space
//! and the engine's as nplab packetdrill's `run_packet.c` does.

use crate::profile::{Profile, Sysctl};
use crate::script::{
    flag, flags_text, options_text, Action, Arg, CmpOp, Direction, Event, EventTime, InfoAssert,
    InfoValue, OptSpec, PacketSpec, Script, Syscall,
};
use ackclock_tcp::{ConnId, ConnectionError, Endpoint, EndpointConfig, RecvError, State};
use ackclock_wire::{checksum, ipv4, Instant};
use core::net::{Ipv4Addr, SocketAddrV4};
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

/// The engine's address.
pub const LOCAL_IP: Ipv4Addr = Ipv4Addr::new(192, 168, 0, 1);
/// The interpreter's (the scripted peer's) address.
pub const REMOTE_IP: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
/// The port scripts bind, listen on and connect to.
pub const PORT: u16 = 8080;
/// The first port the scripted peer connects from.
const FIRST_REMOTE_PORT: u16 = 40000;

/// packetdrill's relative tolerance on FreeBSD, the suite's platform: an outbound packet
/// may be off by this share of the time since the previous event, if that is more than
/// the script's fixed tolerance.
const TOLERANCE_PERCENT: u64 = 5;

/// Bound on timer firings while waiting for one event: an engine that keeps a deadline in
/// the past would otherwise hang the run.
const MAX_TIMER_STEPS: usize = 100_000;

/// How a run is configured beyond the script.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Replaces the script's `--tolerance_usecs` (the upstream runner uses 25000 for
    /// `rcv-data-segments/`).
    pub tolerance_usecs: Option<u64>,
    /// Compare outbound options as a set: NOP and EOL padding and the order ignored (for a
    /// stack whose option layout differs from the script's, e.g. the Linux order). By
    /// default they are compared kind by kind in wire order, as packetdrill does.
    pub options_as_set: bool,
    /// The stack the script is run as: profile F (FreeBSD, the default) or profile L
    /// (google/packetdrill's Linux defaults); see [`crate::profile`].
    pub profile: Profile,
}

/// A passed script: what deserves a look all the same.
#[derive(Clone, Debug, Default)]
pub struct Passed {
    /// Packets the engine sent after the last event, and similar notes (packetdrill does
    /// not fail on them).
    pub warnings: Vec<String>,
}

/// Why a script failed: the line, what it expected and what the engine did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The script's name, as given to [`Script::parse`].
    pub file: String,
    /// 1-based line of the event that failed.
    pub line: usize,
    /// The event's text.
    pub script: String,
    /// What went wrong.
    pub message: String,
    /// The packet or value the engine produced, in script terms, if there is one.
    pub actual: Option<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}:{}: {}", self.file, self.line, self.message)?;
        write!(f, "  script line:   {}", self.script)?;
        if let Some(a) = &self.actual {
            write!(f, "\n  engine did:    {a}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Failure {}

/// Runs `script` against a fresh endpoint with the profile of `opts` (F by default).
///
/// # Errors
/// The first event that did not happen as the script says.
pub fn run(script: &Script, opts: &RunOptions) -> Result<Passed, Failure> {
    let mut it = Interp::new(script, opts);
    for ev in &script.events {
        it.event(ev)?;
    }
    it.finish();
    Ok(Passed {
        warnings: it.warnings,
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SockState {
    /// From `socket()`, not bound.
    Fresh,
    Bound,
    Listening,
    Conn(ConnId),
    /// After `close()`.
    Closed,
}

#[derive(Clone, Copy, Debug)]
struct Sock {
    state: SockState,
    nonblocking: bool,
    /// The peer's SYN was processed (the receive buffer is then rounded to the MSS).
    peer_syn_seen: bool,
    /// SO_ERROR was read (BSD clears the pending error when it is read).
    error_read: bool,
    /// (remote, local) of its connection, kept after close(): the scripted peer goes on
    /// talking to the connection the kernel keeps (FIN-WAIT, TIME-WAIT) or has removed.
    tuple: Option<(SocketAddrV4, SocketAddrV4)>,
}

/// What a system call returned: its value, and the errno's name when it failed (-1).
type CallResult = (i64, Option<&'static str>);

/// An emitted packet waiting to be matched.
struct Emitted {
    at_ns: u64,
    bytes: Vec<u8>,
}

struct Interp<'s> {
    script: &'s Script,
    tolerance_us: u64,
    options_as_set: bool,
    profile: Profile,
    ep: Endpoint,
    now_ns: u64,
    /// Actual time of the previous event, in ns (for relative times).
    prev_ns: u64,
    emitted: VecDeque<Emitted>,
    socks: BTreeMap<i64, Sock>,
    /// The socket under test: the most recently created or accepted.
    under_test: Option<i64>,
    /// The connection a SYN to the listener created, until accepted (nplab's child
    /// socket): set when the first segment reaches the listening socket under test.
    child_port: Option<u16>,
    next_remote_port: u16,
    remote_port: u16,
    script_local_isn: u32,
    live_local_isn: u32,
    local_isn_known: bool,
    remote_isn: u32,
    /// The engine's TSval minus the script's, from the first outbound line with a
    /// timestamp: an inbound `TS ... ecr N` echoes N plus this, as the engine's own value.
    ts_offset: Option<u32>,
    warnings: Vec<String>,
    buf: Vec<u8>,
    /// For `tcpi_ca_state`: what the interpreter saw of the connection under test.
    ca: CaTrack,
}

/// What `tcpi_ca_state` is derived from besides the engine's [`Stats`](ackclock_tcp::Stats):
/// the timeouts and undos seen so far, the recovery point of the last timeout (Linux's
/// Loss state lasts until SND.UNA passes the SND.NXT of the timeout, RFC 6582's recovery
/// point), and whether the scripted peer's last ACK reported data beyond it (a SACK block
/// above its cumulative ACK, or a duplicate ACK: Linux's Disorder).
#[derive(Clone, Copy, Debug, Default)]
struct CaTrack {
    timeouts: u64,
    undos: u64,
    loss_high: Option<u32>,
    disorder: bool,
    last_ack: Option<u32>,
}

fn state_tcpi(s: State) -> &'static str {
    match s {
        State::Closed => "TCPI_CLOSED",
        State::Listen => "TCPI_LISTEN",
        State::SynSent => "TCPI_SYN_SENT",
        State::SynReceived => "TCPI_SYN_RECEIVED",
        State::Established => "TCPI_ESTABLISHED",
        State::FinWait1 => "TCPI_FIN_WAIT_1",
        State::FinWait2 => "TCPI_FIN_WAIT_2",
        State::CloseWait => "TCPI_CLOSE_WAIT",
        State::Closing => "TCPI_CLOSING",
        State::LastAck => "TCPI_LAST_ACK",
        State::TimeWait => "TCPI_TIME_WAIT",
    }
}

/// sockstat's state names.
fn state_sockstat(s: State) -> &'static str {
    match s {
        State::Closed => "CLOSED",
        State::Listen => "LISTEN",
        State::SynSent => "SYN_SENT",
        State::SynReceived => "SYN_RCVD",
        State::Established => "ESTABLISHED",
        State::FinWait1 => "FIN_WAIT_1",
        State::FinWait2 => "FIN_WAIT_2",
        State::CloseWait => "CLOSE_WAIT",
        State::Closing => "CLOSING",
        State::LastAck => "LAST_ACK",
        State::TimeWait => "TIME_WAIT",
    }
}

fn secs(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, (ns % 1_000_000_000) / 1000)
}

/// A decoded packet in script terms, for messages and comparison.
struct Decoded {
    flags: u8,
    seq: u32,
    len: u32,
    ack: u32,
    win: u16,
    urgent: u16,
    /// Options in wire order, SACK blocks in script space.
    options: Vec<OptSpec>,
    options_len: usize,
}

impl Decoded {
    fn text(&self, at_ns: u64) -> String {
        let mut s = format!(
            "{} > {} {}:{}({})",
            secs(at_ns),
            flags_text(self.flags),
            self.seq,
            self.seq.wrapping_add(self.len),
            self.len
        );
        if self.flags & flag::ACK != 0 || self.ack != 0 {
            s.push_str(&format!(" ack {}", self.ack));
        }
        s.push_str(&format!(" win {}", self.win));
        if self.options_len > 0 {
            s.push(' ');
            s.push_str(&options_text(&self.options));
        }
        s
    }
}

impl<'s> Interp<'s> {
    fn new(script: &'s Script, opts: &RunOptions) -> Self {
        Interp {
            script,
            tolerance_us: opts.tolerance_usecs.unwrap_or(script.tolerance_usecs),
            options_as_set: opts.options_as_set,
            profile: opts.profile,
            ep: Endpoint::new(EndpointConfig::new(LOCAL_IP, [0x5a; 16])),
            now_ns: 0,
            prev_ns: 0,
            emitted: VecDeque::new(),
            socks: BTreeMap::new(),
            under_test: None,
            child_port: None,
            next_remote_port: FIRST_REMOTE_PORT,
            remote_port: FIRST_REMOTE_PORT,
            script_local_isn: 0,
            live_local_isn: 0,
            local_isn_known: false,
            remote_isn: 0,
            ts_offset: None,
            warnings: Vec::new(),
            buf: vec![0u8; 65536],
            ca: CaTrack::default(),
        }
    }

    fn now(&self) -> Instant {
        Instant::from_nanos(self.now_ns)
    }

    fn fail(&self, ev: &Event, message: impl Into<String>, actual: Option<String>) -> Failure {
        Failure {
            file: self.script.name.clone(),
            line: ev.line,
            script: ev.text.clone(),
            message: message.into(),
            actual,
        }
    }

    /// Moves whatever the endpoint wants to send into the queue of emitted packets.
    fn collect(&mut self) {
        let now = self.now();
        while let Some(t) = self.ep.poll_transmit(now, &mut self.buf) {
            self.emitted.push_back(Emitted {
                at_ns: self.now_ns,
                bytes: self.buf[..t.len].to_vec(),
            });
        }
    }

    /// Runs the endpoint's timers up to `until_ns` (inclusive), collecting output.
    fn advance_to(&mut self, ev: &Event, until_ns: u64) -> Result<(), Failure> {
        self.collect();
        for _ in 0..MAX_TIMER_STEPS {
            match self.ep.poll_timeout() {
                Some(d) if d.as_nanos() <= until_ns => {
                    self.now_ns = self.now_ns.max(d.as_nanos());
                    self.ep.handle_timeout(self.now());
                    self.observe();
                    self.collect();
                }
                _ => {
                    self.now_ns = self.now_ns.max(until_ns);
                    self.collect();
                    return Ok(());
                }
            }
        }
        Err(self.fail(
            ev,
            format!("the engine's timers fired {MAX_TIMER_STEPS} times without time passing"),
            None,
        ))
    }

    fn event(&mut self, ev: &Event) -> Result<(), Failure> {
        let t_ns = match ev.time {
            EventTime::Absolute(us) => us * 1000,
            EventTime::Relative(us) => self.prev_ns + us * 1000,
        };
        match &ev.action {
            Action::Packet(p) if p.direction == Direction::Outbound => {
                self.expect_outbound(ev, p, t_ns)?;
            }
            action => {
                // An absolute time already passed runs at once, late, as in packetdrill.
                self.advance_to(ev, t_ns)?;
                match action {
                    Action::Packet(p) => self.inject(ev, p)?,
                    Action::Syscall(s) => self.syscall(ev, s)?,
                    Action::Shell(cmd) => self.shell(ev, cmd)?,
                    Action::AssertState(want) => self.assert_state(ev, want)?,
                    Action::AssertInfo(asserts) => self.assert_info(ev, asserts)?,
                }
                self.collect();
                self.prev_ns = t_ns;
            }
        }
        self.note_peer_syn();
        Ok(())
    }

    fn note_peer_syn(&mut self) {
        for s in self.socks.values_mut() {
            if let SockState::Conn(id) = s.state {
                if let Some(c) = self.ep.conn(id) {
                    if !matches!(c.state(), State::SynSent | State::Closed) {
                        s.peer_syn_seen = true;
                    }
                }
            }
        }
    }

    fn under_test_sock(&self) -> Option<Sock> {
        self.under_test.and_then(|fd| self.socks.get(&fd).copied())
    }

    /// The 4-tuple inbound packets use: the connection under test's, or the scripted
    /// peer's current port toward the bound or listening port.
    fn tuple(&self) -> (SocketAddrV4, SocketAddrV4) {
        if let Some(t) = self.under_test_sock().and_then(|s| s.tuple) {
            return t;
        }
        (
            SocketAddrV4::new(REMOTE_IP, self.remote_port),
            SocketAddrV4::new(LOCAL_IP, PORT),
        )
    }

    fn inject(&mut self, ev: &Event, p: &PacketSpec) -> Result<(), Failure> {
        let syn = p.flags & flag::SYN != 0;
        // nplab: the first segment to reach the listening socket under test creates the
        // child socket (a new remote port) and sets the remote ISN from its sequence
        // number, SYN or not.
        let listening = matches!(
            self.under_test_sock().map(|s| s.state),
            Some(SockState::Listening)
        );
        if listening && self.child_port.is_none() {
            self.remote_port = self.next_remote_port;
            self.next_remote_port = self.next_remote_port.wrapping_add(1).max(1024);
            self.child_port = Some(self.remote_port);
            self.remote_isn = p.seq;
        }
        let connecting = matches!(
            self.under_test_sock().map(|s| s.state),
            Some(SockState::Conn(id)) if self.ep.conn(id).is_some_and(|c| c.state() == State::SynSent)
        );
        if connecting && syn && p.flags & flag::ACK != 0 {
            self.remote_isn = p.seq;
        }
        let seq = if syn {
            p.seq
        } else {
            p.seq.wrapping_add(self.remote_isn)
        };
        let ack_offset = if syn {
            self.live_local_isn.wrapping_sub(self.script_local_isn)
        } else {
            self.live_local_isn
        };
        let ack = match p.ack {
            Some(a) if p.flags & flag::ACK != 0 => a.wrapping_add(ack_offset),
            // An `ack N` on a segment without the ACK flag goes in literally.
            Some(a) => a,
            None => 0,
        };
        let mut opts = Vec::new();
        let ts_offset = self.ts_offset.unwrap_or(0);
        for o in p.options.iter().flatten() {
            let o = match o {
                // The echo of one of the engine's timestamps, in the script's clock.
                OptSpec::Timestamps { val, ecr } if *ecr != 0 => OptSpec::Timestamps {
                    val: *val,
                    ecr: ecr.wrapping_add(ts_offset),
                },
                o => o.clone(),
            };
            encode_option(&o, &mut opts, |v| v.wrapping_add(ack_offset));
        }
        if opts.len() > 40 {
            return Err(self.fail(ev, "options longer than 40 bytes", None));
        }
        while opts.len() % 4 != 0 {
            // A script's option list that is not a multiple of 4 bytes: pad with EOL, as
            // packetdrill does.
            opts.push(0);
        }
        let (src, dst) = self.tuple();
        let pkt = build_packet(
            src,
            dst,
            seq,
            ack,
            p.flags,
            p.win.unwrap_or(0),
            &opts,
            p.len as usize,
        );
        let now = self.now();
        self.ep.handle_packet(now, &pkt);
        self.note_ack(p);
        self.observe();
        Ok(())
    }

    fn expect_outbound(&mut self, ev: &Event, p: &PacketSpec, t_ns: u64) -> Result<(), Failure> {
        let gap = t_ns.saturating_sub(self.prev_ns);
        let tol_ns = (self.tolerance_us * 1000).max(gap * TOLERANCE_PERCENT / 100);
        let deadline = t_ns + tol_ns;
        let mut steps = 0usize;
        let pkt = loop {
            if let Some(e) = self.emitted.pop_front() {
                break e;
            }
            self.collect();
            if let Some(e) = self.emitted.pop_front() {
                break e;
            }
            steps += 1;
            match self.ep.poll_timeout() {
                Some(d) if d.as_nanos() <= deadline && steps < MAX_TIMER_STEPS => {
                    self.now_ns = self.now_ns.max(d.as_nanos());
                    self.ep.handle_timeout(self.now());
                    self.observe();
                }
                _ => {
                    self.now_ns = self.now_ns.max(deadline);
                    return Err(self.fail(
                        ev,
                        format!(
                            "expected an outbound packet at {} s (tolerance {} s); the engine \
                             sent nothing by {} s",
                            secs(t_ns),
                            secs(tol_ns),
                            secs(deadline)
                        ),
                        None,
                    ));
                }
            }
        };
        let d = self.decode(ev, &pkt.bytes, p)?;
        let actual = Some(d.text(pkt.at_ns));
        self.compare(ev, p, &d, actual.clone())?;
        if pkt.at_ns + tol_ns < t_ns || pkt.at_ns > deadline {
            return Err(self.fail(
                ev,
                format!(
                    "timing error: expected outbound packet at {} s but it was sent at {} s \
                     (tolerance {} s)",
                    secs(t_ns),
                    secs(pkt.at_ns),
                    secs(tol_ns)
                ),
                actual,
            ));
        }
        self.prev_ns = pkt.at_ns;
        Ok(())
    }

    /// Decodes an emitted packet into script space. The first outbound SYN or SYN,ACK
    /// line fixes the local ISN mapping (script and live).
    fn decode(&mut self, ev: &Event, bytes: &[u8], p: &PacketSpec) -> Result<Decoded, Failure> {
        match ackclock_wire::parse_ipv4_tcp(bytes) {
            Ok(parsed) => Ok(self.describe(parsed.tcp, p)),
            Err(e) => Err(self.fail(ev, format!("the engine sent a malformed packet: {e}"), None)),
        }
    }

    /// A segment the engine sent, in script terms.
    fn describe(&mut self, tcp: ackclock_wire::tcp::TcpSegment<'_>, p: &PacketSpec) -> Decoded {
        let flags = (tcp.flags().bits() & 0xff) as u8;
        let syn = flags & flag::SYN != 0;
        if syn && p.flags & flag::SYN != 0 && !self.local_isn_known {
            self.local_isn_known = true;
            self.live_local_isn = tcp.seq();
            self.script_local_isn = p.seq;
        }
        let seq = if syn {
            tcp.seq()
                .wrapping_sub(self.live_local_isn.wrapping_sub(self.script_local_isn))
        } else {
            tcp.seq().wrapping_sub(self.live_local_isn)
        };
        let ack = if syn || flags & flag::ACK == 0 {
            tcp.ack()
        } else {
            tcp.ack().wrapping_sub(self.remote_isn)
        };
        let remote_isn = self.remote_isn;
        let raw = tcp.options_bytes();
        let mut options = decode_options(raw, |v| v.wrapping_sub(remote_isn));
        let script_ts = p.options.iter().flatten().find_map(|o| match o {
            OptSpec::Timestamps { val, .. } => Some(*val),
            _ => None,
        });
        for o in &mut options {
            if let OptSpec::Timestamps { val, .. } = o {
                if let (None, Some(sv)) = (self.ts_offset, script_ts) {
                    self.ts_offset = Some(val.wrapping_sub(sv));
                }
                // Shown in the script's clock once the offset is known.
                if let Some(off) = self.ts_offset {
                    *val = val.wrapping_sub(off);
                }
            }
        }
        Decoded {
            flags,
            seq,
            len: tcp.payload().len() as u32,
            ack,
            win: tcp.window(),
            urgent: tcp.urgent(),
            options,
            options_len: raw.len(),
        }
    }

    fn compare(
        &self,
        ev: &Event,
        p: &PacketSpec,
        d: &Decoded,
        actual: Option<String>,
    ) -> Result<(), Failure> {
        let field = |name: &str, want: String, got: String| {
            self.fail(
                ev,
                format!("live packet field {name}: expected: {want} vs actual: {got}"),
                actual.clone(),
            )
        };
        if d.flags != p.flags {
            return Err(field("tcp_flags", flags_text(p.flags), flags_text(d.flags)));
        }
        if d.seq != p.seq {
            return Err(field("tcp_seq", p.seq.to_string(), d.seq.to_string()));
        }
        if d.len != p.len {
            return Err(field("tcp_data_len", p.len.to_string(), d.len.to_string()));
        }
        let want_ack = match p.ack {
            Some(a) => Some(a),
            None if p.flags & flag::ACK == 0 => Some(0),
            None => None,
        };
        if let Some(a) = want_ack {
            if d.ack != a {
                return Err(field("tcp_ack", a.to_string(), d.ack.to_string()));
            }
        }
        if let Some(w) = p.win {
            if d.win != w {
                return Err(field("tcp_window", w.to_string(), d.win.to_string()));
            }
        }
        if d.urgent != 0 {
            return Err(field("tcp_urg_ptr", "0".into(), d.urgent.to_string()));
        }
        match &p.options {
            None if d.options_len > 0 => {
                return Err(field(
                    "tcp_options",
                    "none".into(),
                    options_text(&d.options),
                ))
            }
            None => {}
            Some(want) => {
                // TS val is not checked: it is the engine's clock (packetdrill checks it
                // only with --tcp_ts_tick_usecs, which no script sets). TS ecr must echo
                // the scripted peer's TSval, which is literal.
                let norm = |o: &OptSpec| match o {
                    OptSpec::Timestamps { ecr, .. } => OptSpec::Timestamps { val: 0, ecr: *ecr },
                    o => o.clone(),
                };
                let mut w: Vec<OptSpec> = want.iter().map(norm).collect();
                let mut g: Vec<OptSpec> = d.options.iter().map(norm).collect();
                if self.options_as_set {
                    let pad = |o: &OptSpec| !matches!(o, OptSpec::Nop | OptSpec::Eol);
                    w.retain(pad);
                    g.retain(pad);
                    let key = |o: &OptSpec| o.to_string();
                    w.sort_by_key(key);
                    g.sort_by_key(key);
                }
                let same = w == g;
                if !same {
                    return Err(field(
                        "tcp_options",
                        options_text(want),
                        options_text(&d.options),
                    ));
                }
            }
        }
        Ok(())
    }

    fn finish(&mut self) {
        self.collect();
        let none = PacketSpec {
            direction: Direction::Outbound,
            flags: 0,
            seq: 0,
            len: 0,
            ack: None,
            win: None,
            options: None,
        };
        let pending: Vec<Emitted> = self.emitted.drain(..).collect();
        for e in pending {
            let text = match ackclock_wire::parse_ipv4_tcp(&e.bytes) {
                Ok(parsed) => self.describe(parsed.tcp, &none).text(e.at_ns),
                Err(err) => format!("{} malformed: {err}", secs(e.at_ns)),
            };
            self.warnings
                .push(format!("packet sent after the last expected one: {text}"));
        }
    }

    fn sock(&self, ev: &Event, fd: Option<i64>) -> Result<(i64, Sock), Failure> {
        let fd = fd.ok_or_else(|| self.fail(ev, "expected a file descriptor number", None))?;
        self.socks
            .get(&fd)
            .map(|s| (fd, *s))
            .ok_or_else(|| self.fail(ev, format!("fd {fd} is not an open socket"), None))
    }

    /// Runs one system call line: the call's own method gives the engine's answer (a
    /// value, and an errno name when it failed), which must be the script's result.
    fn syscall(&mut self, ev: &Event, s: &Syscall) -> Result<(), Failure> {
        let fd = s.args.first().and_then(Arg::int);
        let (ret, errno) = match s.name.as_str() {
            "socket" => self.sys_socket(ev, s)?,
            "fcntl" => self.sys_fcntl(ev, s, fd)?,
            "setsockopt" => self.sys_setsockopt(ev, s, fd)?,
            "bind" => self.sys_bind(ev, fd)?,
            "listen" => self.sys_listen(ev, s, fd)?,
            "accept" => self.sys_accept(ev, s, fd)?,
            "connect" => self.sys_connect(ev, fd)?,
            "getsockopt" => self.sys_getsockopt(ev, s, fd)?,
            "shutdown" => self.sys_shutdown(ev, s, fd)?,
            "read" | "recv" => self.sys_read(ev, s, fd)?,
            "write" | "send" => self.sys_write(ev, s, fd)?,
            "close" => self.sys_close(ev, fd)?,
            other => {
                return Err(self.fail(
                    ev,
                    format!(
                        "system call {other}() is not supported by this interpreter (socket, \
                         fcntl, setsockopt, bind, listen, accept, connect, getsockopt, \
                         shutdown, read, recv, write, send, close)"
                    ),
                    None,
                ))
            }
        };
        if ret != s.result || errno.map(str::to_string) != s.errno {
            let show = |r: i64, e: Option<&str>| match e {
                Some(e) => format!("{r} {e}"),
                None => r.to_string(),
            };
            return Err(self.fail(
                ev,
                format!(
                    "{}(): expected {} but the engine's answer is {}",
                    s.name,
                    show(s.result, s.errno.as_deref()),
                    show(ret, errno)
                ),
                None,
            ));
        }
        Ok(())
    }

    /// `socket(...)`: a fresh, blocking socket under the number the script expects, which
    /// becomes the socket under test. The arguments are not read (IPv4 TCP only).
    fn sys_socket(&mut self, ev: &Event, s: &Syscall) -> Result<CallResult, Failure> {
        let n = s.result;
        if n < 0 {
            return Err(self.fail(ev, "socket() is expected to succeed here", None));
        }
        self.socks.insert(
            n,
            Sock {
                state: SockState::Fresh,
                nonblocking: false,
                peer_syn_seen: false,
                error_read: false,
                tuple: None,
            },
        );
        self.under_test = Some(n);
        Ok((n, None))
    }

    /// `fcntl(fd, F_GETFL)` (`O_RDWR`, 2, with `O_NONBLOCK`, 4, when set) and
    /// `fcntl(fd, F_SETFL, flags)` (only `O_NONBLOCK` is kept).
    fn sys_fcntl(
        &mut self,
        ev: &Event,
        s: &Syscall,
        fd: Option<i64>,
    ) -> Result<CallResult, Failure> {
        let (fd, sock) = self.sock(ev, fd)?;
        match s.args.get(1).and_then(Arg::symbol) {
            Some("F_GETFL") => Ok((if sock.nonblocking { 2 | 4 } else { 2 }, None)),
            Some("F_SETFL") => {
                let nb = matches!(s.args.get(2), Some(Arg::Symbols(v)) if v.iter().any(|x| x == "O_NONBLOCK"));
                if let Some(x) = self.socks.get_mut(&fd) {
                    x.nonblocking = nb;
                }
                Ok((0, None))
            }
            _ => Err(self.fail(ev, "fcntl: only F_GETFL and F_SETFL", None)),
        }
    }

    /// `setsockopt(fd, level, SO_REUSEADDR, ...)`: accepted and without effect (each script
    /// has a fresh endpoint); any other option is an error.
    fn sys_setsockopt(
        &mut self,
        ev: &Event,
        s: &Syscall,
        fd: Option<i64>,
    ) -> Result<CallResult, Failure> {
        self.sock(ev, fd)?;
        match s.args.get(2).and_then(Arg::symbol) {
            Some("SO_REUSEADDR") => Ok((0, None)),
            other => Err(self.fail(
                ev,
                format!("setsockopt {other:?} is not supported (only SO_REUSEADDR)"),
                None,
            )),
        }
    }

    /// `bind(fd, ...)`: the address is not read; the socket is bound to [`PORT`].
    fn sys_bind(&mut self, ev: &Event, fd: Option<i64>) -> Result<CallResult, Failure> {
        let (fd, _) = self.sock(ev, fd)?;
        self.set_state(fd, SockState::Bound);
        Ok((0, None))
    }

    /// `listen(fd, backlog)`: the engine listens on [`PORT`] with the run's profile and this
    /// backlog (at least 1); `EADDRINUSE` when it refuses.
    fn sys_listen(
        &mut self,
        ev: &Event,
        s: &Syscall,
        fd: Option<i64>,
    ) -> Result<CallResult, Failure> {
        let (fd, _) = self.sock(ev, fd)?;
        let backlog = s.args.get(1).and_then(Arg::int).unwrap_or(1).max(1) as usize;
        match self.ep.listen(PORT, self.profile.tcp_config(), backlog) {
            Ok(()) => {
                self.set_state(fd, SockState::Listening);
                Ok((0, None))
            }
            Err(_) => Ok((-1, Some("EADDRINUSE"))),
        }
    }

    /// `accept(fd, ...)`: the listener's next established connection becomes a socket
    /// under the number the script expects (and the socket under test); `EINVAL` on a
    /// socket that does not listen, `EWOULDBLOCK` on a non-blocking one with nothing ready.
    /// A blocking accept with nothing ready is an error: the interpreter cannot wait.
    fn sys_accept(
        &mut self,
        ev: &Event,
        s: &Syscall,
        fd: Option<i64>,
    ) -> Result<CallResult, Failure> {
        let (_, sock) = self.sock(ev, fd)?;
        if sock.state != SockState::Listening {
            Ok((-1, Some("EINVAL")))
        } else if let Some(id) = self.ep.accept(PORT) {
            let n = s.result;
            self.socks.insert(
                n,
                Sock {
                    state: SockState::Conn(id),
                    nonblocking: sock.nonblocking,
                    peer_syn_seen: true,
                    error_read: false,
                    tuple: self.ep.conn(id).map(|c| (c.remote(), c.local())),
                },
            );
            self.under_test = Some(n);
            Ok((n, None))
        } else if sock.nonblocking {
            Ok((-1, Some("EWOULDBLOCK")))
        } else {
            Err(self.fail(
                ev,
                "accept() would block: no connection is ready (blocking calls are not \
                 supported)",
                None,
            ))
        }
    }

    /// `connect(fd, ...)` on a non-blocking socket: the engine opens a connection to the
    /// scripted peer's [`PORT`] with the run's profile and the call returns `EINPROGRESS`, as a
    /// non-blocking connect does; `EADDRNOTAVAIL` when the engine refuses.
    fn sys_connect(&mut self, ev: &Event, fd: Option<i64>) -> Result<CallResult, Failure> {
        let (fd, sock) = self.sock(ev, fd)?;
        if !sock.nonblocking {
            return Err(self.fail(
                ev,
                "blocking connect() is not supported: set O_NONBLOCK first",
                None,
            ));
        }
        let now = self.now();
        match self.ep.connect(
            now,
            SocketAddrV4::new(REMOTE_IP, PORT),
            self.profile.tcp_config(),
        ) {
            Ok(id) => {
                self.set_state(fd, SockState::Conn(id));
                let t = self.ep.conn(id).map(|c| (c.remote(), c.local()));
                if let Some(x) = self.socks.get_mut(&fd) {
                    x.tuple = t;
                }
                Ok((-1, Some("EINPROGRESS")))
            }
            Err(_) => Ok((-1, Some("EADDRNOTAVAIL"))),
        }
    }

    /// `getsockopt(fd, level, opt, [value], ...)`: the engine's `SO_RCVBUF` (profile F's
    /// receive buffer, rounded to the MSS once the peer's SYN was seen; profile L's
    /// `tcp_rmem[1]`, see [`Profile::rcvbuf`]) or `SO_ERROR` must be the `[value]` written.
    fn sys_getsockopt(
        &mut self,
        ev: &Event,
        s: &Syscall,
        fd: Option<i64>,
    ) -> Result<CallResult, Failure> {
        let (fd, sock) = self.sock(ev, fd)?;
        let opt = s.args.get(2).and_then(Arg::symbol);
        let want = match s.args.get(3) {
            Some(Arg::List(v)) if v.len() == 1 => v[0].clone(),
            _ => {
                return Err(self.fail(
                    ev,
                    "getsockopt: the 4th argument must be [expected value]",
                    None,
                ))
            }
        };
        let got: Arg = match opt {
            Some("SO_RCVBUF") => Arg::Int(self.profile.rcvbuf(sock.peer_syn_seen) as i64),
            Some("SO_ERROR") => match self.take_so_error(fd, sock) {
                None => Arg::Int(0),
                Some(e) => Arg::Symbols(vec![conn_errno(e).into()]),
            },
            other => {
                return Err(self.fail(
                    ev,
                    format!("getsockopt {other:?} is not supported (SO_RCVBUF, SO_ERROR)"),
                    None,
                ))
            }
        };
        if got != want {
            return Err(self.fail(
                ev,
                format!(
                    "getsockopt {}: expected [{}], the engine's is [{}]",
                    opt.unwrap_or("?"),
                    arg_text(&want),
                    arg_text(&got)
                ),
                None,
            ));
        }
        Ok((0, None))
    }

    /// The socket's pending error for `SO_ERROR`: its connection's, the first time it is
    /// read (BSD clears the pending error when it is read).
    fn take_so_error(&mut self, fd: i64, sock: Sock) -> Option<ConnectionError> {
        let e = match sock.state {
            SockState::Conn(id) if !sock.error_read => self.ep.conn(id).and_then(|c| c.error()),
            _ => None,
        };
        if e.is_some() {
            if let Some(x) = self.socks.get_mut(&fd) {
                x.error_read = true;
            }
        }
        e
    }

    /// `shutdown(fd, SHUT_WR)`: closes the connection's sending side (its FIN);
    /// `ENOTCONN` without a connection.
    fn sys_shutdown(
        &mut self,
        ev: &Event,
        s: &Syscall,
        fd: Option<i64>,
    ) -> Result<CallResult, Failure> {
        let (_, sock) = self.sock(ev, fd)?;
        match (sock.state, s.args.get(1).and_then(Arg::symbol)) {
            (SockState::Conn(id), Some("SHUT_WR")) => match self.ep.conn_mut(id) {
                Some(c) => match c.close() {
                    Ok(()) => Ok((0, None)),
                    Err(_) => Ok((-1, Some("ENOTCONN"))),
                },
                None => Ok((-1, Some("ENOTCONN"))),
            },
            (_, Some("SHUT_WR")) => Ok((-1, Some("ENOTCONN"))),
            _ => Err(self.fail(ev, "shutdown: only SHUT_WR is supported", None)),
        }
    }

    /// `read(fd, buf, len)` and `recv(fd, buf, len, flags)`: up to `len` bytes taken from
    /// the connection (with `MSG_PEEK`, counted and left there); 0 at the end of the peer's
    /// data, `EWOULDBLOCK` on a non-blocking socket with nothing to read, the connection's
    /// error when it was lost. A blocking read with nothing to read is an error.
    fn sys_read(
        &mut self,
        ev: &Event,
        s: &Syscall,
        fd: Option<i64>,
    ) -> Result<CallResult, Failure> {
        let (_, sock) = self.sock(ev, fd)?;
        let len = s.args.get(2).and_then(Arg::int).unwrap_or(0).max(0) as usize;
        let peek = s.name == "recv"
            && matches!(s.args.get(3), Some(Arg::Symbols(v)) if v.iter().any(|x| x == "MSG_PEEK"));
        let SockState::Conn(id) = sock.state else {
            return Err(self.fail(ev, format!("{}: fd is not connected", s.name), None));
        };
        let Some(c) = self.ep.conn_mut(id) else {
            return Err(self.fail(ev, format!("{}: the connection is gone", s.name), None));
        };
        let avail = c.recv_available();
        let r = if peek {
            if avail > 0 {
                Ok(avail.min(len))
            } else if c.is_eof() {
                Ok(0)
            } else {
                Err(RecvError::WouldBlock)
            }
        } else {
            let mut sink = vec![0u8; len.min(1 << 20)];
            c.recv(&mut sink)
        };
        match r {
            Ok(n) => Ok((n as i64, None)),
            Err(RecvError::WouldBlock) if sock.nonblocking => Ok((-1, Some("EWOULDBLOCK"))),
            Err(RecvError::WouldBlock) => Err(self.fail(
                ev,
                format!(
                    "{}() would block (blocking calls are not supported)",
                    s.name
                ),
                None,
            )),
            Err(RecvError::NotConnected) => Ok((-1, Some("ENOTCONN"))),
            Err(RecvError::Lost(e)) => Ok((-1, Some(conn_errno(e)))),
        }
    }

    /// `write(fd, buf, len)` and `send(fd, buf, len, flags)`: `len` zero bytes, as
    /// packetdrill's, into the send buffer; what fits is the result. Not in the FreeBSD
    /// selection; ackclock's own scripts send data. `EWOULDBLOCK` on a full buffer of a
    /// non-blocking socket, `EPIPE` when the connection sends no more (closed by the
    /// application, or in no state that sends), `ECONNRESET` after a reset and `ENOTCONN`
    /// after any other loss. A blocking write to a full buffer is an error.
    fn sys_write(
        &mut self,
        ev: &Event,
        s: &Syscall,
        fd: Option<i64>,
    ) -> Result<CallResult, Failure> {
        let (_, sock) = self.sock(ev, fd)?;
        let len = s.args.get(2).and_then(Arg::int).unwrap_or(0).max(0) as usize;
        let SockState::Conn(id) = sock.state else {
            return Err(self.fail(ev, format!("{}: fd is not connected", s.name), None));
        };
        let Some(c) = self.ep.conn_mut(id) else {
            return Err(self.fail(ev, format!("{}: the connection is gone", s.name), None));
        };
        let data = vec![0u8; len.min(1 << 24)];
        match c.send(&data) {
            Ok(0) if len > 0 && sock.nonblocking => Ok((-1, Some("EWOULDBLOCK"))),
            Ok(0) if len > 0 => Err(self.fail(
                ev,
                format!(
                    "{}() would block: the send buffer is full (blocking calls are not \
                     supported)",
                    s.name
                ),
                None,
            )),
            Ok(n) => Ok((n as i64, None)),
            Err(ackclock_tcp::SendError::Closed) => Ok((-1, Some("EPIPE"))),
            Err(ackclock_tcp::SendError::Lost(ConnectionError::Reset)) => {
                Ok((-1, Some("ECONNRESET")))
            }
            Err(ackclock_tcp::SendError::Lost(_)) => Ok((-1, Some("ENOTCONN"))),
        }
    }

    /// `close(fd)`: a listener stops listening; a connection is closed as
    /// [`Endpoint::close`] does (a FIN follows the queued data, and the engine removes the
    /// connection once it is fully closed). Returns 0 also when the connection is already
    /// closed or gone.
    fn sys_close(&mut self, ev: &Event, fd: Option<i64>) -> Result<CallResult, Failure> {
        let (fd, sock) = self.sock(ev, fd)?;
        match sock.state {
            SockState::Listening => self.ep.unlisten(PORT),
            // Already CLOSED or already reaped: close() still returns 0.
            SockState::Conn(id) => {
                let _ = self.ep.close(id);
            }
            _ => {}
        }
        self.set_state(fd, SockState::Closed);
        Ok((0, None))
    }

    fn set_state(&mut self, fd: i64, st: SockState) {
        if let Some(s) = self.socks.get_mut(&fd) {
            s.state = st;
        }
    }

    /// A backquoted shell line: `sysctl -w NAME=VALUE` (or `sysctl -q`, several settings in
    /// one line) must be the profile's value; under profile L, google/packetdrill's
    /// `../common/defaults.sh` is the profile itself; `sockstat ...` counts connections.
    fn shell(&mut self, ev: &Event, cmd: &str) -> Result<(), Failure> {
        let p = self.profile;
        if let Some(rest) = cmd
            .strip_prefix("sysctl -w ")
            .or_else(|| cmd.strip_prefix("sysctl -q "))
        {
            for (name, value) in sysctl_settings(rest)
                .ok_or_else(|| self.fail(ev, "sysctl wants NAME=VALUE", None))?
            {
                match p.sysctl(&name, &value) {
                    Sysctl::Matches => {}
                    Sysctl::Differs { profile } => {
                        return Err(self.fail(
                            ev,
                            format!(
                                "sysctl {name}={value} is not profile {}'s value ({profile}); \
                                 this run is profile {} only",
                                p.letter(),
                                p.letter()
                            ),
                            None,
                        ))
                    }
                    Sysctl::Unknown => {
                        return Err(self.fail(
                            ev,
                            format!("sysctl {name} is not known to profile {}", p.letter()),
                            None,
                        ))
                    }
                }
            }
            return Ok(());
        }
        if p == Profile::Linux && cmd.trim().ends_with("common/defaults.sh") {
            return Ok(());
        }
        if cmd.starts_with("sockstat") {
            return self.sockstat(ev, cmd);
        }
        Err(self.fail(
            ev,
            "unsupported shell command (only `sysctl -w NAME=VALUE`, `sysctl -q NAME=VALUE ...`, \
             `sockstat ... | grep -c STATE | grep N` and, under profile L, \
             `../common/defaults.sh`)",
            None,
        ))
    }

    /// `sockstat -4 -P tcp -s [-p 8080] | [grep packetdril |] grep -c STATE | grep N`: the
    /// number of the endpoint's connections in STATE (with port 8080 at either end when
    /// `-p 8080` is given) must be N.
    fn sockstat(&mut self, ev: &Event, cmd: &str) -> Result<(), Failure> {
        let stages: Vec<&str> = cmd.split('|').map(str::trim).collect();
        let bad = || {
            self.fail(
                ev,
                "unsupported sockstat form (expected `sockstat ... | grep -c STATE | grep N`)",
                None,
            )
        };
        let first: Vec<&str> = stages[0].split_whitespace().collect();
        let port = first
            .windows(2)
            .find(|w| w[0] == "-p")
            .map(|w| w[1].parse::<u16>())
            .transpose()
            .map_err(|_| bad())?;
        let mut state = None;
        let mut count = None;
        for st in &stages[1..] {
            let w: Vec<&str> = st.split_whitespace().collect();
            match w.as_slice() {
                ["grep", "packetdril"] => {}
                ["grep", "-c", s] => state = Some(s.to_string()),
                ["grep", n] if state.is_some() => {
                    count = Some(n.parse::<usize>().map_err(|_| bad())?);
                }
                _ => return Err(bad()),
            }
        }
        let (Some(state), Some(want)) = (state, count) else {
            return Err(bad());
        };
        let have = self
            .ep
            .connections()
            .filter(|(_, c)| state_sockstat(c.state()) == state)
            .filter(|(_, c)| port.is_none_or(|p| c.local().port() == p || c.remote().port() == p))
            .count();
        if have != want {
            return Err(self.fail(
                ev,
                format!("sockstat: {have} connection(s) in {state}, the script expects {want}"),
                None,
            ));
        }
        Ok(())
    }

    /// `tcpi_state` of the socket under test.
    fn tcpi_state(&self) -> &'static str {
        match self.under_test_sock().map(|s| s.state) {
            Some(SockState::Listening) => "TCPI_LISTEN",
            Some(SockState::Conn(id)) => self
                .ep
                .conn(id)
                .map_or("TCPI_CLOSED", |c| state_tcpi(c.state())),
            _ => "TCPI_CLOSED",
        }
    }

    fn assert_state(&mut self, ev: &Event, want: &str) -> Result<(), Failure> {
        let got = self.tcpi_state();
        if got != want {
            return Err(self.fail(
                ev,
                format!("assert tcpi_state: expected {want}, the engine's is {got}"),
                None,
            ));
        }
        Ok(())
    }

    /// The connection of the socket under test, if it has one.
    fn conn_under_test(&self) -> Option<&ackclock_tcp::Connection> {
        match self.under_test_sock().map(|s| s.state) {
            Some(SockState::Conn(id)) => self.ep.conn(id),
            _ => None,
        }
    }

    /// Notes an injected segment's ACK for `tcpi_ca_state`'s Disorder: a SACK block above
    /// the cumulative ACK (a D-SACK block below it does not count), or a duplicate ACK.
    fn note_ack(&mut self, p: &PacketSpec) {
        if p.flags & flag::ACK == 0 || p.flags & (flag::SYN | flag::RST) != 0 {
            return;
        }
        let Some(ack) = p.ack else { return };
        let above = |x: u32| (x.wrapping_sub(ack) as i32) > 0;
        let mut sack_seen = false;
        let mut sacked_above = false;
        for o in p.options.iter().flatten() {
            if let OptSpec::Sack(blocks) = o {
                sack_seen = true;
                sacked_above |= blocks
                    .iter()
                    .any(|&(l, r)| (l.wrapping_sub(ack) as i32) >= 0 && above(r));
            }
        }
        let flight = self.conn_under_test().map_or(0, |c| c.stats().flight_bytes);
        let dupack = !sack_seen
            && p.len == 0
            && p.flags & flag::FIN == 0
            && self.ca.last_ack == Some(ack)
            && flight > 0;
        self.ca.disorder = sacked_above || dupack;
        self.ca.last_ack = Some(ack);
    }

    /// Notes timeouts (the start of Linux's Loss state) and undos (its end when a timeout
    /// was spurious) of the connection under test.
    fn observe(&mut self) {
        let Some(c) = self.conn_under_test() else {
            return;
        };
        let st = c.stats();
        let (una, _, max) = c.send_sequence();
        let (una, max) = (una.get(), max.get());
        if st.timeouts > self.ca.timeouts {
            self.ca.loss_high = Some(max);
        }
        if st.undos > self.ca.undos {
            self.ca.loss_high = None;
        }
        if let Some(h) = self.ca.loss_high {
            if (una.wrapping_sub(h) as i32) >= 0 {
                self.ca.loss_high = None;
            }
        }
        self.ca.timeouts = st.timeouts;
        self.ca.undos = st.undos;
    }

    /// The value of a TCP_INFO field, as Linux's `tcp_get_info` would report it, derived
    /// from the engine's [`Stats`](ackclock_tcp::Stats):
    ///
    /// - `tcpi_snd_cwnd`, `tcpi_snd_ssthresh`: bytes divided by the send MSS, rounded down
    ///   (Linux counts packets); an ssthresh never set reads 2147483647 (Linux's
    ///   `TCP_INFINITE_SSTHRESH`). During a PRR recovery the engine keeps cwnd at ssthresh
    ///   and gates sending by PRR's quota, where Linux sets cwnd = pipe + SndCnt per ACK.
    /// - `tcpi_ca_state`: 4 (Loss) from a timeout until SND.UNA passes the SND.NXT of the
    ///   timeout, or until the timeout is undone; 3 (Recovery) while the engine is in fast
    ///   recovery; 1 (Disorder) when the peer's last ACK SACKed data above SND.UNA or was a
    ///   duplicate ACK; 0 (Open) otherwise. 2 (CWR, an ECN reduction) is never reported:
    ///   profile L has ECN off as `defaults.sh` does.
    /// - `tcpi_retransmits`, `tcpi_backoff`: the RTO's backoff shift (Linux resets
    ///   `icsk_retransmits` on an ACK of new data; the engine keeps the backoff until a valid
    ///   RTT sample, RFC 6298 §5 and Karn).
    /// - `tcpi_total_retrans`: segments retransmitted (`Stats::retransmitted_segs`).
    /// - `tcpi_unacked`: SND.NXT - SND.UNA in segments, rounded up.
    /// - `tcpi_reordering`: the configured duplicate-ACK threshold (the engine does not
    ///   raise it on reordering as Linux does; RACK's reordering window adapts instead).
    /// - `tcpi_rtt`, `tcpi_rttvar`, `tcpi_rto`, `tcpi_min_rtt`: microseconds.
    fn tcpi_value(&self, field: &str) -> Option<i64> {
        let c = self.conn_under_test()?;
        let st = c.stats();
        let mss = i64::from(st.snd_mss.max(1));
        let us = |d: ackclock_wire::Duration| (d.as_nanos() / 1000) as i64;
        Some(match field {
            "tcpi_snd_cwnd" => i64::from(st.cwnd_bytes) / mss,
            "tcpi_snd_ssthresh" if st.ssthresh_bytes >= 1 << 30 => 0x7fff_ffff,
            "tcpi_snd_ssthresh" => i64::from(st.ssthresh_bytes) / mss,
            "tcpi_ca_state" => {
                if self.ca.loss_high.is_some() {
                    4
                } else if st.in_recovery {
                    3
                } else if self.ca.disorder {
                    1
                } else {
                    0
                }
            }
            "tcpi_retransmits" | "tcpi_backoff" => i64::from(c.rtt_estimator().backoff_shift()),
            "tcpi_total_retrans" => st.retransmitted_segs as i64,
            "tcpi_unacked" => (i64::from(st.flight_bytes) + mss - 1) / mss,
            "tcpi_reordering" => i64::from(c.config().dupack_threshold),
            "tcpi_snd_mss" => i64::from(st.snd_mss),
            "tcpi_rtt" => us(st.srtt),
            "tcpi_rttvar" => us(st.rttvar),
            "tcpi_rto" => us(st.rto),
            "tcpi_min_rtt" => st.min_rtt.map_or(0, us),
            "tcpi_snd_wscale" => i64::from(st.snd_wscale),
            "tcpi_rcv_wscale" => i64::from(st.rcv_wscale),
            _ => return None,
        })
    }

    /// A `%{ }%` block: every assertion must hold for the socket under test.
    fn assert_info(&mut self, ev: &Event, asserts: &[InfoAssert]) -> Result<(), Failure> {
        for a in asserts {
            if a.field == "tcpi_state" {
                let got = self.tcpi_state();
                for (op, v) in &a.checks {
                    let InfoValue::Symbol(want) = v else { continue };
                    if (got == want) != (*op == CmpOp::Eq) {
                        return Err(self.fail(
                            ev,
                            format!("assert {}: the engine's tcpi_state is {got}", a.text),
                            None,
                        ));
                    }
                }
                continue;
            }
            let Some(got) = self.tcpi_value(&a.field) else {
                return Err(self.fail(
                    ev,
                    format!(
                        "assert {}: no connection under test to read {} from",
                        a.text, a.field
                    ),
                    None,
                ));
            };
            for (op, v) in &a.checks {
                let InfoValue::Int(want) = v else { continue };
                if !op.holds(got, *want) {
                    return Err(self.fail(
                        ev,
                        format!("assert {}: the engine's {} is {got}", a.text, a.field),
                        None,
                    ));
                }
            }
        }
        Ok(())
    }
}

/// `NAME=VALUE NAME="V A L" ...` of a sysctl line, quotes removed; `None` when a word has
/// no `=`.
fn sysctl_settings(text: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut words = Vec::new();
    let (mut cur, mut quoted) = (String::new(), false);
    for ch in text.chars() {
        match ch {
            '"' | '\'' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    for w in words {
        let (n, v) = w.split_once('=')?;
        out.push((n.trim().to_string(), v.trim().to_string()));
    }
    (!out.is_empty()).then_some(out)
}

/// The errno a socket call reports for a connection lost this way (and `SO_ERROR`'s value).
fn conn_errno(e: ConnectionError) -> &'static str {
    match e {
        ConnectionError::Refused => "ECONNREFUSED",
        ConnectionError::Reset => "ECONNRESET",
        ConnectionError::TimedOut => "ETIMEDOUT",
        ConnectionError::Aborted => "ECONNABORTED",
    }
}

fn arg_text(a: &Arg) -> String {
    match a {
        Arg::Ellipsis => "...".into(),
        Arg::Int(v) => v.to_string(),
        Arg::Symbols(s) => s.join(" | "),
        Arg::List(v) => format!(
            "[{}]",
            v.iter().map(arg_text).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// Appends the wire form of one option; `map_sack` turns a script-space SACK edge into
/// the engine's sequence space.
fn encode_option(o: &OptSpec, out: &mut Vec<u8>, map_sack: impl Fn(u32) -> u32) {
    match o {
        OptSpec::Eol => out.push(0),
        OptSpec::Nop => out.push(1),
        OptSpec::Mss(m) => out.extend_from_slice(&[2, 4, (m >> 8) as u8, *m as u8]),
        OptSpec::WindowScale(s) => out.extend_from_slice(&[3, 3, *s]),
        OptSpec::SackPermitted => out.extend_from_slice(&[4, 2]),
        OptSpec::Sack(blocks) => {
            out.extend_from_slice(&[5, 2 + 8 * blocks.len() as u8]);
            for (l, r) in blocks {
                out.extend_from_slice(&map_sack(*l).to_be_bytes());
                out.extend_from_slice(&map_sack(*r).to_be_bytes());
            }
        }
        OptSpec::Timestamps { val, ecr } => {
            out.extend_from_slice(&[8, 10]);
            out.extend_from_slice(&val.to_be_bytes());
            out.extend_from_slice(&ecr.to_be_bytes());
        }
    }
}

/// Reads an options area byte by byte, as packetdrill compares it: every EOL byte is an
/// option (FreeBSD pads with EOLs); SACK blocks mapped by `map_sack`. Unknown or
/// malformed options end the list with what could be read.
fn decode_options(raw: &[u8], map_sack: impl Fn(u32) -> u32) -> Vec<OptSpec> {
    let mut out = Vec::new();
    let mut i = 0;
    let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    while i < raw.len() {
        match raw[i] {
            0 => {
                out.push(OptSpec::Eol);
                i += 1;
                continue;
            }
            1 => {
                out.push(OptSpec::Nop);
                i += 1;
                continue;
            }
            _ => {}
        }
        let Some(&len) = raw.get(i + 1) else { break };
        let len = len as usize;
        if len < 2 || i + len > raw.len() {
            break;
        }
        let body = &raw[i + 2..i + len];
        match (raw[i], len) {
            (2, 4) => out.push(OptSpec::Mss(u16::from_be_bytes([body[0], body[1]]))),
            (3, 3) => out.push(OptSpec::WindowScale(body[0])),
            (4, 2) => out.push(OptSpec::SackPermitted),
            (8, 10) => out.push(OptSpec::Timestamps {
                val: be32(&body[0..4]),
                ecr: be32(&body[4..8]),
            }),
            (5, l) if (l - 2) % 8 == 0 => out.push(OptSpec::Sack(
                body.chunks_exact(8)
                    .map(|c| (map_sack(be32(&c[0..4])), map_sack(be32(&c[4..8]))))
                    .collect(),
            )),
            _ => break,
        }
        i += len;
    }
    out
}

/// An IPv4+TCP packet from the scripted peer: correct checksums, TTL 64, zero payload.
#[allow(clippy::too_many_arguments)]
fn build_packet(
    src: SocketAddrV4,
    dst: SocketAddrV4,
    seq: u32,
    ack: u32,
    flags: u8,
    win: u16,
    options: &[u8],
    payload_len: usize,
) -> Vec<u8> {
    let tcp_len = 20 + options.len() + payload_len;
    let mut pkt = vec![0u8; ipv4::HEADER_LEN + tcp_len];
    let ip = ipv4::Ipv4Header::new(*src.ip(), *dst.ip(), ackclock_wire::IPPROTO_TCP);
    // The length fits: options <= 40 bytes and LEN <= 65535 are checked by the parser;
    // a total above 65535 would be refused by emit, which cannot happen below 65535-60.
    let _ = ip.emit(&mut pkt, tcp_len);
    let t = &mut pkt[ipv4::HEADER_LEN..];
    t[0..2].copy_from_slice(&src.port().to_be_bytes());
    t[2..4].copy_from_slice(&dst.port().to_be_bytes());
    t[4..8].copy_from_slice(&seq.to_be_bytes());
    t[8..12].copy_from_slice(&ack.to_be_bytes());
    t[12] = (((20 + options.len()) / 4) as u8) << 4;
    t[13] = flags;
    t[14..16].copy_from_slice(&win.to_be_bytes());
    t[20..20 + options.len()].copy_from_slice(options);
    let ph = checksum::pseudo_header_sum(
        *src.ip(),
        *dst.ip(),
        ackclock_wire::IPPROTO_TCP,
        tcp_len as u16,
    );
    let sum = checksum::add(ph, checksum::sum(t));
    t[16..18].copy_from_slice(&(!sum).to_be_bytes());
    pkt
}
