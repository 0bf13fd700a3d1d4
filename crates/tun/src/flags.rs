//! The command-line flags of a live host, as clap arguments a live command flattens into its
//! own: every `TcpConfig` knob (through the engine's `Overrides`, plus the few fields
//! `Overrides` does not cover) and the TUN device's settings. Times, rates and sizes are
//! read by [`ackclock_units`].

use crate::DeviceConfig;
use ackclock_tcp::cc::SsthreshBase;
use ackclock_tcp::config::{CongestionName, EcnEcho, OverrideError, Overrides, RttEstimatorName};
use ackclock_tcp::{HyStart, LossDetection, Pacing, RecoveryAlgorithm, TcpConfig, WindowReduction};
use ackclock_units as units;
use ackclock_wire::Duration;
use anyhow::{bail, Result};
use std::net::Ipv4Addr;
use std::path::PathBuf;

/// Every knob of a connection. Flags left out keep the preset's value.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(
    next_help_heading = "TCP configuration (every TcpConfig knob; unset flags keep the preset)"
)]
pub struct TcpArgs {
    /// Start from a preset: vanilla_4_3bsd, tahoe, reno, newreno, sack, cubic, modern,
    /// linux (Linux 6.x's defaults: CUBIC, RACK-TLP, PRR, undo, F-RTO; docs/LINUX.md),
    /// linux_bbr (the same with BBR v1).
    #[arg(long, default_value = "newreno")]
    pub preset: String,
    /// Segment size we send and advertise, in bytes (MTU - 40 is the usual choice).
    #[arg(long, value_name = "BYTES", value_parser = units::size_u16())]
    pub mss: Option<u16>,
    /// Send buffer (bytes, or 256K = 256KiB, 1M = 1MiB; 64KB = 64000).
    #[arg(long, value_name = "SIZE", value_parser = units::size_usize())]
    pub sndbuf: Option<usize>,
    /// Receive buffer (a size, as --sndbuf): bounds the advertised window.
    #[arg(long, value_name = "SIZE", value_parser = units::size_usize())]
    pub rcvbuf: Option<usize>,
    /// Initial window in segments.
    #[arg(long, value_name = "SEGMENTS")]
    pub iw: Option<u32>,
    /// Initial window by RFC: 3390 or 6928.
    #[arg(long, value_name = "RFC")]
    pub iw_rfc: Option<u32>,
    /// Initial ssthresh (a size: bytes, or 64K...).
    #[arg(long, value_name = "SIZE", value_parser = units::size_u32())]
    pub ssthresh: Option<u32>,
    /// RTT estimator.
    #[arg(long, value_name = "NAME", value_parser = names::<RttEstimatorName>())]
    pub rtt_estimator: Option<RttEstimatorName>,
    /// k in rto = srtt + k * rttvar (Jacobson's estimator).
    #[arg(long)]
    pub rto_k: Option<u32>,
    /// RFC 793 smoothing gain alpha.
    #[arg(long)]
    pub rfc793_alpha: Option<f64>,
    /// RFC 793 variance factor beta.
    #[arg(long)]
    pub rfc793_beta: Option<f64>,
    /// Lower bound of the retransmission timeout (ms; or a time with its unit: 200ms, 1s).
    #[arg(long, value_name = "MS", value_parser = units::millis())]
    pub rto_min_ms: Option<f64>,
    /// Upper bound of the retransmission timeout (ms, or e.g. 60s).
    #[arg(long, value_name = "MS", value_parser = units::millis())]
    pub rto_max_ms: Option<f64>,
    /// Retransmission timeout before the first RTT sample (ms, or e.g. 1s).
    #[arg(long, value_name = "MS", value_parser = units::millis())]
    pub rto_initial_ms: Option<f64>,
    /// Timer granularity G (RFC 6298), in ms (or e.g. 500us).
    #[arg(long, value_name = "MS", value_parser = units::millis())]
    pub clock_granularity_ms: Option<f64>,
    /// Karn's algorithm (--karn=false: 4.3BSD before 1988 timed through retransmissions and
    /// ended the backoff on any new ACK).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub karn: Option<bool>,
    /// ACK at least every N full-sized segments (HP-UX's tcp_deferred_ack_max).
    #[arg(long, value_name = "N")]
    pub ack_every: Option<u32>,
    /// Longest an ACK may be delayed, in ms (0 disables delayed ACKs).
    #[arg(long, value_name = "MS", value_parser = units::millis())]
    pub delack_ms: Option<f64>,
    /// Send delayed ACKs at the ticks of a --delack-ms clock, as 4.3BSD's tcp_fasttimo did.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub delack_clock: Option<bool>,
    /// Acknowledge every segment at once (Linux's quick-ACK mode).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub quickack: Option<bool>,
    /// Nagle's algorithm (--nagle=false to disable).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub nagle: Option<bool>,
    /// Offer/accept SACK (RFC 2018).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub sack: Option<bool>,
    /// Ask for/accept ECN (RFC 3168): ECT(0) data, echo CE marks with ECE, answer ECE with a
    /// window reduction (Linux: sysctl net.ipv4.tcp_ecn=1 on its side).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub ecn: Option<bool>,
    /// How CE marks are echoed: latched (RFC 3168, until CWR) or per_packet (RFC 8257, what
    /// dctcp and dec_bit count; --cc dctcp or dec_bit selects it).
    #[arg(long, value_name = "NAME", value_parser = names::<EcnEcho>())]
    pub ecn_echo: Option<EcnEcho>,
    /// Offer/accept timestamps (RFC 7323).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub timestamps: Option<bool>,
    /// Offer/accept window scaling (RFC 7323).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub wscale: Option<bool>,
    /// Loss recovery (sack also turns SACK on).
    #[arg(long, value_name = "NAME", value_parser = names::<RecoveryAlgorithm>())]
    pub recovery: Option<RecoveryAlgorithm>,
    /// Window reduction in fast recovery: halve (the recovery's own rule) or prr (RFC 9937
    /// Proportional Rate Reduction).
    #[arg(long, value_name = "NAME", value_parser = names::<WindowReduction>())]
    pub window_reduction: Option<WindowReduction>,
    /// How a loss is found short of the RTO: dupack (the duplicate-ACK threshold), rack (RFC
    /// 8985 RACK: by time, once a later segment was delivered; needs SACK) or rack-tlp (RACK
    /// and the tail loss probe).
    #[arg(long, value_name = "NAME", value_parser = names::<LossDetection>())]
    pub loss_detection: Option<LossDetection>,
    /// Report duplicate data with D-SACK blocks (RFC 2883), what RACK's reordering window
    /// and --undo learn from at the sender.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub dsack: Option<bool>,
    /// Undo a needless window reduction: a fast recovery whose every retransmission a
    /// D-SACK shows arrived twice (RFC 3708) or whose ACKs echo a timestamp older than the
    /// fast retransmit (RFC 3522), or a timeout whose first ACK does (RFC 3522 Eifel
    /// detection, RFC 4015's response).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub undo: Option<bool>,
    /// F-RTO (RFC 5682 §2.1): after a timeout, send new data before resending more and take
    /// the timeout for spurious when the ACKs cover data not resent (the reduction is then
    /// undone, RFC 4015's response).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub frto: Option<bool>,
    /// Restart the retransmission timer when a recovery resends the oldest unacknowledged
    /// segment, as Linux's tcp_xmit_retransmit_queue does (RFC 6298 restarts it only on an
    /// ACK of new data); on in the linux preset.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub rto_restart_on_head_resend: Option<bool>,
    /// How slow start ends (AIMD and CUBIC): off (at the first loss), plus_plus (RFC 9406
    /// HyStart++: when the round's minimum RTT rises, through Conservative Slow Start) or
    /// classic (Linux CUBIC's HyStart: ACK train or delay rise); both need timestamps.
    #[arg(long, value_name = "NAME", value_parser = names::<HyStart>())]
    pub hystart: Option<HyStart>,
    /// Pacing for window-based controllers: off, or linux (max(cwnd, flight) / SRTT times
    /// 2 in slow start, 1.2 after, as Linux paces); BBR always paces at its own rate.
    #[arg(long, value_name = "NAME", value_parser = names::<Pacing>())]
    pub pacing: Option<Pacing>,
    /// How far a paced sender may run ahead of its schedule after a late wake-up, in ms
    /// (default: twice the 90th percentile of this host's wake-up lateness from short
    /// sleeps, measured at start, within 0.25 to 2 ms; 0 spaces exactly).
    #[arg(long, value_name = "MS", value_parser = units::millis())]
    pub pacing_burst_ms: Option<f64>,
    /// Congestion control (aimd also as reno; fixed: cwnd = the initial window, always;
    /// dctcp and dec_bit also turn ECN on with the per-packet echo; bbr and bbr3 are BBR v1
    /// and v3, paced at their model of the path).
    #[arg(long, value_name = "NAME", value_parser = names::<CongestionName>())]
    pub cc: Option<CongestionName>,
    /// AIMD multiplicative decrease factor d.
    #[arg(long)]
    pub decrease: Option<f64>,
    /// AIMD additive increase in segments per RTT.
    #[arg(long)]
    pub increase: Option<f64>,
    /// Adapt the AIMD increase (at most --increase) toward this loss rate per segment, in
    /// (0, 0.5] (seed 000's second-order loop).
    #[arg(long, value_name = "LOSS")]
    pub adaptive_increase: Option<f64>,
    /// Multiplicative increase per RTT instead of additive (seed 000's mistake).
    #[arg(long)]
    pub multiplicative_increase: Option<f64>,
    /// RFC 3465 byte counting limit L in segments (0: off).
    #[arg(long, value_name = "L")]
    pub abc: Option<u32>,
    /// ssthresh after a loss from "window" (the 1990 diff) or "flight" (RFC 5681).
    #[arg(long, value_name = "BASE", value_parser = names::<SsthreshBase>())]
    pub ssthresh_base: Option<SsthreshBase>,
    /// Duplicate ACKs that trigger fast retransmit.
    #[arg(long, value_name = "N")]
    pub dupack_threshold: Option<u32>,
    /// RFC 3042 limited transmit.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub limited_transmit: Option<bool>,
    /// Timeouts of one segment before the connection is aborted.
    #[arg(long, value_name = "N")]
    pub max_retransmits: Option<u32>,
    /// TIME-WAIT duration, in ms (or e.g. 60s).
    #[arg(long, value_name = "MS", value_parser = units::millis())]
    pub time_wait_ms: Option<f64>,
    /// Header prediction (the fast path).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub header_prediction: Option<bool>,
    /// Restart from the initial window after an idle period (RFC 5681 §4.1).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub idle_restart: Option<bool>,
    /// At most one ACK per this interval (ms) for invalid segments without data (0: no
    /// limit; default 500, as Linux's tcp_invalid_ratelimit).
    #[arg(long, value_name = "MS", value_parser = units::millis())]
    pub invalid_ack_interval_ms: Option<f64>,
    /// RFC 5482 user timeout: abort when sent data stays unacknowledged this long (ms, or
    /// e.g. 30s; 0: none).
    #[arg(long, value_name = "MS", value_parser = units::millis())]
    pub user_timeout_ms: Option<f64>,
    /// Verify the checksum while copying data in (seed Jul 1988).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub checksum_and_copy: Option<bool>,
    /// IP time to live of our packets.
    #[arg(long)]
    pub ttl: Option<u8>,
    /// Shortest interval of the persist timer (zero-window probes), in ms.
    #[arg(long, value_name = "MS", value_parser = units::millis())]
    pub persist_min_ms: Option<f64>,
    /// Longest interval of the persist timer (zero-window probes), in ms (or e.g. 60s).
    #[arg(long, value_name = "MS", value_parser = units::millis())]
    pub persist_max_ms: Option<f64>,
    /// SYN timeouts before an active open gives up.
    #[arg(long, value_name = "N")]
    pub max_syn_retransmits: Option<u32>,
    /// RFC 5961 challenge ACKs per second per connection.
    #[arg(long, value_name = "N")]
    pub challenge_ack_limit: Option<u32>,
}

