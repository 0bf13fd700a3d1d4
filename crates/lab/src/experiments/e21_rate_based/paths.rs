//! The four paths of experiment 21, the TCPs run on them, and the list of runs (the plan's
//! order): each run is a [`Case`], and `reduce` and `measure` find a run's meaning by its
//! index in [`cases`].

use crate::suite::Params;
use ackclock_gateway::{DropTailConfig, ImpairmentsConfig, QdiscConfig};
use ackclock_sim::Scenario;
use ackclock_tcp::config::CongestionName;

/// The paths, each from a seed message or from the BBR paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Net {
    /// Experiment 5's Satnet: 40 kb/s, 2.048 s, 256-byte packets (the base scenario).
    Satnet,
    /// Experiment 6's Satnet trace: 35.05 kb/s, 2.2 s, 460-byte packets, 42 packets of buffer,
    /// bit errors.
    Trace,
    /// A fat pipe: 100 Mbit/s x 100 ms, one BDP of drop-tail buffer, random loss (the BBR
    /// paper's loss figure; Dumazet's netperf test at a tenth of a tenth of its rate).
    Fat,
    /// Experiment 13's buffer-sizing path: 10 Mbit/s x 120 ms, no random loss.
    Buffer,
}

/// The TCPs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tcp {
    /// 4.3BSD-Tahoe, the seeds' TCP (preset `tahoe`).
    Tahoe,
    /// 4.3BSD-Reno (preset `reno`).
    Reno,
    /// Linux with `cc = "reno"`: the seeds' window rule with SACK, RACK-TLP and PRR.
    LinuxReno,
    /// Linux's default, CUBIC.
    Cubic,
    /// BBR v1 (Linux's `tcp_bbr.c`).
    Bbr,
    /// BBR v3.
    Bbr3,
}

impl Tcp {
    /// The name in the tables and figures.
    pub fn label(self) -> &'static str {
        match self {
            Tcp::Tahoe => "Tahoe",
            Tcp::Reno => "Reno",
            Tcp::LinuxReno => "Reno (Linux)",
            Tcp::Cubic => "CUBIC",
            Tcp::Bbr => "BBR v1",
            Tcp::Bbr3 => "BBR v3",
        }
    }

    /// Whether it is one of the BBRs (their Satnet runs are traced, to time the floor).
    pub fn is_bbr(self) -> bool {
        matches!(self, Tcp::Bbr | Tcp::Bbr3)
    }
}

/// What a run changes besides the path, the TCP and the loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// As the path says.
    Plain,
    /// A receiver window of two pipes, the seed message's, instead of four.
    TwoPipes,
    /// D-SACK off (RFC 2883): RACK's reordering window then never grows (RFC 8985 §6.2).
    NoDsack,
}

/// One run of the plan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Case {
    /// The path.
    pub net: Net,
    /// The TCP.
    pub tcp: Tcp,
    /// The packet loss probability (Satnet, fat pipe) or the bit error rate (trace); 0: none.
    pub loss: f64,
    /// The bottleneck's buffer in bandwidth-delay products (buffer path only).
    pub buffer: f64,
    /// What else differs.
    pub variant: Variant,
    /// The RNG seed.
    pub seed: u64,
}

