//! RFC 9406 HyStart++ in the engine (`TcpConfig::hystart`), for AIMD and CUBIC, over a
//! path whose queue never overflows: slow start alone never ends (no loss, ssthresh stays
//! unbounded, the queue and the RTT grow without limit), while HyStart++ sees the round's
//! minimum RTT rise as the queue builds, goes through Conservative Slow Start and enters
//! congestion avoidance with ssthresh = cwnd, without a loss.

use ackclock_tcp::{HyStart, InitialWindow, Stats, TcpConfig};
use ackclock_testkit::pair::{send_for, Harness, PipeConfig};
use ackclock_wire::{Duration, Instant};

/// A 10 Mbit/s path with 20 ms each way (a BDP of 50 KB) and an unbounded queue: `secs`
/// of bulk transfer; the sender's statistics at the end.
fn run(c: TcpConfig, secs: u64) -> Stats {
    let mut h = Harness::new(
        5,
        PipeConfig {
            delay: Duration::from_millis(20),
            rate_bps: 10_000_000,
            queue_limit_pkts: 0,
            ..PipeConfig::default()
        },
    );
    let ca = h.open(9, c.clone(), c);
    send_for(&mut h, ca, Instant::ZERO + Duration::from_secs(secs))
}

fn config(base: TcpConfig, hystart: HyStart) -> TcpConfig {
    TcpConfig {
        hystart,
        timestamps: true,
        window_scale: true,
        initial_window: InitialWindow::Segments(10),
        send_buffer_bytes: 4 << 20,
        recv_buffer_bytes: 4 << 20,
        ..base
    }
}

/// RFC 9406 §4.2: the delay increase ends slow start into CSS, and CSS_ROUNDS later
/// congestion avoidance begins with ssthresh = cwnd, before any loss; the window then grows
/// by the controller's congestion avoidance (CUBIC's from W_max = cwnd at the exit, K = 0:
/// 676 KB after 3 s here, AIMD's by a segment a round trip). Standard slow start on the same
/// path has no loss to stop it: ssthresh stays unbounded and the window runs far past the
/// path (3.5 MB after 3 s, the queue absorbing it all).
#[test]
fn rfc9406_4_2_hystart_plus_plus_enters_congestion_avoidance_without_a_loss() {
    for base in [TcpConfig::newreno(), TcpConfig::cubic()] {
        let name = format!("{:?}", base.congestion)
            .chars()
            .take(5)
            .collect::<String>();
        let off = run(config(base.clone(), HyStart::Off), 3);
        let pp = run(config(base, HyStart::PlusPlus), 3);
        assert_eq!(
            off.retransmitted_segs + pp.retransmitted_segs,
            0,
            "{name}: no loss"
        );
        // (CUBIC keeps its threshold in segments: "unbounded" is u32::MAX less rounding.)
        assert!(off.ssthresh_bytes > 1 << 30, "{name}: {off:?}");
        assert!(pp.ssthresh_bytes < 1 << 30, "{name}: {pp:?}");
        assert!(
            off.cwnd_bytes > 4 * pp.cwnd_bytes,
            "{name}: cwnd {} with HyStart++, {} without",
            pp.cwnd_bytes,
            off.cwnd_bytes
        );
    }
}

/// Linux CUBIC's HyStart (`hystart = "classic"`, the `linux` preset's) on the same path: the
/// ACK train or the delay rise ends slow start with ssthresh = cwnd, without a loss, and
/// sooner than HyStart++ (no Conservative Slow Start in between).
#[test]
fn classic_hystart_ends_slow_start_without_a_loss_before_hystart_plus_plus_would() {
    for base in [TcpConfig::newreno(), TcpConfig::cubic()] {
        let name = format!("{:?}", base.congestion)
            .chars()
            .take(5)
            .collect::<String>();
        let classic = run(config(base.clone(), HyStart::Classic), 1);
        let pp = run(config(base, HyStart::PlusPlus), 1);
        assert_eq!(classic.retransmitted_segs, 0, "{name}: no loss");
        assert!(classic.ssthresh_bytes < 1 << 30, "{name}: {classic:?}");
        assert!(
            classic.ssthresh_bytes <= pp.ssthresh_bytes,
            "{name}: classic left slow start at {} bytes, HyStart++ at {}",
            classic.ssthresh_bytes,
            pp.ssthresh_bytes
        );
    }
}
