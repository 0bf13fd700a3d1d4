//! `ackclock emulate`: two namespaces joined through the gateway models in real time.

use ackclock_gateway::{GilbertElliottConfig, LinkConfig, QdiscConfig, ReorderConfig};
use ackclock_tun::emulator::DirectionStats;
use ackclock_tun::{Emulator, EmulatorConfig, PathConfig, Topology};
use ackclock_units::{self as units, parse_prob, parse_time, Bare, TimeUnit};
use anyhow::{bail, Context, Result};
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
    /// Gilbert-Elliott bursty loss P_GOOD_TO_BAD:R_BAD_TO_GOOD[:LOSS_IN_BAD].
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
    /// A TOML file with [left_to_right] and [right_to_left] sections (link, queue,
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
    #[arg(long, value_parser = super::args::parse_prefix)]
    pub left_route: Vec<(Ipv4Addr, u8)>,
    /// Prefixes the right side routes through the emulator (default 198.18.0.0/23).
    #[arg(long, value_parser = super::args::parse_prefix)]
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

/// `KIND[:ARGS]` to a queue configuration, through the gateway's own serde names.
pub fn parse_queue(spec: &str) -> Result<QdiscConfig> {
    let (kind, args) = spec.split_once(':').unwrap_or((spec, ""));
    let kind = match kind.to_ascii_lowercase().replace('-', "_").as_str() {
        "droptail" | "drop_tail" | "fifo" | "pfifo" => "drop_tail",
        "randomdrop" | "random_drop" => "random_drop",
        "red" => "red",
        "drr" => "drr",
        "codel" => "codel",
        "fqcodel" | "fq_codel" => "fq_codel",
        "decbit" | "dec_bit" => "dec_bit",
        k => bail!(
            "--queue {spec:?}: unknown kind {k:?}; use droptail, random-drop, red, drr, codel, fq-codel or dec-bit"
        ),
    };
    let mut toml_text = format!("kind = \"{kind}\"\n");
    let mut has_limit = false;
    if !args.is_empty() {
        if args.chars().all(|c| c.is_ascii_digit()) {
            toml_text.push_str(&format!("limit_pkts = {args}\n"));
            has_limit = true;
        } else {
            for kv in args.split(',') {
                let Some((k, v)) = kv.split_once('=') else {
                    bail!("--queue {spec:?}: expected KIND:LIMIT or KIND:key=value,... (e.g. red:limit_pkts=64,min_th_pkts=5,max_th_pkts=15)");
                };
                let k = k.trim().replace('-', "_");
                let v = v.trim();
                has_limit |= k.starts_with("limit_");
                let val = if v.parse::<f64>().is_ok() || v == "true" || v == "false" {
                    v.to_string()
                } else {
                    format!("\"{v}\"")
                };
                toml_text.push_str(&format!("{k} = {val}\n"));
            }
        }
    }
    if !has_limit && matches!(kind, "drop_tail" | "random_drop" | "red" | "dec_bit") {
        toml_text.push_str("limit_pkts = 100\n");
    }
    let q: QdiscConfig = toml::from_str(&toml_text)
        .map_err(|e| anyhow::anyhow!("--queue {spec:?}: {}", e.message()))?;
    q.validate()
        .map_err(|e| anyhow::anyhow!("--queue {spec:?}: {e}"))?;
    Ok(q)
}

fn split2(s: &str, what: &str) -> Result<Vec<String>> {
    let v: Vec<String> = s.split(':').map(str::to_string).collect();
    if v.len() < 2 {
        bail!("{what} {s:?}: expected values separated by ':'");
    }
    Ok(v)
}

