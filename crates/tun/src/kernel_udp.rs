//! Linux's own UDP as a host's sockets: non-blocking kernel sockets ([`KernelUdp`], the
//! [`UdpSockets`] an application binds on), and a loop that runs an [`App`] on them with
//! the wall clock ([`KernelHost`]). The Linux side of a live test runs our RPC server,
//! stream receiver (or client, or sender) on real kernel UDP with it, so the peer of the
//! TUN host's UDP stack is the kernel's. No root needed.
//!
//! Datagrams are read with `recvmsg` and `IP_RECVTOS`, so the ECN field each one arrived
//! with is known (RFC 3168 §6.1's "the ECN field ... passed up to the transport"), and
//! `MSG_TRUNC`, so the length returned is the datagram's even when the buffer is shorter
//! (as [`UdpStack::recv_from`](ackclock_dgram::UdpStack::recv_from) returns it), and
//! `SO_RXQ_OVFL`, so datagrams the kernel dropped at a full receive buffer are counted.

use crate::clock::Clock;
use crate::host::RunEnd;
use crate::signals::Signals;
use crate::sys::{Epoll, Timer};
use crate::Error;
use ackclock_apps::dgram::report::UdpReport;
use ackclock_apps::{App, Ctx};
use ackclock_dgram::{DatagramSocket, DgramError, SocketId, UdpSockets};
use ackclock_tcp::{Endpoint, EndpointConfig};
use ackclock_wire::Instant;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;

/// Datagrams one turn of [`KernelHost::run`] reads at most before it looks at the signals
/// again: a flood keeps the socket readable, and the loop must still see a SIGTERM. The
/// TUN host's `RX_BATCH`; no more than an RPC server's default queue (64), which takes
/// all a turn reads before it serves any (a larger budget dropped requests at the queue
/// that a server with no service time would have answered at once).
pub const RECV_BUDGET: usize = crate::host::RX_BATCH;

/// Counters of a kernel socket.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelUdpStats {
    /// Datagrams read from the socket.
    pub datagrams_in: u64,
    /// UDP payload bytes of those datagrams: each one's full length, even when the
    /// buffer it was read into was shorter (`MSG_TRUNC`).
    pub bytes_in: u64,
    /// Datagrams the kernel accepted from `sendto`.
    pub datagrams_out: u64,
    /// UDP payload bytes of those datagrams.
    pub bytes_out: u64,
    /// Sends the kernel refused for lack of buffer space (EAGAIN, ENOBUFS): the datagram
    /// is lost, as a full interface queue loses it.
    pub send_refused: u64,
    /// Sends that failed otherwise (no route, ICMP errors reported on the socket...).
    pub send_errors: u64,
    /// Reads that failed with an error other than EAGAIN or EINTR (the errno is kept in
    /// `last_errno`); each ends that turn's reading on the socket.
    pub recv_errors: u64,
    /// Datagrams the kernel dropped because the socket's receive buffer was full
    /// (`SO_RXQ_OVFL`: the counter of the last datagram read).
    pub rx_queue_drops: u64,
    /// The errno of the last failure, for the report.
    pub last_errno: Option<i32>,
}

/// A non-blocking kernel UDP socket (IPv4).
pub struct KernelUdpSocket {
    sock: UdpSocket,
    local: SocketAddrV4,
    /// Datagrams read in this turn of the loop.
    turn_reads: usize,
    budget: usize,
    /// The socket's counters.
    pub stats: KernelUdpStats,
}

