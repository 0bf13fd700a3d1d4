//! An echo server (RFC 862) on a Linux TUN device: the engine driven by hand, with the
//! wall clock, against the kernel's own TCP. Needs root (or CAP_NET_ADMIN).
//!
//! ```text
//! sudo cargo run -p ackclock-tun --example echo_server -- [--connections N] [--seconds S]
//! # in another terminal, as the program says:
//! sudo ip netns exec ackclock-echo-<pid> nc 198.18.99.2 7
//! ```
//!
//! The program creates a network namespace of its own (so nothing on the machine's own
//! network changes), a TUN device inside it with the kernel's address 198.18.99.1, and
//! answers as 198.18.99.2 on port 7: every byte a client sends comes back, and when the
//! client closes, the server closes too. It exits after `N` connections have ended (default
//! 1) or after `S` seconds (default 60), and removes the namespace.
//!
//! The loop is the `Endpoint` calling protocol in its plainest form (the `ackclock-tun`
//! crate's `Host` does the same with epoll and a timerfd):
//!
//! 1. wait until a packet arrives on the device or the engine's next timer is due;
//! 2. hand each packet to `handle_packet`, and run `handle_timeout` when the timer is due;
//! 3. let the application act on the engine's events (`poll_event`): accept, read, write
//!    back, close;
//! 4. drain `poll_transmit` into the device, then read `poll_timeout` again.
//!
//! Time for the engine is nanoseconds since the program started, from `CLOCK_MONOTONIC`.

use ackclock_tcp::{ConnId, Endpoint, EndpointConfig, Event, TcpConfig};
use ackclock_tun::netcfg::NetNs;
use ackclock_tun::sys::{monotonic_ns, random_bytes};
use ackclock_tun::{Device, DeviceConfig};
use ackclock_wire::Instant;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::process::ExitCode;

const KERNEL: Ipv4Addr = Ipv4Addr::new(198, 18, 99, 1);
const OURS: Ipv4Addr = Ipv4Addr::new(198, 18, 99, 2);
const PORT: u16 = 7;

struct Args {
    connections: u64,
    seconds: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        connections: 1,
        seconds: 60,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| -> Result<u64, String> {
            it.next()
                .and_then(|v| v.parse().ok())
                .filter(|&v| v > 0)
                .ok_or_else(|| format!("{name} takes a whole number above 0"))
        };
        match flag.as_str() {
            "--connections" => a.connections = value("--connections")?,
            "--seconds" => a.seconds = value("--seconds")?.min(86_400),
            _ => {
                return Err(format!(
                    "unknown argument {flag:?}; try --connections N --seconds S"
                ))
            }
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if !ackclock_tun::is_root() {
        eprintln!("error: the echo server needs root (TUN devices and network namespaces)");
        return ExitCode::from(2);
    }
    match serve(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Echoes what can be sent now: what the send buffer cannot take stays in the receive
/// buffer, whose closing window slows the client down (flow control); `Writable` brings us
/// back when there is room. Once the client's FIN has been read, everything was echoed
/// and the server closes (its FIN follows the echo still queued).
fn echo(ep: &mut Endpoint, id: ConnId, data: &mut [u8]) {
    let Some(c) = ep.conn_mut(id) else { return };
    while c.send_capacity() > 0 {
        let room = c.send_capacity().min(data.len());
        let n = c.recv(&mut data[..room]).unwrap_or(0);
        if n == 0 {
            break;
        }
        let _ = c.send(&data[..n]);
    }
    if c.is_eof() {
        let _ = ep.close(id);
    }
}

fn serve(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    // The namespace is deleted when `ns` is dropped, on every way out of this function.
    let ns = NetNs::create(&format!("ackclock-echo-{}", std::process::id()))?;
    let dev = Device::open(&DeviceConfig {
        name: "ackecho%d".into(),
        netns: Some(ns.name().to_string()),
        kernel_addr: KERNEL,
        our_addr: OURS,
        ..DeviceConfig::default()
    })?;

    // The ISN secret (RFC 6528) must be unpredictable to others: from the OS.
    let mut key = [0u8; 16];
    random_bytes(&mut key)?;
    let mut ep = Endpoint::new(EndpointConfig::new(OURS, key));
    let cfg = TcpConfig::modern();
    ep.listen(PORT, cfg.clone(), 16)?;
    println!(
        "echo on {OURS}:{PORT}; try: sudo ip netns exec {} nc {OURS} {PORT}",
        ns.name()
    );

    let start = monotonic_ns();
    let now = || Instant::from_nanos(monotonic_ns() - start);
    let deadline = now() + ackclock_wire::Duration::from_secs(args.seconds);
    // Room for the largest packet the engine writes: the MSS plus 80 bytes of headers.
    let mut out = vec![0u8; usize::from(cfg.mss) + 80];
    let mut pkt = vec![0u8; 65536];
    let mut data = vec![0u8; 16384];
    let mut ended = 0u64;
    while ended < args.connections && now() < deadline {
        // 1. Sleep until a packet comes or the next timer (at most until the deadline).
        let wake = ep.poll_timeout().map_or(deadline, |t| t.min(deadline));
        let ms = wake.saturating_since(now()).as_nanos().div_ceil(1_000_000);
        let mut pfd = libc::pollfd {
            fd: dev.tun.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; the timeout is bounded by the deadline.
        unsafe { libc::poll(&mut pfd, 1, ms.min(i32::MAX as u64) as i32) };

        // 2. Input and timers.
        while let Some(n) = dev.tun.recv(&mut pkt)? {
            ep.handle_packet(now(), &pkt[..n]);
        }
        ep.handle_timeout(now());

        // 3. The application, driven by the engine's events: accept, echo what arrived,
        //    close when the client has.
        while let Some(event) = ep.poll_event() {
            match event {
                Event::Incoming { port } => {
                    while let Some(id) = ep.accept(port) {
                        let peer = ep.conn(id).map(|c| c.remote().to_string());
                        println!("connection from {}", peer.unwrap_or_default());
                    }
                }
                // Data to echo, room again for what did not fit before, or the client's FIN
                // (echoed to the end first).
                Event::Readable(id) | Event::Writable(id) | Event::PeerClosed(id) => {
                    echo(&mut ep, id, &mut data)
                }
                Event::Closed { conn: _, error } => {
                    ended += 1;
                    if let Some(e) = error {
                        println!("connection ended: {e}");
                    }
                }
                Event::Connected(_) => {}
            }
        }

        // 4. Output: everything the engine has to send, then loop to read its timer again.
        let t = now();
        while let Some(tx) = ep.poll_transmit(t, &mut out) {
            dev.tun.send(&out[..tx.len])?;
        }
    }
    // Let the last FIN and ACKs out: serve the remaining closes for up to a second.
    let linger = now() + ackclock_wire::Duration::from_secs(1);
    while ep.connections().count() > 0 && now() < linger {
        while let Some(n) = dev.tun.recv(&mut pkt)? {
            ep.handle_packet(now(), &pkt[..n]);
        }
        ep.handle_timeout(now());
        let t = now();
        while let Some(tx) = ep.poll_transmit(t, &mut out) {
            dev.tun.send(&out[..tx.len])?;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    println!("{ended} connection(s) served");
    Ok(())
}
