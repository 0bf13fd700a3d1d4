//! `ackclock emulate`: two namespaces joined through the gateway models in real time.

use super::say;
use ackclock_tun::emulator::flags::PathFlags;
use ackclock_tun::emulator::report;
use ackclock_tun::{Emulator, EmulatorConfig, Topology};
use ackclock_units::{self as units, parse_prob, parse_time, Bare, TimeUnit};
use anyhow::Result;
use std::io::Write;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug, Clone)]
pub struct EmulateArgs {
    /// Bottleneck rate, both directions, in bits per second as tc writes it (64kbit,
    /// 10mbit, 1.5gbit). None: no serializer (only --delay and the impairments apply).
    #[arg(long, value_name = "RATE", value_parser = units::rate())]
    pub rate: Option<u64>,
    /// One-way propagation delay, both directions (25ms, 0.5s, 300us).
    #[arg(long, value_name = "TIME", value_parser = units::time_hint_ms())]
    pub delay: Option<Duration>,
    /// Random (Bernoulli) loss per packet, both directions (1% or 0.01).
    #[arg(long, value_name = "PROB", value_parser = units::prob())]
    pub loss: Option<f64>,
    /// Queue discipline in front of the link (default droptail:100): KIND, KIND:LIMIT_PKTS
    /// or KIND:key=value,... with the gateway's field names; KIND is droptail, random-drop,
    /// red, drr, codel or fq-codel. E.g. droptail:64, codel,
    /// red:limit_pkts=60,min_th_pkts=5,max_th_pkts=15.
    #[arg(long, value_name = "SPEC")]
    pub queue: Option<String>,
    /// Bit error rate (each bit flipped with this probability, e.g. 1e-6), both directions.
    #[arg(long, value_name = "PROB", value_parser = units::prob())]
    pub ber: Option<f64>,
    /// Gilbert-Elliott bursty loss `P_GOOD_TO_BAD:R_BAD_TO_GOOD[:LOSS_IN_BAD]`.
    #[arg(long, value_name = "P:R[:H]")]
    pub gilbert: Option<String>,
    /// Reordering PROB:DELAY: a packet is held back DELAY with probability PROB (e.g.
    /// 1%:10ms).
    #[arg(long, value_name = "PROB:DELAY")]
    pub reorder: Option<String>,
    /// Duplicate packets with this probability.
    #[arg(long, value_name = "PROB", value_parser = units::prob())]
    pub duplicate: Option<f64>,
    /// Link framing overhead in bytes per packet (38 for Ethernet).
    #[arg(long, value_name = "BYTES", default_value_t = 0, value_parser = units::size_usize())]
    pub framing: usize,
    /// Right-to-left rate (the flags above set both directions; --reverse-* override the
    /// right-to-left one).
    #[arg(long, value_name = "RATE", value_parser = units::rate())]
    pub reverse_rate: Option<u64>,
    /// Right-to-left one-way delay.
    #[arg(long, value_name = "TIME", value_parser = units::time_hint_ms())]
    pub reverse_delay: Option<Duration>,
    /// Right-to-left loss (e.g. 0 for a clean ACK path).
    #[arg(long, value_name = "PROB", value_parser = units::prob())]
    pub reverse_loss: Option<f64>,
    /// Right-to-left queue discipline.
    #[arg(long, value_name = "SPEC")]
    pub reverse_queue: Option<String>,
    /// Right-to-left bit error rate.
    #[arg(long, value_name = "PROB", value_parser = units::prob())]
    pub reverse_ber: Option<f64>,
    /// A TOML file with `[left_to_right]` and `[right_to_left]` sections (link, queue,
    /// impairments, as in scenario files) and seed; the flags above override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Seed of the random models.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Name of the left namespace (created, and deleted on exit).
    #[arg(long, default_value = "ackclock-left")]
    pub left: String,
    /// Name of the right namespace.
    #[arg(long, default_value = "ackclock-right")]
    pub right: String,
    /// The left kernel's address on the emulator interface.
    #[arg(long, default_value = "198.18.1.1")]
    pub left_addr: Ipv4Addr,
    /// The right kernel's address on the emulator interface.
    #[arg(long, default_value = "198.18.2.1")]
    pub right_addr: Ipv4Addr,
    /// Prefixes the left side routes through the emulator (default 198.18.2.0/23).
    #[arg(long, value_parser = ackclock_tun::flags::parse_prefix)]
    pub left_route: Vec<(Ipv4Addr, u8)>,
    /// Prefixes the right side routes through the emulator (default 198.18.0.0/23).
    #[arg(long, value_parser = ackclock_tun::flags::parse_prefix)]
    pub right_route: Vec<(Ipv4Addr, u8)>,
    /// Accept addresses and prefixes outside 198.18.0.0/15, the benchmarking range (RFC
    /// 2544) that live mode otherwise keeps to.
    #[arg(long)]
    pub allow_any_address: bool,
    /// MTU of both emulator interfaces, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 1500, value_parser = units::size_u32())]
    pub mtu: u32,
    /// Stop after this long, e.g. 60s or 10min (default: at SIGINT/SIGTERM).
    #[arg(long, value_name = "TIME", value_parser = units::time_hint_s())]
    pub duration: Option<Duration>,
    /// Capture the left device's traffic (both directions) to this pcap file.
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// Capture the right device's traffic.
    #[arg(long, value_name = "FILE")]
    pub pcap_right: Option<PathBuf>,
    /// Also print the statistics as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Run at this SCHED_FIFO real-time priority (1-99; 0: the normal scheduler). On a busy
    /// machine it keeps the emulator's timing (see "lateness" in the statistics).
    #[arg(long, default_value_t = 10)]
    pub rt_priority: i32,
}