impl KernelUdpSocket {
    /// Binds a socket to `addr` (port 0: an ephemeral one the kernel picks), makes it
    /// non-blocking (`O_NONBLOCK`), and turns on `IP_RECVTOS` and `SO_RXQ_OVFL`
    /// (`setsockopt`).
    ///
    /// # Errors
    /// `bind` (the port in use, say), `fcntl`, `setsockopt` or `getsockname` failed.
    pub fn bind(addr: SocketAddrV4) -> Result<KernelUdpSocket, Error> {
        let sock = UdpSocket::bind(addr)
            .map_err(|e| Error::Io(format!("binding a UDP socket to {addr}"), e))?;
        sock.set_nonblocking(true)
            .map_err(|e| Error::Io("making the UDP socket non-blocking".into(), e))?;
        for (level, opt, name) in [
            (libc::IPPROTO_IP, libc::IP_RECVTOS, "IP_RECVTOS"),
            (libc::SOL_SOCKET, libc::SO_RXQ_OVFL, "SO_RXQ_OVFL"),
        ] {
            let one: libc::c_int = 1;
            // SAFETY: a valid socket and a c_int option value of its size.
            let r = unsafe {
                libc::setsockopt(
                    sock.as_raw_fd(),
                    level,
                    opt,
                    (&one as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
            if r != 0 {
                return Err(Error::Io(
                    format!("setsockopt {name}"),
                    io::Error::last_os_error(),
                ));
            }
        }
        let local = match sock.local_addr() {
            Ok(std::net::SocketAddr::V4(a)) => a,
            Ok(other) => {
                return Err(Error::Config(format!(
                    "the UDP socket is bound to {other}, not an IPv4 address"
                )))
            }
            Err(e) => return Err(Error::Io("getsockname".into(), e)),
        };
        Ok(KernelUdpSocket {
            sock,
            local,
            turn_reads: 0,
            budget: usize::MAX,
            stats: KernelUdpStats::default(),
        })
    }

    /// The address the socket is bound to (`getsockname` at bind time: an ephemeral
    /// port is the one the kernel gave).
    pub fn local(&self) -> SocketAddrV4 {
        self.local
    }

    /// Starts a turn of a loop that reads at most `budget` datagrams per turn.
    pub fn begin_turn(&mut self, budget: usize) {
        self.turn_reads = 0;
        self.budget = budget;
    }

    /// Whether this turn read as many datagrams as its budget allows (more may wait).
    pub fn budget_spent(&self) -> bool {
        self.turn_reads >= self.budget
    }

    fn recv_raw(&mut self, buf: &mut [u8]) -> io::Result<Option<(usize, SocketAddrV4, u8)>> {
        // SAFETY (all blocks below): recvmsg is given a valid msghdr whose name, iovec and
        // control buffer point to live, writable memory of the sizes stated; the cmsg
        // walk uses the kernel's own macros on that buffer.
        let mut name: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // Room for the IP_TOS and SO_RXQ_OVFL control messages (aligned as cmsghdr
        // wants: u64 words).
        let mut control = [0u64; 16];
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_name = (&mut name as *mut libc::sockaddr_in).cast();
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        let n = unsafe { libc::recvmsg(self.sock.as_raw_fd(), &mut msg, libc::MSG_TRUNC) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
                _ => Err(e),
            };
        }
        let mut tos = 0u8;
        let mut c = unsafe { libc::CMSG_FIRSTHDR(&msg) };
        while !c.is_null() {
            let h = unsafe { &*c };
            if h.cmsg_level == libc::IPPROTO_IP && h.cmsg_type == libc::IP_TOS {
                tos = unsafe { *libc::CMSG_DATA(c) };
            } else if h.cmsg_level == libc::SOL_SOCKET && h.cmsg_type == libc::SO_RXQ_OVFL {
                let drops = unsafe { std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<u32>()) };
                self.stats.rx_queue_drops = u64::from(drops);
            }
            c = unsafe { libc::CMSG_NXTHDR(&msg, c) };
        }
        let from = SocketAddrV4::new(
            Ipv4Addr::from(u32::from_be(name.sin_addr.s_addr)),
            u16::from_be(name.sin_port),
        );
        Ok(Some((n as usize, from, tos & 0x03)))
    }
}

impl DatagramSocket for KernelUdpSocket {
    fn send_to(&mut self, dst: SocketAddrV4, payload: &[u8]) -> bool {
        match self.sock.send_to(payload, dst) {
            Ok(_) => {
                self.stats.datagrams_out += 1;
                self.stats.bytes_out += payload.len() as u64;
                true
            }
            Err(e) => {
                match e.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::ENOBUFS) => self.stats.send_refused += 1,
                    _ => self.stats.send_errors += 1,
                }
                self.stats.last_errno = e.raw_os_error();
                false
            }
        }
    }

    fn recv_from(&mut self, buf: &mut [u8]) -> Option<(usize, SocketAddrV4, u8)> {
        if self.turn_reads >= self.budget {
            return None;
        }
        match self.recv_raw(buf) {
            Ok(Some(r)) => {
                self.turn_reads += 1;
                self.stats.datagrams_in += 1;
                self.stats.bytes_in += r.0 as u64;
                Some(r)
            }
            Ok(None) => None,
            Err(e) => {
                // An error queued on the socket (an ICMP error for an earlier send); it
                // is cleared by this read. Counted, and the read ends for this turn.
                self.stats.recv_errors += 1;
                self.stats.last_errno = e.raw_os_error();
                None
            }
        }
    }
}