/// Satnet (experiment 5): the channel's rate and round trip, the packet and its payload.
pub const SATNET_RATE: f64 = 40e3;
/// Satnet's pipe in packets (40 x 256 bytes at 40 kb/s = 2.048 s).
pub const SATNET_PIPE: usize = 40;
const SATNET_PKT: f64 = 256.0;
/// Satnet's segment.
pub const SATNET_MSS: usize = 216;
/// The Satnet trace (experiment 6): 4000 B/s of 420-byte segments in 460-byte packets, a
/// one-way delay that makes the unloaded round trip 2.2 s, 2 x bandwidth x delay of buffer.
pub const TRACE_RATE: f64 = 35047.6;
const TRACE_DELAY_MS: f64 = 1041.7;
const TRACE_PKT: f64 = 460.0;
/// The trace's segment.
pub const TRACE_MSS: usize = 420;
/// The trace's pipe in packets (2.2 s x 4000 B/s / 420 B).
pub const TRACE_PIPE: usize = 21;
const TRACE_BUFFER: usize = 42;
/// The trace's bit error rate: 0.66% of 460-byte packets.
pub const TRACE_BER: f64 = 1.8e-6;
/// The fat pipe: rate and round trip (the BBR paper's loss figure: 100 Mbit/s, 100 ms).
pub const FAT_RATE: f64 = 100e6;
/// The buffer path: rate (experiment 13's bottleneck).
pub const BUFFER_RATE: f64 = 10e6;
/// Round trips of the fat pipe and of the buffer path, in seconds.
pub const FAT_RTT: f64 = 0.1;
/// See [`FAT_RTT`].
pub const BUFFER_RTT: f64 = 0.12;
/// Linux's segments on the fat pipe and the buffer path: 1460 bytes less 12 of timestamps,
/// in 1500-byte packets; ACKs of 52 bytes.
pub const LINUX_PAYLOAD: f64 = 1448.0;
const PKT: f64 = 1500.0;
const ACK: f64 = 52.0;
/// Send and receive buffers on the fat pipe and the buffer path: 13 BDPs of the fat pipe, so
/// that neither end's buffer is what limits a sender repairing a hole.
const BIG_BUFFER: usize = 16 << 20;

/// The bandwidth-delay product of the fat pipe or the buffer path, in 1500-byte packets.
pub fn bdp_pkts(net: Net) -> f64 {
    match net {
        Net::Fat => FAT_RATE * FAT_RTT / (PKT * 8.0),
        Net::Buffer => BUFFER_RATE * BUFFER_RTT / (PKT * 8.0),
        Net::Satnet => SATNET_PIPE as f64,
        Net::Trace => TRACE_PIPE as f64,
    }
}

/// The rate at which a path can carry payload (its link rate times payload per packet), in
/// bits per second: what goodput is divided by for an efficiency.
pub fn data_rate(net: Net) -> f64 {
    match net {
        Net::Satnet => SATNET_RATE * SATNET_MSS as f64 / SATNET_PKT,
        Net::Trace => TRACE_RATE * TRACE_MSS as f64 / TRACE_PKT,
        Net::Fat => FAT_RATE * LINUX_PAYLOAD / PKT,
        Net::Buffer => BUFFER_RATE * LINUX_PAYLOAD / PKT,
    }
}

/// The bottleneck's link rate, in bits per second.
pub fn link_rate(net: Net) -> f64 {
    match net {
        Net::Satnet => SATNET_RATE,
        Net::Trace => TRACE_RATE,
        Net::Fat => FAT_RATE,
        Net::Buffer => BUFFER_RATE,
    }
}

/// The bottleneck's one-way delay that makes the unloaded round trip `rtt` behind a host
/// link of `r0` b/s and `d0` ms: the rest of the round trip is the serialization of a
/// 1500-byte packet and of an ACK on both links.
fn one_way_ms(rtt: f64, r0: f64, d0_ms: f64, r1: f64) -> f64 {
    let ser = (PKT + ACK) * 8.0 * (1.0 / r0 + 1.0 / r1);
    ((rtt - ser) * 1e3 - 2.0 * d0_ms) / 2.0
}

fn drop_tail(limit: usize) -> Option<QdiscConfig> {
    Some(QdiscConfig::DropTail(DropTailConfig {
        mark_threshold_pkts: None,
        limit_pkts: Some(limit),
        limit_bytes: None,
    }))
}