pub fn config_from(a: &EmulateArgs) -> Result<EmulatorConfig> {
    let mut cfg = match &a.config {
        Some(p) => {
            let t = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            toml::from_str::<EmulatorConfig>(&t)
                .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?
        }
        None => EmulatorConfig::default(),
    };
    if let Some(s) = a.seed {
        cfg.seed = s;
    }
    let queue = a.queue.as_deref().map(parse_queue).transpose()?;
    let rqueue = a.reverse_queue.as_deref().map(parse_queue).transpose()?;
    let gilbert = match &a.gilbert {
        Some(s) => {
            let v = split2(s, "--gilbert")?;
            let prob = |x: &str| parse_prob(x).map_err(|e| anyhow::anyhow!("--gilbert {s}: {e}"));
            let p = prob(&v[0])?;
            let r = prob(&v[1])?;
            let h = v.get(2).map(|x| prob(x)).transpose()?.unwrap_or(1.0);
            Some(GilbertElliottConfig {
                p_good_to_bad: p,
                r_bad_to_good: r,
                loss_in_good: 0.0,
                loss_in_bad: h,
            })
        }
        None => None,
    };
    let reorder = match &a.reorder {
        Some(s) => {
            let v = split2(s, "--reorder")?;
            let e = |e: String| anyhow::anyhow!("--reorder {s}: {e}");
            let delay = parse_time(&v[1], Bare::Refused(TimeUnit::Ms)).map_err(e)?;
            Some(ReorderConfig {
                prob: parse_prob(&v[0]).map_err(e)?,
                delay_ms: delay.as_nanos() as f64 / 1e6,
            })
        }
        None => None,
    };
    for (i, p) in [&mut cfg.left_to_right, &mut cfg.right_to_left]
        .into_iter()
        .enumerate()
    {
        let rev = i == 1;
        let rate = if rev {
            a.reverse_rate.or(a.rate)
        } else {
            a.rate
        };
        let delay = if rev {
            a.reverse_delay.or(a.delay)
        } else {
            a.delay
        };
        let loss = if rev {
            a.reverse_loss.or(a.loss)
        } else {
            a.loss
        };
        let ber = if rev { a.reverse_ber.or(a.ber) } else { a.ber };
        let q = if rev {
            rqueue.clone().or(queue.clone())
        } else {
            queue.clone()
        };
        let delay_ms = delay.map(|d| d.as_nanos() as f64 / 1e6);
        apply_flags(p, rate, delay_ms, a.framing, a.mtu, loss, ber, q)?;
        if gilbert.is_some() {
            p.impairments.gilbert = gilbert.clone();
        }
        if reorder.is_some() {
            p.impairments.reorder = reorder.clone();
        }
        if a.duplicate.is_some() {
            p.impairments.duplicate_prob = a.duplicate;
        }
    }
    Ok(cfg)
}

#[allow(clippy::too_many_arguments)]
fn apply_flags(
    p: &mut PathConfig,
    rate: Option<u64>,
    delay: Option<f64>,
    framing: usize,
    mtu: u32,
    loss: Option<f64>,
    ber: Option<f64>,
    queue: Option<QdiscConfig>,
) -> Result<()> {
    if rate.is_some() || delay.is_some() {
        let mut l = p
            .link
            .clone()
            .unwrap_or_else(|| LinkConfig::new(u64::MAX, 0.0));
        if let Some(r) = rate {
            l.rate_bps = r;
        }
        if let Some(d) = delay {
            l.delay_ms = d;
        }
        if framing > 0 {
            l.framing_overhead_bytes = framing;
        }
        l.mtu_bytes = l.mtu_bytes.max(mtu as usize);
        p.link = Some(l);
    }
    // A link with only a delay: no serializer (an "infinite" rate), no queue.
    if p.link.as_ref().is_some_and(|l| l.rate_bps == u64::MAX) {
        p.queue = None;
    } else if let Some(q) = queue {
        if p.link.is_none() {
            bail!("--queue needs --rate (a queue fills only in front of a bottleneck)");
        }
        p.queue = Some(q);
    }
    if loss.is_some() {
        p.impairments.loss_prob = loss;
    }
    if ber.is_some() {
        p.impairments.ber = ber;
    }
    Ok(())
}