/// The kernel sockets of a [`KernelHost`]: the UDP an application binds its sockets on,
/// at one address (0.0.0.0: all of this machine's).
pub struct KernelUdp {
    addr: Ipv4Addr,
    socks: Vec<KernelUdpSocket>,
    /// The bind that failed last, for the report.
    pub bind_error: Option<String>,
}

impl KernelUdp {
    /// Sockets bound at `addr`.
    pub fn new(addr: Ipv4Addr) -> KernelUdp {
        KernelUdp {
            addr,
            socks: Vec::new(),
            bind_error: None,
        }
    }
    /// The sockets bound so far.
    pub fn sockets(&self) -> &[KernelUdpSocket] {
        &self.socks
    }
    /// The counters of all sockets, as a datagram application's report gives them.
    pub fn report(&self) -> UdpReport {
        let mut r = UdpReport::default();
        for k in self.socks.iter().map(|s| &s.stats) {
            r.datagrams_in += k.datagrams_in;
            r.bytes_in += k.bytes_in;
            r.datagrams_out += k.datagrams_out;
            r.bytes_out += k.bytes_out;
            r.send_refused += k.send_refused + k.send_errors;
            r.receive_drops += k.rx_queue_drops + k.recv_errors;
        }
        r
    }
    fn begin_turn(&mut self, budget: usize) {
        for s in &mut self.socks {
            s.begin_turn(budget);
        }
    }
    fn budget_spent(&self) -> bool {
        self.socks.iter().any(KernelUdpSocket::budget_spent)
    }
}

impl UdpSockets for KernelUdp {
    fn open(&mut self, port: u16) -> Result<SocketId, DgramError> {
        let at = SocketAddrV4::new(self.addr, port);
        match KernelUdpSocket::bind(at) {
            Ok(s) => {
                self.socks.push(s);
                Ok(SocketId::from_index(self.socks.len() as u32 - 1))
            }
            Err(e) => {
                let errno = match &e {
                    Error::Io(_, io) => io.raw_os_error(),
                    _ => None,
                };
                self.bind_error = Some(e.to_string());
                Err(match errno {
                    Some(libc::EADDRINUSE) => DgramError::PortInUse(port),
                    Some(n) => DgramError::Os(n),
                    None => DgramError::NotBound,
                })
            }
        }
    }
    fn local_addr(&self, s: SocketId) -> Option<SocketAddrV4> {
        self.socks
            .get(s.index() as usize)
            .map(KernelUdpSocket::local)
    }
    fn send(&mut self, s: SocketId, dst: SocketAddrV4, payload: &[u8]) -> bool {
        self.socks
            .get_mut(s.index() as usize)
            .is_some_and(|k| k.send_to(dst, payload))
    }
    fn recv(&mut self, s: SocketId, buf: &mut [u8]) -> Option<(usize, SocketAddrV4, u8)> {
        self.socks.get_mut(s.index() as usize)?.recv_from(buf)
    }
}

const TOKEN_SOCKET: u64 = 1;
const TOKEN_TIMER: u64 = 2;
const TOKEN_SIGNAL: u64 = 3;

/// Applications on kernel sockets, driven by a poll loop with the wall clock (the
/// kernel-socket counterpart of [`Host`](crate::Host)). It has no TUN device: its
/// [`Endpoint`] is there because every [`App`] is handed one, and carries nothing (a TCP
/// application there would connect to nothing), so it runs datagram applications.
pub struct KernelHost {
    /// The kernel sockets the application binds.
    pub udp: KernelUdp,
    /// An endpoint with no device behind it.
    ep: Endpoint,
    /// The host's clock.
    pub clock: Clock,
    epoll: Epoll,
    timer: Timer,
    signals: Signals,
    /// Sockets already watched by `epoll`.
    watched: usize,
    /// Turns of the loop.
    pub turns: u64,
    /// Turns that slept.
    pub sleeps: u64,
}

impl KernelHost {
    /// A host whose sockets bind at `addr` (0.0.0.0: all addresses); the clock starts now.
    /// Creates the epoll set, the timerfd and the SIGINT/SIGTERM handlers, which stay
    /// installed while the host lives.
    ///
    /// # Errors
    /// One of those system calls failed.
    pub fn new(addr: Ipv4Addr) -> Result<KernelHost, Error> {
        let clock = Clock::new();
        let epoll = Epoll::new().map_err(|e| Error::Io("epoll_create".into(), e))?;
        let timer = Timer::new().map_err(|e| Error::Io("timerfd_create".into(), e))?;
        let signals =
            Signals::new().map_err(|e| Error::Io("installing signal handlers".into(), e))?;
        epoll
            .add(timer.as_raw_fd(), TOKEN_TIMER)
            .and_then(|_| epoll.add(signals.fd(), TOKEN_SIGNAL))
            .map_err(|e| Error::Io("epoll_ctl".into(), e))?;
        Ok(KernelHost {
            udp: KernelUdp::new(addr),
            ep: Endpoint::new(EndpointConfig::new(addr, [0; 16])),
            clock,
            epoll,
            timer,
            signals,
            watched: 0,
            turns: 0,
            sleeps: 0,
        })
    }