fn ms(v: f64) -> Duration {
    Duration::from_secs_f64(v / 1000.0)
}

/// The engine's names of a flag's values (`RecoveryAlgorithm::NAMES`...).
trait Named: std::str::FromStr<Err = OverrideError> + Clone + Send + Sync + 'static {
    const NAMES: &'static [&'static str];
    const ALIASES: &'static [(&'static str, &'static str)];
}

macro_rules! named {
    ($($t:ty),*) => {$(
        impl Named for $t {
            const NAMES: &'static [&'static str] = <$t>::NAMES;
            const ALIASES: &'static [(&'static str, &'static str)] = <$t>::ALIASES;
        }
    )*};
}
named!(
    RttEstimatorName,
    RecoveryAlgorithm,
    CongestionName,
    SsthreshBase,
    EcnEcho,
    WindowReduction,
    LossDetection,
    HyStart,
    Pacing
);

/// A flag that takes one of the engine's names: clap lists them in `--help` and in the
/// error for any other value, with a did-you-mean for a near miss; aliases are accepted but
/// not listed.
fn names<T: Named>() -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(T::NAMES.iter().map(|&name| {
        PossibleValue::new(name).aliases(
            T::ALIASES
                .iter()
                .filter(|(_, to)| *to == name)
                .map(|(alias, _)| *alias),
        )
    }))
    .try_map(|s| s.parse::<T>())
}

