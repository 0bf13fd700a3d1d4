//! Loss recovery against Linux 6.x (root only; SKIP otherwise): the same emulated path
//! (`ackclock emulate`, 50 Mbit/s, 15 ms each way, 100 packets of drop-tail) carries
//! Linux-to-Linux and ackclock (`--preset linux`) to Linux, and the figures of
//! `ackclock analyze` on the emulator's pcap (the same tool for both) are held to bands
//! measured with `bench/live/rack_vs_linux.py` (BENCHMARKS.md, "Loss recovery against Linux
//! (RACK-TLP, PRR, F-RTO)"). The bands are what was measured, with room for a loaded
//! machine; the engine is not tuned toward them.
//!
//! - A tail loss: a 30-segment transfer whose last two data segments are dropped once (the
//!   emulator's scripted drop). RFC 8985 §7: the tail loss probe makes the receiver SACK
//!   the probe, RACK (§6.2) then finds the other hole, and the transfer ends about an RTO
//!   sooner than with the timer alone.
//! - Reordering: a bulk transfer through 3% of packets held back 10 ms (a third of the
//!   RTT). RACK's reordering window (RFC 8985 §6.2 step 4) and the undo of needless
//!   reductions (RFC 3708 D-SACK, RFC 3522 timestamps) keep spurious retransmissions and
//!   goodput near Linux's.
//!
//! One emulator per transfer, so that each capture holds one connection; the two tests take
//! a lock so that their transfers never share the machine's two cores. Every namespace is
//! named with the test's PID and deleted on drop, every process ended by its PID, every wait
//! bounded. Run time: about 15 s.

mod live_common;

use live_common::*;
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

/// Reordering bands (`reordering_against_linux`), from its measured worst cases with room: a
/// spurious-retransmission ratio of 4.7 (band 6, at least 20 allowed) and a goodput share of
/// 0.78 (band 0.6).
const BAND_SPURIOUS: u64 = 6;
const BAND_SPURIOUS_FLOOR: u64 = 20;
const BAND_GOODPUT: f64 = 0.6;

const MSS: usize = 1448;
const PATH: [&str; 6] = [
    "--rate",
    "50mbit",
    "--delay",
    "15ms",
    "--queue",
    "droptail:100",
];

/// A transfer on this test's path (with `extra` emulator flags).
fn transfer(
    d: &TmpDir,
    tag: &str,
    extra: &[&str],
    file: &std::path::Path,
    sender: Sender,
) -> (Figures, Option<serde_json::Value>) {
    let mut path: Vec<&str> = PATH.to_vec();
    path.extend(extra);
    emulated_transfer(d, tag, "rk", &path, file, sender)
}