/// The scenario of `case`, `dur` seconds long, from the base (the Satnet path).
pub fn scenario(base: &Scenario, c: &Case, dur: f64, trace: bool) -> Scenario {
    let mut s = base.clone();
    s.seed = c.seed;
    s.duration_s = dur;
    s.output.trace = trace;
    // Queue samples are kept for the buffer path's queue figures; elsewhere one a second.
    s.output.sample_ms = if c.net == Net::Buffer { 10.0 } else { 1000.0 };
    let impair = |x: ImpairmentsConfig| (c.loss > 0.0).then_some(x);
    let loss = ImpairmentsConfig {
        loss_prob: Some(c.loss),
        ..Default::default()
    };
    match c.net {
        Net::Satnet => s.link[1].impair_ab = impair(loss),
        Net::Trace => {
            s.link[1].rate_bps = TRACE_RATE;
            s.link[1].delay_ms = TRACE_DELAY_MS;
            s.link[1].queue = drop_tail(TRACE_BUFFER);
            s.link[1].impair_ab = impair(ImpairmentsConfig {
                ber: Some(c.loss),
                ..Default::default()
            });
        }
        Net::Fat | Net::Buffer => {
            let (r0, d0, r1, rtt) = if c.net == Net::Fat {
                (10e9, 0.05, FAT_RATE, FAT_RTT)
            } else {
                (100e6, 1.0, BUFFER_RATE, BUFFER_RTT)
            };
            let limit = if c.net == Net::Fat {
                bdp_pkts(Net::Fat).ceil() as usize
            } else {
                (c.buffer * bdp_pkts(Net::Buffer)).round() as usize
            };
            // A host queue that never drops: the sender's own interface is not the subject.
            s.link[0].rate_bps = r0;
            s.link[0].delay_ms = d0;
            s.link[0].queue = drop_tail(100_000);
            s.link[1].rate_bps = r1;
            s.link[1].delay_ms = one_way_ms(rtt, r0, d0, r1);
            s.link[1].queue = drop_tail(limit);
            s.link[1].impair_ab = impair(loss);
        }
    }
    configure(&mut s, c);
    s
}

/// The flow's TCP and its overrides on `c`'s path.
fn configure(s: &mut Scenario, c: &Case) {
    let f = &mut s.flow[0];
    let (preset, cc) = match c.tcp {
        Tcp::Tahoe => ("tahoe", None),
        Tcp::Reno => ("reno", None),
        Tcp::LinuxReno => ("linux", Some(CongestionName::Aimd)),
        Tcp::Cubic => ("linux", None),
        Tcp::Bbr => ("linux", Some(CongestionName::Bbr)),
        Tcp::Bbr3 => ("linux", Some(CongestionName::Bbr3)),
    };
    f.tcp = preset.to_string();
    let o = &mut f.tcp_overrides;
    o.cc = cc;
    match c.net {
        Net::Satnet | Net::Trace => {
            // Four pipes of receiver window for every TCP (see the scenario file's header);
            // the seed message's two for the variant that asks for them.
            let (pipe, mss) = if c.net == Net::Satnet {
                (SATNET_PIPE, SATNET_MSS)
            } else {
                (TRACE_PIPE, TRACE_MSS)
            };
            let pipes = if c.variant == Variant::TwoPipes { 2 } else { 4 };
            o.mss = Some(mss as u16);
            o.recv_buffer_bytes = Some(pipes * pipe * mss);
        }
        Net::Fat | Net::Buffer => {
            // Linux as it is: timestamps, delayed ACKs, MSS 1460.
            o.mss = None;
            o.timestamps = None;
            o.ack_every = None;
            o.send_buffer_bytes = Some(BIG_BUFFER);
            o.recv_buffer_bytes = Some(BIG_BUFFER);
        }
    }
    if c.variant == Variant::NoDsack {
        o.dsack = Some(false);
    }
}

