//! BBR against Linux's BBR (root only; SKIP otherwise): the same emulated path
//! (`ackclock emulate`, 50 Mbit/s, 15 ms each way, a drop-tail buffer of one BDP, 125
//! packets) carries Linux-BBR-to-Linux and ackclock-BBR (`--preset linux --cc bbr`) to
//! Linux, and `ackclock analyze` on the emulator's pcap (the same tool for both) gives
//! goodput and the RTT of each segment sent once. The bands are what
//! `bench/live/bbr_vs_linux.py` measured (BENCHMARKS.md, "BBR against Linux's BBR"), with
//! room for a loaded machine; the engine is not tuned toward them.
//!
//! One emulator per transfer, so that each capture holds one connection. Every namespace is
//! named with the test's PID and deleted on drop, every process ended by its PID, every wait
//! bounded. Run time: about 10 s.

mod live_common;

use live_common::*;

/// ackclock's goodput at least this share of Linux's (the 15%, with room: measured
/// 0.95-1.0).
const BAND_GOODPUT: f64 = 0.8;
/// ackclock's median RTT at most this multiple of Linux's (the 25%, with room:
/// measured 0.9-1.0).
const BAND_RTT: f64 = 1.4;

const PATH: [&str; 6] = [
    "--rate",
    "50mbit",
    "--delay",
    "15ms",
    "--queue",
    "droptail:125",
];

/// Cardwell et al. (2016): BBR paces at its estimate of the bottleneck rate and keeps about
/// one BDP in flight, so its goodput is near the link's and its queue short; both stacks'
/// BBR v1 should fill the 50 Mbit/s path alike, with RTTs near the 30 ms of the path. A 16
/// MiB transfer each (about 3 s).
#[test]
fn bbr_against_linux_bbr() {
    if !can_run("bbr_against_linux_bbr", &["socat", "ss", "sysctl"]) {
        return;
    }
    let d = TmpDir::new("bbr-live");
    let file = d.path("bulk.bin");
    write_random_file(&file, 16 << 20, 28);
    let (linux, _) = emulated_transfer(&d, "linux", "bb", &PATH, &file, Sender::LinuxWith("bbr"));
    let (ack, own) = emulated_transfer(
        &d,
        "ackclock",
        "bb",
        &PATH,
        &file,
        Sender::Ackclock(&["--preset", "linux", "--cc", "bbr"]),
    );
    let own = own.unwrap();
    println!(
        "goodput: Linux {:.1} Mbit/s, ackclock {:.1} Mbit/s; RTT p50: Linux {:.1} ms, \
         ackclock {:.1} ms; retransmitted: Linux {}, ackclock {} (its timeouts {})",
        linux.goodput_mbps,
        ack.goodput_mbps,
        linux.rtt_p50_ms,
        ack.rtt_p50_ms,
        linux.rexmt,
        ack.rexmt,
        own["timeouts"]
    );
    assert!(
        ack.goodput_mbps >= BAND_GOODPUT * linux.goodput_mbps,
        "ackclock BBR's goodput below the band: {ack:?} vs Linux {linux:?}"
    );
    assert!(
        ack.rtt_p50_ms <= BAND_RTT * linux.rtt_p50_ms,
        "ackclock BBR's median RTT above the band: {ack:?} vs Linux {linux:?}"
    );
}