impl TcpArgs {
    /// The flags as the engine's `Overrides`.
    #[allow(clippy::needless_update)]
    pub fn overrides(&self) -> Overrides {
        Overrides {
            mss: self.mss,
            send_buffer_bytes: self.sndbuf,
            recv_buffer_bytes: self.rcvbuf,
            initial_window_segments: self.iw,
            initial_window_rfc: self.iw_rfc,
            initial_ssthresh_bytes: self.ssthresh,
            rtt_estimator: self.rtt_estimator,
            rto_k: self.rto_k,
            rfc793_alpha: self.rfc793_alpha,
            rfc793_beta: self.rfc793_beta,
            rto_min_ms: self.rto_min_ms,
            rto_max_ms: self.rto_max_ms,
            rto_initial_ms: self.rto_initial_ms,
            clock_granularity_ms: self.clock_granularity_ms,
            karn: self.karn,
            ack_every: self.ack_every,
            delayed_ack_ms: self.delack_ms,
            quickack: self.quickack,
            delayed_ack_clock: self.delack_clock,
            nagle: self.nagle,
            sack: self.sack,
            ecn: self.ecn,
            ecn_echo: self.ecn_echo,
            timestamps: self.timestamps,
            window_scale: self.wscale,
            recovery: self.recovery,
            window_reduction: self.window_reduction,
            loss_detection: self.loss_detection,
            dsack: self.dsack,
            undo: self.undo,
            frto: self.frto,
            rto_restart_on_head_resend: self.rto_restart_on_head_resend,
            hystart: self.hystart,
            pacing: self.pacing,
            pacing_burst_ms: self.pacing_burst_ms,
            cc: self.cc,
            decrease: self.decrease,
            increase: self.increase,
            adaptive_increase: self.adaptive_increase,
            multiplicative_increase: self.multiplicative_increase,
            abc: self.abc,
            ssthresh_base: self.ssthresh_base,
            dupack_threshold: self.dupack_threshold,
            limited_transmit: self.limited_transmit,
            max_retransmits: self.max_retransmits,
            time_wait_ms: self.time_wait_ms,
            header_prediction: self.header_prediction,
            idle_restart: self.idle_restart,
            invalid_ack_interval_ms: self.invalid_ack_interval_ms,
            user_timeout_ms: self.user_timeout_ms,
            // New engine knobs default to "keep the preset" until they get a flag (the
            // test below fails until they do).
            ..Overrides::default()
        }
    }