/// What the flags set, for the emulator's paths.
fn path_flags(a: &EmulateArgs) -> PathFlags {
    PathFlags {
        rate: a.rate,
        delay: a.delay,
        loss: a.loss,
        queue: a.queue.clone(),
        ber: a.ber,
        gilbert: a.gilbert.clone(),
        reorder: a.reorder.clone(),
        duplicate: a.duplicate,
        framing: a.framing,
        mtu: a.mtu,
        reverse_rate: a.reverse_rate,
        reverse_delay: a.reverse_delay,
        reverse_loss: a.reverse_loss,
        reverse_queue: a.reverse_queue.clone(),
        reverse_ber: a.reverse_ber,
        seed: a.seed,
    }
}

/// The emulator's configuration: `--config`'s file (or the default) with the flags over it.
pub fn config_from(a: &EmulateArgs) -> Result<EmulatorConfig> {
    let base = match &a.config {
        Some(p) => EmulatorConfig::load(p)?,
        None => EmulatorConfig::default(),
    };
    path_flags(a)
        .apply(base, parse_prob, |t| {
            parse_time(t, Bare::Refused(TimeUnit::Ms))
        })
        .map_err(|e| anyhow::anyhow!(e))
}

impl EmulateArgs {
    /// Refuses addresses and prefixes outside 198.18.0.0/15 unless --allow-any-address.
    pub fn check_addresses(&self) -> Result<()> {
        let any = self.allow_any_address;
        super::check_address("--left-addr", &self.left_addr, self.left_addr, any)?;
        super::check_address("--right-addr", &self.right_addr, self.right_addr, any)?;
        for &r in &self.left_route {
            super::check_prefix("--left-route", r, any)?;
        }
        for &r in &self.right_route {
            super::check_prefix("--right-route", r, any)?;
        }
        Ok(())
    }
}