/// Loss rates of the fat-pipe sweep: from below the seeds' .01/(bandwidth x delay) (1.2e-5
/// here) to far above it, the points of the BBR paper's loss figure.
pub const FAT_LOSS: [f64; 9] = [1e-5, 1e-4, 1e-3, 1e-2, 0.02, 0.05, 0.1, 0.15, 0.2];
const FAT_LOSS_QUICK_CUBIC: [f64; 4] = [1e-5, 1e-3, 1e-2, 0.05];
const FAT_LOSS_QUICK_BBR: [f64; 2] = [1e-2, 0.05];
/// Satnet's loss rates (experiment 5's); the claims are at 1%.
pub const SATNET_LOSS: [f64; 3] = [0.003, 0.01, 0.03];
/// Buffers of the buffer path, in bandwidth-delay products: the seed's rule and a tenth of
/// one.
pub const BUFFERS: [f64; 2] = [2.0, 0.1];
/// RNG seeds of each lossy fat-pipe configuration in a full run, whatever `--seeds` says:
/// these are the heavy runs (one BBR run moves 100 Mbit/s for 30 s), and a count that does
/// not grow with `--seeds` keeps the suite's plan a + b x seeds runs long, which is how
/// `ackclock repro` counts a plan before building it.
const FAT_SEEDS: u64 = 2;

/// The fat pipe's loss rates of `tcp` in this mode (none: not run).
pub fn fat_losses(p: Params, tcp: Tcp) -> &'static [f64] {
    match (p.quick, tcp) {
        (false, Tcp::LinuxReno | Tcp::Cubic | Tcp::Bbr | Tcp::Bbr3) => &FAT_LOSS,
        (true, Tcp::Cubic) => &FAT_LOSS_QUICK_CUBIC,
        (true, Tcp::Bbr | Tcp::Bbr3) => &FAT_LOSS_QUICK_BBR,
        _ => &[],
    }
}

/// RNG seeds per lossy fat-pipe configuration: [`FAT_SEEDS`], one in quick mode.
pub fn fat_seeds(p: Params) -> u64 {
    if p.quick {
        1
    } else {
        FAT_SEEDS
    }
}

/// Satnet's loss rates in this mode.
pub fn satnet_losses(p: Params) -> &'static [f64] {
    if p.quick {
        &SATNET_LOSS[1..2]
    } else {
        &SATNET_LOSS
    }
}

fn seeded(out: &mut Vec<Case>, c: Case, seeds: u64) {
    for k in 0..seeds {
        out.push(Case { seed: 1 + k, ..c });
    }
}

/// Every run, in the plan's order. A configuration without random loss runs once (nothing in
/// it draws on the seed).
pub fn cases(p: Params) -> Vec<Case> {
    let mut v = Vec::new();
    let c = |net, tcp, loss| Case {
        net,
        tcp,
        loss,
        buffer: 0.0,
        variant: Variant::Plain,
        seed: 1,
    };
    let seeds = |loss: f64, n: u64| if loss > 0.0 { n } else { 1 };
    for tcp in [Tcp::Tahoe, Tcp::Reno, Tcp::Bbr, Tcp::Bbr3] {
        let mut losses = satnet_losses(p).to_vec();
        if tcp.is_bbr() {
            losses.insert(0, 0.0);
        }
        for loss in losses {
            seeded(&mut v, c(Net::Satnet, tcp, loss), seeds(loss, p.seeds));
        }
    }
    for variant in [Variant::TwoPipes, Variant::NoDsack] {
        let case = Case {
            variant,
            ..c(Net::Satnet, Tcp::Bbr, 0.01)
        };
        seeded(&mut v, case, p.seeds);
    }
    for (tcp, losses) in [
        (Tcp::Bbr, &[0.0, TRACE_BER][..]),
        (Tcp::Bbr3, &[0.0, TRACE_BER][..]),
        (Tcp::Tahoe, &[TRACE_BER][..]),
    ] {
        for &loss in losses {
            seeded(&mut v, c(Net::Trace, tcp, loss), seeds(loss, p.seeds));
        }
    }
    for tcp in [Tcp::LinuxReno, Tcp::Cubic, Tcp::Bbr, Tcp::Bbr3] {
        for &loss in fat_losses(p, tcp) {
            seeded(&mut v, c(Net::Fat, tcp, loss), fat_seeds(p));
        }
    }
    for buffer in BUFFERS {
        for tcp in [Tcp::LinuxReno, Tcp::Cubic, Tcp::Bbr, Tcp::Bbr3] {
            v.push(Case {
                buffer,
                ..c(Net::Buffer, tcp, 0.0)
            });
        }
    }
    v
}