    /// The preset with every given flag applied.
    pub fn config(&self) -> Result<TcpConfig> {
        let Some(mut c) = TcpConfig::preset(&self.preset) else {
            bail!(
                "--preset {:?}: unknown; choose one of {}",
                self.preset,
                TcpConfig::PRESETS.join(", ")
            );
        };
        self.overrides()
            .apply(&mut c)
            .map_err(|e| anyhow::anyhow!("--{}: {e}", flag_of(e.field)))?;
        if self.pacing_burst_ms.is_none() {
            // The live loop's wake-ups are late by its timer's slack: the allowance follows
            // what this host measures (`clock::live_pacing_burst`).
            c.pacing_burst = crate::clock::live_pacing_burst();
        }
        if let Some(v) = self.checksum_and_copy {
            c.checksum_and_copy = v;
        }
        if let Some(v) = self.ttl {
            c.ttl = v;
        }
        if let Some(v) = self.persist_min_ms {
            c.persist_min = ms(v);
        }
        if let Some(v) = self.persist_max_ms {
            c.persist_max = ms(v);
        }
        if let Some(v) = self.max_syn_retransmits {
            c.max_syn_retransmits = v;
        }
        if let Some(v) = self.challenge_ack_limit {
            c.challenge_ack_limit_per_sec = v;
        }
        Ok(c)
    }
}