    /// Watches the sockets the application bound since the last look.
    fn watch_new_sockets(&mut self) -> Result<(), Error> {
        while self.watched < self.udp.socks.len() {
            let fd = self.udp.socks[self.watched].sock.as_raw_fd();
            self.epoll
                .add(fd, TOKEN_SOCKET)
                .map_err(|e| Error::Io("epoll_ctl".into(), e))?;
            self.watched += 1;
        }
        Ok(())
    }

    /// Runs the application until it is done or a signal stops it. Each turn: one poll of
    /// the application (reading at most [`RECV_BUDGET`] datagrams per socket), then,
    /// unless a budget ran out, a sleep until a socket is readable, the application's next
    /// wake, or a signal. The first SIGINT/SIGTERM stops the application (it has no
    /// connection to close), so the loop returns at the next turn.
    ///
    /// # Errors
    /// The timerfd or epoll failed (the sockets' own errors are counted, not returned).
    pub fn run(&mut self, app: &mut dyn App) -> Result<RunEnd, Error> {
        let mut stopping = false;
        loop {
            self.turns += 1;
            let now = self.clock.now();
            self.udp.begin_turn(RECV_BUDGET);
            let wake = app.poll(&mut Ctx::new(now, &mut self.ep, &mut self.udp));
            self.watch_new_sockets()?;
            if app.is_done() || stopping {
                return Ok(if stopping {
                    RunEnd::Interrupted
                } else {
                    RunEnd::Done
                });
            }
            if self.udp.budget_spent() {
                // More is probably waiting: no sleep, but a look at the signals.
                if self.signals.take() > 0 {
                    let now = self.clock.now();
                    app.shutdown(&mut Ctx::new(now, &mut self.ep, &mut self.udp));
                    stopping = true;
                }
                continue;
            }
            // A time not after `now` was this poll's business already.
            let deadline = wake.filter(|t| *t > now);
            self.timer
                .set(deadline.map(|t| self.clock.to_monotonic_ns(t)))
                .map_err(|e| Error::Io("timerfd_settime".into(), e))?;
            self.sleeps += 1;
            let (mut signalled, mut timer_fired) = (false, false);
            self.epoll
                .wait(-1, |tok| match tok {
                    TOKEN_SIGNAL => signalled = true,
                    TOKEN_TIMER => timer_fired = true,
                    _ => {}
                })
                .map_err(|e| Error::Io("epoll_wait".into(), e))?;
            if timer_fired {
                self.timer.clear();
            }
            if signalled && self.signals.take() > 0 {
                let now = self.clock.now();
                app.shutdown(&mut Ctx::new(now, &mut self.ep, &mut self.udp));
                stopping = true;
            }
        }
    }