/// One direction's settings, written as the flags take them (rate 10mbit, delay 25ms).
fn describe(p: &PathConfig) -> String {
    let mut v = Vec::new();
    let delay = |ms: f64| {
        units::format_time(Duration::from_nanos(
            (ms * 1e6).round().clamp(0.0, u64::MAX as f64) as u64,
        ))
    };
    match &p.link {
        Some(l) if l.rate_bps != u64::MAX => v.push(format!(
            "rate {}, delay {}",
            units::format_rate(l.rate_bps),
            delay(l.delay_ms)
        )),
        Some(l) => v.push(format!("no rate limit, delay {}", delay(l.delay_ms))),
        None => v.push("no rate limit, no delay".into()),
    }
    if let Some(q) = &p.queue {
        v.push(format!("queue {}", q.kind()));
    }
    if let Some(l) = p.impairments.loss_prob {
        v.push(format!("loss {}%", l * 100.0));
    }
    if let Some(b) = p.impairments.ber {
        v.push(format!("ber {b:e}"));
    }
    v.join(", ")
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
    println!(
        "ackclock emulate: left netns {} ({}) <-> right netns {} ({}), interface emu0 in each",
        a.left, a.left_addr, a.right, a.right_addr
    );
    println!("  left -> right: {}", describe(&cfg.left_to_right));
    println!("  right -> left: {}", describe(&cfg.right_to_left));
    println!(
        "  e.g.: ip netns exec {} iperf3 -s -D; ip netns exec {} iperf3 -c {}",
        a.right, a.left, a.right_addr
    );
    println!("ready (Ctrl-C to stop)");
    let _ = std::io::stdout().flush();
    let r = emu.run(a.duration)?;
    println!(
        "\nran {:.3} s, cpu {:.3} s",
        r.elapsed.as_secs_f64(),
        r.cpu.as_secs_f64()
    );
    for (name, s, p) in [
        ("left -> right", &r.left_to_right, &cfg.left_to_right),
        ("right -> left", &r.right_to_left, &cfg.right_to_left),
    ] {
        print_direction(name, s, p, r.elapsed);
    }
    if a.json {
        let j = |s: &DirectionStats, p: &PathConfig| {
            serde_json::json!({
                "packets_in": s.packets_in,
                "bytes_in": s.bytes_in,
                "delivered_pkts": s.delivered_pkts,
                "delivered_bytes": s.delivered_bytes,
                "queue_drops": s.queue.dropped(),
                "queue_marks": s.queue.marked,
                "loss_drops": s.impair.dropped_random + s.impair.dropped_gilbert + s.impair.dropped_scripted,
                "corrupted": s.impair.corrupted,
                "too_big": s.too_big,
                "write_failures": s.write_failures,
                "rate_bps": p.link.as_ref().map(|l| l.rate_bps),
                "delay_ms": p.link.as_ref().map(|l| l.delay_ms),
                "saturated_rate_bps": s.saturated_rate_bps(),
                "delay_min_ms": s.delay.min().map(|d| d.as_nanos() as f64 / 1e6),
                "delay_mean_ms": s.mean_delay().map(|d| d.as_nanos() as f64 / 1e6),
                "delay_p99_ms": s.delay.quantile(0.99).map(|d| d.as_nanos() as f64 / 1e6),
                "lateness_mean_us": s.mean_lateness().map(|d| d.as_nanos() as f64 / 1e3),
                "lateness_p99_us": s.lateness.quantile(0.99).map(|d| d.as_nanos() as f64 / 1e3),
                "lateness_max_us": s.lateness.max().map(|d| d.as_nanos() as f64 / 1e3),
                "queue_delay_mean_ms": s.queue.mean_delay().map(|d| d.as_nanos() as f64 / 1e6),
            })
        };
        println!(
            "{}",
            serde_json::json!({
                "elapsed_s": r.elapsed.as_secs_f64(),
                "cpu_s": r.cpu.as_secs_f64(),
                "left_to_right": j(&r.left_to_right, &cfg.left_to_right),
                "right_to_left": j(&r.right_to_left, &cfg.right_to_left),
            })
        );
    }
    Ok(())
}

fn ms(d: Option<ackclock_wire::Duration>) -> String {
    d.map(|d| format!("{:.3}", d.as_nanos() as f64 / 1e6))
        .unwrap_or_else(|| "-".into())
}