/// The TUN device and the addresses on either side of it.
#[derive(clap::Args, Debug, Clone)]
#[command(next_help_heading = "Device (the TUN interface; the kernel side is the Linux host)")]
pub struct DevArgs {
    /// Interface name (%d: the kernel picks a number).
    #[arg(long, default_value = "ack%d")]
    pub tun: String,
    /// Interface MTU, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 1500, value_parser = units::size_u32())]
    pub mtu: u32,
    /// ackclock's own address (default: the --listen address, else 198.18.0.2).
    #[arg(long)]
    pub addr: Option<Ipv4Addr>,
    /// The Linux kernel's address on the interface (default 198.18.0.1).
    #[arg(long)]
    pub tun_addr: Option<Ipv4Addr>,
    /// More prefixes the kernel routes into the device (repeatable), e.g. 198.18.4.0/24.
    #[arg(long = "route", value_name = "PREFIX", value_parser = parse_prefix)]
    pub routes: Vec<(Ipv4Addr, u8)>,
    /// Move the interface into this existing network namespace (ip netns add NAME).
    #[arg(long)]
    pub netns: Option<String>,
    /// Only create the device; addresses and routes are set up by hand.
    #[arg(long)]
    pub no_configure: bool,
    /// Write every packet that crosses the device to this pcap file (tcpdump -r reads it),
    /// each stamped with the time it was read from or written to the device.
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// Accept addresses and prefixes outside 198.18.0.0/15, the benchmarking range (RFC
    /// 2544) that live mode otherwise keeps to.
    #[arg(long)]
    pub allow_any_address: bool,
}

impl DevArgs {
    /// Refuses addresses and prefixes outside 198.18.0.0/15 unless --allow-any-address.
    pub fn check_addresses(&self) -> Result<()> {
        let any = self.allow_any_address;
        if let Some(a) = self.addr {
            crate::netcfg::check_address("--addr", &a, a, any)?;
        }
        if let Some(a) = self.tun_addr {
            crate::netcfg::check_address("--tun-addr", &a, a, any)?;
        }
        for &r in &self.routes {
            crate::netcfg::check_prefix("--route", r, any)?;
        }
        Ok(())
    }