    /// The clock's reading now (for reports after the run).
    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    /// The sockets' counters and the loop's, as `--kernel` commands print them.
    pub fn counters_text(&self) -> String {
        let mut out = String::new();
        for s in &self.udp.socks {
            let k = &s.stats;
            out.push_str(&format!(
                "socket             {}: {} datagrams in ({} bytes), {} out ({} bytes); {} sends refused by the kernel, {} failed, {} dropped at the full receive buffer; {} loop turns, {} sleeps\n",
                s.local, k.datagrams_in, k.bytes_in, k.datagrams_out, k.bytes_out, k.send_refused, k.send_errors, k.rx_queue_drops, self.turns, self.sleeps
            ));
            if let Some(e) = k.last_errno {
                out.push_str(&format!(
                    "socket error       last: {}\n",
                    std::io::Error::from_raw_os_error(e)
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackclock_apps::dgram::{RpcClientApp, RpcServerApp, Schedule};
    use ackclock_dgram::rpc::{rpc_rtt_config, RpcClientConfig, RpcServer, Timer};
    use ackclock_wire::Duration;

    const LOOPBACK: Ipv4Addr = Ipv4Addr::LOCALHOST;

    /// Reads one datagram, waiting (bounded) for it to arrive.
    fn recv_within(s: &mut KernelUdpSocket, buf: &mut [u8]) -> (usize, SocketAddrV4, u8) {
        let end = std::time::Instant::now() + std::time::Duration::from_secs(2);
        loop {
            if let Some(r) = s.recv_from(buf) {
                return r;
            }
            assert!(std::time::Instant::now() < end, "nothing arrived");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// RFC 3168 §6.1: the ECN field reaches the transport; and a datagram's length is its
    /// own, not the buffer's (as `UdpStack::recv_from` returns it).
    #[test]
    fn a_kernel_socket_reads_the_full_length_the_source_and_the_ecn_field() {
        let mut rx = KernelUdpSocket::bind(SocketAddrV4::new(LOOPBACK, 0)).unwrap();
        let tx = UdpSocket::bind((LOOPBACK, 0)).unwrap();
        let ect0: libc::c_int = 0x02;
        // SAFETY: a valid socket and a c_int option value of its size.
        let r = unsafe {
            libc::setsockopt(
                tx.as_raw_fd(),
                libc::IPPROTO_IP,
                libc::IP_TOS,
                (&ect0 as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(r, 0);
        tx.send_to(&[7u8; 1500], rx.local()).unwrap();
        let mut buf = [0u8; 20];
        let (n, from, ecn) = recv_within(&mut rx, &mut buf);
        assert_eq!(n, 1500);
        assert_eq!(buf, [7u8; 20]);
        assert_eq!(std::net::SocketAddr::V4(from), tx.local_addr().unwrap());
        assert_eq!(ecn, 0x02);
        assert_eq!((rx.stats.datagrams_in, rx.stats.bytes_in), (1, 1500));
        // And what we send arrives.
        assert!(rx.send_to(from, b"answer"));
        let mut b = [0u8; 16];
        let (m, src) = tx.recv_from(&mut b).unwrap();
        assert_eq!(
            (&b[..m], src),
            (&b"answer"[..], std::net::SocketAddr::V4(rx.local()))
        );
    }

    #[test]
    fn a_turn_reads_at_most_its_budget() {
        let mut rx = KernelUdpSocket::bind(SocketAddrV4::new(LOOPBACK, 0)).unwrap();
        let tx = UdpSocket::bind((LOOPBACK, 0)).unwrap();
        for i in 0..100u8 {
            tx.send_to(&[i], rx.local()).unwrap();
        }
        let mut b = [0u8; 4];
        // Loopback delivers at once; wait for the first to be safe.
        let _ = recv_within(&mut rx, &mut b);
        rx.begin_turn(64);
        let mut n = 0;
        while rx.recv_from(&mut b).is_some() {
            n += 1;
        }
        assert_eq!(n, 64);
        assert!(rx.budget_spent());
        rx.begin_turn(64);
        let mut m = 0;
        while rx.recv_from(&mut b).is_some() {
            m += 1;
        }
        assert_eq!(m, 99 - 64);
        assert!(!rx.budget_spent());
        assert_eq!(rx.stats.rx_queue_drops, 0);
    }

    /// Our client and server, each on a kernel socket with its own loop and clock, over
    /// loopback: every request is answered, the server's time limit ends it.
    #[test]
    fn kernel_hosts_run_an_rpc_client_against_an_rpc_server() {
        let mut srv_host = KernelHost::new(LOOPBACK).unwrap();
        let mut srv_app = RpcServerApp::new(
            RpcServer::new(Duration::ZERO, 64, 1472),
            0,
            Schedule::live(Some(Duration::from_millis(1500))),
        );
        let at = srv_app.bind_now(&mut srv_host.udp).unwrap();
        let srv = std::thread::spawn(move || {
            let end = srv_host.run(&mut srv_app).unwrap();
            (end, srv_app.server().stats().clone())
        });
        let mut host = KernelHost::new(LOOPBACK).unwrap();
        let mut app = RpcClientApp::new(
            RpcClientConfig {
                requests: Some(50),
                timer: Timer::Adaptive(rpc_rtt_config()),
                ..RpcClientConfig::nfs(at)
            },
            "nfs",
            Schedule::live(None),
        );
        assert_eq!(host.run(&mut app).unwrap(), RunEnd::Done);
        let st = app.client().unwrap().stats();
        assert_eq!((st.issued, st.completed, st.failed), (50, 50, 0));
        assert_eq!(host.udp.sockets()[0].stats.datagrams_in, 50);
        let (end, s) = srv.join().unwrap();
        assert_eq!(end, RunEnd::Done);
        assert_eq!(s.requests, st.transmissions);
        assert_eq!(s.responses, s.requests);
    }
}