fn print_direction(
    name: &str,
    s: &DirectionStats,
    p: &PathConfig,
    elapsed: ackclock_wire::Duration,
) {
    println!("{name}:");
    println!(
        "  packets    {} in ({} bytes), {} delivered ({} bytes), {} too big, {} refused by the kernel",
        s.packets_in, s.bytes_in, s.delivered_pkts, s.delivered_bytes, s.too_big, s.write_failures
    );
    println!(
        "  drops      queue {} (overflow {}, early {}, forced {}, codel {}, random {}), loss {} (random {}, gilbert {}, scripted {}), corrupted {}, duplicated {}, reordered {}",
        s.queue.dropped(),
        s.queue.dropped_overflow,
        s.queue.dropped_early,
        s.queue.dropped_forced,
        s.queue.dropped_codel,
        s.queue.dropped_random,
        s.impair.dropped_random + s.impair.dropped_gilbert + s.impair.dropped_scripted,
        s.impair.dropped_random,
        s.impair.dropped_gilbert,
        s.impair.dropped_scripted,
        s.impair.corrupted,
        s.impair.duplicated,
        s.impair.reordered
    );
    if s.queue.marked > 0 {
        println!(
            "  marks      {} packets marked CE instead of dropped (RFC 3168)",
            s.queue.marked
        );
    }
    if let Some(l) = p.link.as_ref().filter(|l| l.rate_bps < 1 << 62) {
        let util = if elapsed.as_nanos() > 0 {
            s.busy_ns as f64 / elapsed.as_nanos() as f64
        } else {
            0.0
        };
        println!(
            "  rate       set {:.3} Mbit/s; achieved {} while saturated; utilization {:.1}%",
            l.rate_bps as f64 / 1e6,
            s.saturated_rate_bps()
                .map(|r| format!(
                    "{:.3} Mbit/s ({:+.2}%)",
                    r / 1e6,
                    (r / l.rate_bps as f64 - 1.0) * 100.0
                ))
                .unwrap_or_else(|| "- (never saturated)".into()),
            util * 100.0
        );
    }
    println!(
        "  delay ms   set {}; through the emulator min {} mean {} p99 {} max {}; queueing mean {} p99 {}",
        p.link.as_ref().map_or("0".to_string(), |l| l.delay_ms.to_string()),
        ms(s.delay.min()),
        ms(s.mean_delay()),
        ms(s.delay.quantile(0.99)),
        ms(s.delay.max()),
        ms(s.queue.mean_delay()),
        ms(s.queue.p99_delay()),
    );
    println!(
        "  lateness   of writes against schedule: mean {} ms, p99 {} ms, max {} ms",
        ms(s.mean_lateness()),
        ms(s.lateness.quantile(0.99)),
        ms(s.lateness.max())
    );
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
    fn queue_specs() {
        assert_eq!(
            parse_queue("droptail:64").unwrap(),
            QdiscConfig::DropTail(ackclock_gateway::DropTailConfig {
                mark_threshold_pkts: None,
                limit_pkts: Some(64),
                limit_bytes: None
            })
        );
        assert_eq!(parse_queue("red").unwrap().kind(), "red");
        assert_eq!(
            parse_queue("red:limit_pkts=60,min_th_pkts=5,max_th_pkts=15")
                .unwrap()
                .kind(),
            "red"
        );
        assert_eq!(parse_queue("codel").unwrap().kind(), "codel");
        assert_eq!(parse_queue("fq-codel").unwrap().kind(), "fq_codel");
        assert_eq!(parse_queue("drr:limit_pkts=50").unwrap().kind(), "drr");
        let e = parse_queue("wfq").unwrap_err().to_string();
        assert!(e.contains("droptail"), "{e}");
        let e = parse_queue("red:min_th_pkts=20,max_th_pkts=10")
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_th_pkts"), "{e}");
        assert!(parse_queue("codel:bogus=1").is_err());
    }

    #[test]
    fn flags_build_both_directions() {
        let t = T::parse_from([
            "x",
            "--rate",
            "10mbit",
            "--delay",
            "25ms",
            "--loss",
            "1%",
            "--queue",
            "droptail:64",
            "--reverse-rate",
            "1mbit",
        ]);
        let c = config_from(&t.e).unwrap();
        let f = c.left_to_right.link.as_ref().unwrap();
        assert_eq!(f.rate_bps, 10_000_000);
        assert_eq!(f.delay_ms, 25.0);
        assert_eq!(c.left_to_right.impairments.loss_prob, Some(0.01));
        assert_eq!(c.right_to_left.link.as_ref().unwrap().rate_bps, 1_000_000);
        assert_eq!(c.right_to_left.link.as_ref().unwrap().delay_ms, 25.0);
        assert_eq!(c.right_to_left.queue.as_ref().unwrap().kind(), "drop_tail");
        let t = T::parse_from(["x", "--queue", "codel"]);
        assert!(config_from(&t.e).is_err(), "a queue without a rate");
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

    #[test]
    fn config_file_sections() {
        let d = std::env::temp_dir().join(format!("ackclock-emu-{}.toml", std::process::id()));
        std::fs::write(
            &d,
            "seed = 7\n[left_to_right]\nlink = { rate_bps = 5_000_000, delay_ms = 10.0 }\nqueue = { kind = \"codel\" }\nimpairments = { loss_prob = 0.02 }\n",
        )
        .unwrap();
        let t = T::parse_from(["x", "--config", d.to_str().unwrap(), "--delay", "30ms"]);
        let c = config_from(&t.e).unwrap();
        std::fs::remove_file(&d).unwrap();
        assert_eq!(c.seed, 7);
        let l = c.left_to_right.link.as_ref().unwrap();
        assert_eq!((l.rate_bps, l.delay_ms), (5_000_000, 30.0));
        assert_eq!(c.left_to_right.queue.as_ref().unwrap().kind(), "codel");
        assert_eq!(c.left_to_right.impairments.loss_prob, Some(0.02));
    }
}

/// The queue parser never panics, whatever the text: a queue or an error that names the
/// flag. (The unit parsers have their own properties in `crate::units`.)
#[cfg(test)]
mod parser_properties {
    use super::parse_queue;
    use proptest::prelude::*;

    /// Text made mostly of the characters the queue parser looks at.
    fn near_valid() -> impl Strategy<Value = String> {
        proptest::string::string_regex(
            "[-+0-9.eE%a-z:=,_ /\"\\n]{0,24}|(droptail|red|codel|fq-codel|drr|random-drop)(:[a-z_=0-9.,\"-]{0,30})?",
        )
        .unwrap()
    }

    proptest! {
        #![proptest_config(ackclock_testkit::proptest_config(2000))]

        #[test]
        fn queue_parser_never_panics(s in prop_oneof![near_valid(), any::<String>()]) {
            if let Err(e) = parse_queue(&s) {
                prop_assert!(e.to_string().starts_with("--queue"), "{e}");
            }
        }
    }
}