    /// The device configuration, given the address ackclock serves on (if the command names
    /// one).
    pub fn device(&self, our_hint: Option<Ipv4Addr>) -> Result<DeviceConfig> {
        let our = self
            .addr
            .or(our_hint.filter(|a| !a.is_unspecified()))
            .unwrap_or(Ipv4Addr::new(198, 18, 0, 2));
        let kernel = self
            .tun_addr
            .unwrap_or(if our == Ipv4Addr::new(198, 18, 0, 1) {
                Ipv4Addr::new(198, 18, 0, 2)
            } else {
                Ipv4Addr::new(198, 18, 0, 1)
            });
        if our == kernel {
            bail!(
                "ackclock's address and the kernel's (--tun-addr) are both {our}; they must differ"
            );
        }
        if !(576..=65_535).contains(&self.mtu) {
            bail!("--mtu {}: must be 576 to 65535", self.mtu);
        }
        Ok(DeviceConfig {
            name: self.tun.clone(),
            mtu: self.mtu,
            netns: self.netns.clone(),
            configure: !self.no_configure,
            kernel_addr: kernel,
            our_addr: our,
            routes: self.routes.clone(),
            pcap: self.pcap.clone(),
        })
    }
}

/// `--route PREFIX`: an IPv4 prefix such as 198.18.4.0/24.
///
/// # Errors
/// The text is not an address, a `/` and a length of 0 to 32.
pub fn parse_prefix(s: &str) -> Result<(Ipv4Addr, u8), String> {
    crate::netcfg::parse_prefix(s)
}

/// The flag of each `Overrides` field, where it is not the field name in kebab case.
const FLAG_RENAMES: &[(&str, &str)] = &[
    ("send_buffer_bytes", "sndbuf"),
    ("recv_buffer_bytes", "rcvbuf"),
    ("initial_window_segments", "iw"),
    ("initial_window_rfc", "iw-rfc"),
    ("initial_ssthresh_bytes", "ssthresh"),
    ("delayed_ack_ms", "delack-ms"),
    ("delayed_ack_clock", "delack-clock"),
    ("window_scale", "wscale"),
];