/// Tail loss, last 2 of 30 segments dropped once. Measured (29 Nov 2026, 25 runs of this
/// test; completion = SYN to the last packet of the connection, analyze's duration): Linux
/// 204-237 ms (two modes: 204-209 and 233-237), ackclock with TLP 221-280 ms, ackclock
/// without TLP (`--loss-detection rack`: the RTO repairs the tail) 389-442 ms; 2
/// retransmissions and no spurious one in every run. Bands: ackclock's probe beats its own
/// RTO by at least 50 ms (measured 111-219 ms); ackclock's completion is at most 1.7 times
/// Linux's (measured 0.94-1.36); each sender retransmits exactly the 2 dropped segments, none
/// spuriously. Before RACK.min_RTT was taken on the engine's clock with the handshake in it,
/// 5 runs in 40 ended in a timeout after the probe: the probe's SACK came back a few
/// microseconds under the minimum RTT and was taken for the original's (RFC 8985 §6.2 step 2).
#[test]
fn tail_loss_probe_against_linux() {
    if !can_run("tail_loss_probe_against_linux", &["socat", "ss"]) {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = TmpDir::new("rack-tail");
    let file = d.path("tail.bin");
    write_random_file(&file, 30 * MSS, 26);
    // The emulator's scripted drop (gateway `ScriptedDrop::DataSegment`): the 29th and 30th
    // data segments toward port 5001, counted per connection, retransmissions included, so
    // only the first transmissions are lost.
    let cfg = d.path("tail.toml");
    std::fs::write(
        &cfg,
        "[left_to_right]\nimpairments = { scripted = [ { kind = \"data_segment\", \
         dst_port = 5001, nth = [29, 30] } ] }\n",
    )
    .unwrap();
    let extra = ["--config", cfg.to_str().unwrap()];
    let (linux, _) = transfer(&d, "linux", &extra, &file, Sender::Linux);
    let (tlp, tlp_own) = transfer(
        &d,
        "tlp",
        &extra,
        &file,
        Sender::Ackclock(&["--preset", "linux"]),
    );
    let (rto, rto_own) = transfer(
        &d,
        "rto",
        &extra,
        &file,
        Sender::Ackclock(&["--preset", "linux", "--loss-detection", "rack"]),
    );
    let (tlp_own, rto_own) = (tlp_own.unwrap(), rto_own.unwrap());
    println!(
        "completion: Linux {:.0} ms, ackclock TLP {:.0} ms, ackclock RTO {:.0} ms",
        linux.duration_s * 1e3,
        tlp.duration_s * 1e3,
        rto.duration_s * 1e3
    );
    // RFC 8985 §7.3: one probe; §7.4: it and RACK repair the tail without a timeout.
    assert_eq!(tlp_own["tlp_probes"], 1, "{tlp_own}");
    assert_eq!(tlp_own["timeouts"], 0, "{tlp_own}");
    assert_eq!(rto_own["timeouts"], 1, "{rto_own}");
    for (who, f) in [
        ("Linux", &linux),
        ("ackclock TLP", &tlp),
        ("ackclock RTO", &rto),
    ] {
        assert_eq!(f.rexmt, 2, "{who}: {f:?}");
        assert_eq!(f.spurious, 0, "{who}: {f:?}");
    }
    assert!(
        tlp.duration_s + 0.050 <= rto.duration_s,
        "the probe should beat the RTO by 50 ms: {tlp:?} vs {rto:?}"
    );
    assert!(
        tlp.duration_s <= 1.7 * linux.duration_s,
        "ackclock's tail recovery beyond 1.7 times Linux's: {tlp:?} vs {linux:?}"
    );
}

/// Reordering: 3% of packets (both ways) held back 10 ms, a third of the 30 ms RTT, beyond
/// RACK's first reordering window of min_RTT/4 = 7.5 ms (RFC 8985 §6.2 step 4), so both
/// stacks retransmit some segments needlessly until D-SACK widens it. An 8 MiB transfer
/// each. Measured in this test (6 runs, 29 Nov 2026, after the undo fixes of `40e051e` and
/// `ea74ee8`): Linux 3-6 spurious retransmissions (D-SACK) and 42.4-43.1 Mbit/s; ackclock
/// 3-5 (at most 1.7 times Linux's) and 33.6-42.5 Mbit/s (0.78 to 1.0 of Linux's). With the
/// preset's classic HyStart (9 runs, same day): Linux 2-5, ackclock 3 or 4 in eight runs and
/// 14 in one (Linux 3 then), 36.4-42.5 Mbit/s. Before the undo fixes ackclock had 5 to 70
/// spurious ones and 0.39 to 0.96 of Linux's goodput: its early spurious fast recoveries in
/// slow start were seldom undone and never taught RACK that the path reorders
/// (BENCHMARKS.md). Bands: ackclock's spurious retransmissions at most BAND_SPURIOUS times
/// Linux's (at least BAND_SPURIOUS_FLOOR allowed, so that a Linux run with almost none does
/// not decide alone), its goodput at least BAND_GOODPUT of Linux's.
#[test]
fn reordering_against_linux() {
    if !can_run("reordering_against_linux", &["socat", "ss"]) {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = TmpDir::new("rack-reorder");
    let file = d.path("bulk.bin");
    write_random_file(&file, 8 << 20, 27);
    let extra = ["--reorder", "3%:10ms"];
    let (linux, _) = transfer(&d, "linux", &extra, &file, Sender::Linux);
    let (ack, own) = transfer(
        &d,
        "ackclock",
        &extra,
        &file,
        Sender::Ackclock(&["--preset", "linux"]),
    );
    let own = own.unwrap();
    println!(
        "spurious retransmissions: Linux {} of {}, ackclock {} of {} (undos {}); goodput: \
         Linux {:.1} Mbit/s, ackclock {:.1} Mbit/s",
        linux.spurious,
        linux.rexmt,
        ack.spurious,
        ack.rexmt,
        own["undos"],
        linux.goodput_mbps,
        ack.goodput_mbps
    );
    assert!(
        ack.spurious <= (BAND_SPURIOUS * linux.spurious).max(BAND_SPURIOUS_FLOOR),
        "ackclock's spurious retransmissions beyond the band: {ack:?} vs Linux {linux:?}"
    );
    assert!(
        ack.goodput_mbps >= BAND_GOODPUT * linux.goodput_mbps,
        "ackclock's goodput below the band: {ack:?} vs Linux {linux:?}"
    );
}