/// Runs the emulator (root: it creates namespaces and TUN devices). The flags are checked
/// first, so that a mistake is reported as such, with or without root.
pub fn run(a: EmulateArgs) -> Result<()> {
    a.check_addresses()?;
    let cfg = config_from(&a)?;
    super::require_root("emulate")?;
    let topo = Topology {
        left_ns: a.left.clone(),
        right_ns: a.right.clone(),
        left_addr: a.left_addr,
        right_addr: a.right_addr,
        left_routes: if a.left_route.is_empty() {
            Topology::default().left_routes
        } else {
            a.left_route.clone()
        },
        right_routes: if a.right_route.is_empty() {
            Topology::default().right_routes
        } else {
            a.right_route.clone()
        },
        ifname: "emu0".into(),
        mtu: a.mtu,
        pcap_left: a.pcap.clone(),
        pcap_right: a.pcap_right.clone(),
    };
    let mut emu = Emulator::new(&cfg, topo)?;
    if a.rt_priority > 0 {
        if let Err(e) = ackclock_tun::sys::set_realtime(a.rt_priority.min(99)) {
            eprintln!(
                "warning: cannot use real-time priority ({e}); timing may suffer on a busy machine"
            );
        }
    }
    let describe = |p| report::describe(p, units::format_time, units::format_rate);
    say!(
        a.json,
        "ackclock emulate: left netns {} ({}) <-> right netns {} ({}), interface emu0 in each\n  left -> right: {}\n  right -> left: {}\n  e.g.: ip netns exec {} iperf3 -s -D; ip netns exec {} iperf3 -c {}\nready (Ctrl-C to stop)\n",
        a.left, a.left_addr, a.right, a.right_addr,
        describe(&cfg.left_to_right),
        describe(&cfg.right_to_left),
        a.right, a.left, a.right_addr
    );
    let _ = std::io::stdout().flush();
    let r = emu.run(a.duration)?;
    say!(
        a.json,
        "\nran {:.3} s, cpu {:.3} s\n",
        r.elapsed.as_secs_f64(),
        r.cpu.as_secs_f64()
    );
    for (name, s, p) in [
        ("left -> right", &r.left_to_right, &cfg.left_to_right),
        ("right -> left", &r.right_to_left, &cfg.right_to_left),
    ] {
        say!(a.json, "{}", report::direction_text(name, s, p, r.elapsed));
    }
    if a.json {
        println!("{}", report::json(&r, &cfg));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        e: EmulateArgs,
    }

    #[test]
    fn delays_need_their_unit_and_reorder_reads_a_time() {
        let t = T::parse_from(["x", "--delay", "0.5s", "--reverse-delay", "300us"]);
        let c = config_from(&t.e).unwrap();
        assert_eq!(c.left_to_right.link.as_ref().unwrap().delay_ms, 500.0);
        assert_eq!(c.right_to_left.link.as_ref().unwrap().delay_ms, 0.3);
        let e = T::try_parse_from(["x", "--delay", "25"]).err().unwrap();
        assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
        assert!(
            e.to_string()
                .starts_with("error: --delay 25: a time needs a unit, e.g. 25ms or 0.025s\n"),
            "{e}"
        );
        let e = T::try_parse_from(["x", "--rate", "100Mbps"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.starts_with("error: --rate 100Mbps: \"Mbps\" is ambiguous"),
            "{e}"
        );
        let e = T::try_parse_from(["x", "--duration", "60"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.starts_with("error: --duration 60: a time needs a unit, e.g. 60s or 60000ms"),
            "{e}"
        );
        let t = T::parse_from(["x", "--reorder", "1%:10ms"]);
        let c = config_from(&t.e).unwrap();
        let r = c.left_to_right.impairments.reorder.unwrap();
        assert_eq!((r.prob, r.delay_ms), (0.01, 10.0));
        let t = T::parse_from(["x", "--reorder", "1%:10"]);
        assert_eq!(
            config_from(&t.e).unwrap_err().to_string(),
            "--reorder 1%:10: a time needs a unit, e.g. 10ms or 0.01s"
        );
        let t = T::parse_from(["x", "--gilbert", "0.01:lots"]);
        assert_eq!(
            config_from(&t.e).unwrap_err().to_string(),
            "--gilbert 0.01:lots: expected a probability such as 1% or 0.01"
        );
    }

    #[test]
    fn addresses_keep_to_198_18_0_0_15() {
        let check = |args: &[&str]| {
            T::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
                .unwrap()
                .e
                .check_addresses()
        };
        assert!(check(&[]).is_ok(), "the defaults are inside");
        assert!(check(&[
            "--left-route",
            "198.18.2.0/23",
            "--right-addr",
            "198.19.0.1"
        ])
        .is_ok());
        let e = check(&["--left-addr", "10.1.1.1"]).unwrap_err().to_string();
        assert_eq!(
            e,
            "--left-addr 10.1.1.1: 10.1.1.1 is outside 198.18.0.0/15, the benchmarking range live mode keeps to; add --allow-any-address to use it anyway"
        );
        assert!(check(&["--right-route", "0.0.0.0/0"]).is_err());
        assert!(check(&["--right-route", "0.0.0.0/0", "--allow-any-address"]).is_ok());
        assert!(check(&["--left-addr", "10.1.1.1", "--allow-any-address"]).is_ok());
    }
}