/// The command-line flag (without `--`) that sets an `Overrides` field.
fn flag_of(field: &str) -> String {
    FLAG_RENAMES
        .iter()
        .find(|(k, _)| *k == field)
        .map_or_else(|| field.replace('_', "-"), |(_, v)| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Parser, Debug)]
    struct T {
        #[command(flatten)]
        tcp: TcpArgs,
    }

    #[test]
    fn every_override_field_has_a_flag() {
        let v = serde_json::to_value(Overrides::default()).unwrap();
        let fields: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        assert!(fields.len() >= 30, "{fields:?}");
        let cmd = T::command();
        let longs: Vec<String> = cmd
            .get_arguments()
            .filter_map(|a| a.get_long().map(str::to_string))
            .collect();
        for f in fields {
            let flag = flag_of(&f);
            assert!(longs.contains(&flag), "Overrides::{f} has no --{flag} flag");
        }
    }

    #[test]
    fn named_flags_take_the_engines_names_and_list_them_otherwise() {
        let t = T::parse_from([
            "x",
            "--cc",
            "reno",
            "--recovery",
            "sack",
            "--rtt-estimator",
            "rfc793",
            "--ssthresh-base",
            "window",
        ]);
        let o = t.tcp.overrides();
        assert_eq!(o.cc, Some(CongestionName::Aimd));
        assert_eq!(o.recovery, Some(RecoveryAlgorithm::Sack));
        assert_eq!(o.rtt_estimator, Some(RttEstimatorName::Rfc793));
        assert_eq!(o.ssthresh_base, Some(SsthreshBase::Window));
        let e = T::try_parse_from(["x", "--recovery", "renno"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidValue);
        let e = e.to_string();
        assert!(
            e.contains("[possible values: timeout_only, tahoe, reno, newreno, sack]")
                && e.contains("'reno'"),
            "{e}"
        );
    }

    /// `--hystart` takes off, plus_plus (RFC 9406) and classic (Linux CUBIC's) into the
    /// config, over the preset's choice.
    #[test]
    fn hystart_flag_reaches_the_config_and_lists_the_names() {
        let t = T::parse_from(["x", "--preset", "cubic", "--hystart", "plus_plus"]);
        assert_eq!(t.tcp.config().unwrap().hystart, HyStart::PlusPlus);
        let t = T::parse_from(["x", "--preset", "linux", "--hystart", "off"]);
        assert_eq!(t.tcp.config().unwrap().hystart, HyStart::Off);
        let t = T::parse_from(["x", "--preset", "linux"]);
        assert_eq!(t.tcp.config().unwrap().hystart, HyStart::Classic);
        let e = T::try_parse_from(["x", "--hystart", "on"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("[possible values: off, plus_plus, classic]"),
            "{e}"
        );
    }

    #[test]
    fn pacing_flags_reach_the_config() {
        let t = T::parse_from(["x", "--pacing", "linux", "--pacing-burst-ms", "2"]);
        let c = t.tcp.config().unwrap();
        assert_eq!(
            (c.pacing, c.pacing_burst),
            (Pacing::Linux, Duration::from_millis(2))
        );
        let e = T::try_parse_from(["x", "--pacing", "fq"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("off") && e.contains("linux"), "{e}");
    }

    /// `--loss-detection` takes the engine's names (RFC 8985 RACK, with or without TLP) into
    /// the config, and lists them for any other value.
    #[test]
    fn loss_detection_flag_reaches_the_config_and_lists_the_names() {
        let t = T::parse_from(["x", "--preset", "sack", "--loss-detection", "rack-tlp"]);
        assert_eq!(
            t.tcp.overrides().loss_detection,
            Some(LossDetection::RackTlp)
        );
        assert_eq!(
            t.tcp.config().unwrap().loss_detection,
            LossDetection::RackTlp
        );
        let t = T::parse_from(["x", "--loss-detection", "dupack"]);
        assert_eq!(
            t.tcp.config().unwrap().loss_detection,
            LossDetection::DupAck
        );
        let t = T::parse_from(["x"]);
        assert_eq!(t.tcp.loss_detection, None);
        let e = T::try_parse_from(["x", "--loss-detection", "tlp"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidValue);
        let e = e.to_string();
        assert!(
            e.contains("[possible values: dupack, rack, rack-tlp]"),
            "{e}"
        );
    }

    /// `--undo` (RFC 3708 D-SACK, RFC 3522 Eifel with RFC 4015's response) and `--frto`
    /// (RFC 5682) reach the config, bare or with a value; left out they keep the preset's.
    #[test]
    fn undo_and_frto_flags_reach_the_config() {
        let t = T::parse_from(["x", "--preset", "sack", "--undo", "--frto"]);
        assert_eq!(
            (t.tcp.overrides().undo, t.tcp.overrides().frto),
            (Some(true), Some(true))
        );
        let c = t.tcp.config().unwrap();
        assert!(c.undo && c.frto);
        let t = T::parse_from(["x", "--dsack", "--preset", "newreno"]);
        assert!(t.tcp.config().unwrap().dsack, "--dsack turns D-SACK on");
        let t = T::parse_from(["x", "--undo=true", "--frto=false"]);
        let c = t.tcp.config().unwrap();
        assert!(c.undo && !c.frto);
        let t = T::parse_from(["x", "--preset", "sack"]);
        assert_eq!((t.tcp.undo, t.tcp.frto), (None, None));
        let c = t.tcp.config().unwrap();
        let sack = TcpConfig::preset("sack").unwrap();
        assert_eq!((c.undo, c.frto), (sack.undo, sack.frto));
        let e = T::try_parse_from(["x", "--frto=yes"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidValue);
    }

    #[test]
    fn an_out_of_range_flag_is_named_as_typed() {
        // `--rcvbuf 1` used to be taken, and 0 became 1 in silence; 0 is now refused and the
        // message names the flag, not the engine's field.
        let t = T::parse_from(["x", "--rcvbuf", "0"]);
        let e = t.tcp.config().unwrap_err().to_string();
        assert_eq!(
            e,
            "--rcvbuf: recv_buffer_bytes = 0: expected 1 to 1073741824 bytes"
        );
        let t = T::parse_from(["x", "--rto-min-ms", "0"]);
        let e = t.tcp.config().unwrap_err().to_string();
        assert!(e.starts_with("--rto-min-ms: rto_min_ms = 0:"), "{e}");
    }

    #[test]
    fn flags_reach_the_config() {
        let t = T::parse_from([
            "x",
            "--preset",
            "tahoe",
            "--sndbuf",
            "256K",
            "--ack-every",
            "1",
            "--delack-ms",
            "0",
            "--nagle=false",
            "--sack",
            "--cc",
            "cubic",
            "--ttl",
            "9",
            "--persist-min-ms",
            "200",
        ]);
        let c = t.tcp.config().unwrap();
        assert_eq!(c.send_buffer_bytes, 256 * 1024);
        assert_eq!(c.ack.segments_per_ack, 1);
        assert_eq!(c.ack.delayed_ack, Duration::ZERO);
        assert!(!c.nagle);
        assert!(c.sack);
        assert!(matches!(
            c.congestion,
            ackclock_tcp::CongestionAlgorithm::Cubic(_)
        ));
        assert_eq!(c.ttl, 9);
        assert_eq!(c.persist_min, Duration::from_millis(200));
        assert_eq!(c.recovery, TcpConfig::tahoe().recovery);
        let bad = T::parse_from(["x", "--preset", "bbr"]);
        let e = bad.tcp.config().unwrap_err().to_string();
        assert!(e.contains("tahoe") && e.contains("bbr"), "{e}");
    }

    /// The -ms flags take a bare number of milliseconds or any time with its unit.
    #[test]
    fn ms_flags_take_bare_milliseconds_or_any_time() {
        for (text, ms) in [
            ("200", 200.0),
            ("200ms", 200.0),
            ("1s", 1000.0),
            ("0.2s", 200.0),
        ] {
            let t = T::parse_from(["x", "--rto-min-ms", text]);
            assert_eq!(t.tcp.rto_min_ms, Some(ms), "{text}");
        }
        let t = T::parse_from(["x", "--persist-max-ms", "1min", "--delack-ms", "500us"]);
        assert_eq!(t.tcp.persist_max_ms, Some(60_000.0));
        assert_eq!(t.tcp.delack_ms, Some(0.5));
        let c = t.tcp.config().unwrap();
        assert_eq!(c.persist_max, Duration::from_secs(60));
        let e = T::try_parse_from(["x", "--rto-min-ms", "200xs"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
        assert!(
            e.to_string()
                .starts_with("error: --rto-min-ms 200xs: unknown unit \"xs\""),
            "{e}"
        );
    }

    #[test]
    fn size_flags_take_the_size_grammar_and_their_types_range() {
        let t = T::parse_from([
            "x", "--sndbuf", "64KiB", "--rcvbuf", "64KB", "--mss", "1460",
        ]);
        assert_eq!(t.tcp.sndbuf, Some(65536));
        assert_eq!(t.tcp.rcvbuf, Some(64_000));
        assert_eq!(t.tcp.mss, Some(1460));
        let e = T::try_parse_from(["x", "--mss", "64KiB"])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("error: --mss 64KiB: out of range: at most 65535 bytes"),
            "{e}"
        );
        let e = T::try_parse_from(["x", "--ssthresh", "5GiB"])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("error: --ssthresh 5GiB: out of range"), "{e}");
    }
}
