//! An emulator's two paths from a command line's settings (`ackclock emulate`'s flags):
//! what each direction's link, queue and impairments become, over an optional
//! configuration file's. The flags' own grammar (times, rates, probabilities) is the
//! caller's; this is what they mean.

use super::{EmulatorConfig, PathConfig};
use ackclock_gateway::{GilbertElliottConfig, LinkConfig, QdiscConfig, ReorderConfig};
use std::time::Duration;

/// The settings of both directions; the `reverse_*` ones, when given, replace the plain
/// ones for right to left. Errors name the flag (`--queue`, `--gilbert`, `--reorder`).
#[derive(Clone, Debug, Default)]
pub struct PathFlags {
    /// Bottleneck rate, bits per second.
    pub rate: Option<u64>,
    /// One-way propagation delay.
    pub delay: Option<Duration>,
    /// Random loss per packet.
    pub loss: Option<f64>,
    /// Queue discipline, as `KIND[:ARGS]` ([`parse_queue`]).
    pub queue: Option<String>,
    /// Bit error rate.
    pub ber: Option<f64>,
    /// Gilbert-Elliott loss, `P:R[:H]`.
    pub gilbert: Option<String>,
    /// Reordering, `PROB:DELAY`.
    pub reorder: Option<String>,
    /// Duplication probability.
    pub duplicate: Option<f64>,
    /// Framing overhead per packet, bytes (0: none).
    pub framing: usize,
    /// The interfaces' MTU, bytes.
    pub mtu: u32,
    /// Right-to-left rate.
    pub reverse_rate: Option<u64>,
    /// Right-to-left delay.
    pub reverse_delay: Option<Duration>,
    /// Right-to-left loss.
    pub reverse_loss: Option<f64>,
    /// Right-to-left queue.
    pub reverse_queue: Option<String>,
    /// Right-to-left bit error rate.
    pub reverse_ber: Option<f64>,
    /// Replaces the configuration's seed.
    pub seed: Option<u64>,
}

/// Reads a probability (`1%`, `0.01`) for `--gilbert` and `--reorder`.
pub type ProbParser = fn(&str) -> Result<f64, String>;
/// Reads a time with its unit for `--reorder`.
pub type TimeParser = fn(&str) -> Result<Duration, String>;

/// `KIND[:ARGS]` to a queue configuration, through the gateway's own serde names.
pub fn parse_queue(spec: &str) -> Result<QdiscConfig, String> {
    let (kind, args) = spec.split_once(':').unwrap_or((spec, ""));
    let kind = match kind.to_ascii_lowercase().replace('-', "_").as_str() {
        "droptail" | "drop_tail" | "fifo" | "pfifo" => "drop_tail",
        "randomdrop" | "random_drop" => "random_drop",
        "red" => "red",
        "drr" => "drr",
        "codel" => "codel",
        "fqcodel" | "fq_codel" => "fq_codel",
        "decbit" | "dec_bit" => "dec_bit",
        k => {
            return Err(format!(
                "--queue {spec:?}: unknown kind {k:?}; use droptail, random-drop, red, drr, codel, fq-codel or dec-bit"
            ))
        }
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
                    return Err(format!("--queue {spec:?}: expected KIND:LIMIT or KIND:key=value,... (e.g. red:limit_pkts=64,min_th_pkts=5,max_th_pkts=15)"));
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
    let q: QdiscConfig =
        toml::from_str(&toml_text).map_err(|e| format!("--queue {spec:?}: {}", e.message()))?;
    q.validate().map_err(|e| format!("--queue {spec:?}: {e}"))?;
    Ok(q)
}

fn split2(s: &str, what: &str) -> Result<Vec<String>, String> {
    let v: Vec<String> = s.split(':').map(str::to_string).collect();
    if v.len() < 2 {
        return Err(format!("{what} {s:?}: expected values separated by ':'"));
    }
    Ok(v)
}

impl PathFlags {
    /// `base` (a configuration file's, or the default) with these settings over it.
    /// `prob` and `time` read the `--gilbert` and `--reorder` values (the command line's
    /// grammar).
    ///
    /// # Errors
    /// A setting that does not parse, or a queue without a rate.
    pub fn apply(
        &self,
        mut cfg: EmulatorConfig,
        prob: ProbParser,
        time: TimeParser,
    ) -> Result<EmulatorConfig, String> {
        let a = self;
        if let Some(s) = a.seed {
            cfg.seed = s;
        }
        let queue = a.queue.as_deref().map(parse_queue).transpose()?;
        let rqueue = a.reverse_queue.as_deref().map(parse_queue).transpose()?;
        let gilbert = match &a.gilbert {
            Some(s) => {
                let v = split2(s, "--gilbert")?;
                let prob = |x: &str| prob(x).map_err(|e| format!("--gilbert {s}: {e}"));
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
                let e = |e: String| format!("--reorder {s}: {e}");
                let delay = time(&v[1]).map_err(e)?;
                Some(ReorderConfig {
                    prob: prob(&v[0]).map_err(e)?,
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
) -> Result<(), String> {
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
            return Err(
                "--queue needs --rate (a queue fills only in front of a bottleneck)".to_string(),
            );
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

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(f: PathFlags) -> Result<EmulatorConfig, String> {
        let prob = |s: &str| {
            s.trim_end_matches('%')
                .parse::<f64>()
                .map(|v| if s.ends_with('%') { v / 100.0 } else { v })
                .map_err(|e| e.to_string())
        };
        let time = |s: &str| {
            s.strip_suffix("ms")
                .and_then(|v| v.parse::<u64>().ok())
                .map(Duration::from_millis)
                .ok_or_else(|| format!("{s}: not a time in ms"))
        };
        f.apply(EmulatorConfig::default(), prob, time)
    }

    #[test]
    fn flags_build_both_directions() {
        let c = flags(PathFlags {
            rate: Some(10_000_000),
            delay: Some(Duration::from_millis(25)),
            loss: Some(0.01),
            queue: Some("droptail:64".into()),
            reverse_rate: Some(1_000_000),
            reorder: Some("1%:10ms".into()),
            mtu: 1500,
            ..PathFlags::default()
        })
        .unwrap();
        let f = c.left_to_right.link.as_ref().unwrap();
        assert_eq!(f.rate_bps, 10_000_000);
        assert_eq!(f.delay_ms, 25.0);
        assert_eq!(c.left_to_right.impairments.loss_prob, Some(0.01));
        assert_eq!(c.right_to_left.link.as_ref().unwrap().rate_bps, 1_000_000);
        assert_eq!(c.right_to_left.link.as_ref().unwrap().delay_ms, 25.0);
        assert_eq!(c.right_to_left.queue.as_ref().unwrap().kind(), "drop_tail");
        let r = c.left_to_right.impairments.reorder.as_ref().unwrap();
        assert_eq!((r.prob, r.delay_ms), (0.01, 10.0));
        let e = flags(PathFlags {
            queue: Some("codel".into()),
            ..PathFlags::default()
        })
        .unwrap_err();
        assert_eq!(
            e,
            "--queue needs --rate (a queue fills only in front of a bottleneck)"
        );
    }

    #[test]
    fn a_config_file_gives_the_base_and_the_flags_override_it() {
        let d = std::env::temp_dir().join(format!("ackclock-emu-{}.toml", std::process::id()));
        std::fs::write(
            &d,
            "seed = 7\n[left_to_right]\nlink = { rate_bps = 5_000_000, delay_ms = 10.0 }\nqueue = { kind = \"codel\" }\nimpairments = { loss_prob = 0.02 }\n",
        )
        .unwrap();
        let base = EmulatorConfig::load(&d).unwrap();
        std::fs::remove_file(&d).unwrap();
        let prob = |s: &str| s.parse::<f64>().map_err(|e| e.to_string());
        let time = |_: &str| Err("unused".to_string());
        let f = PathFlags {
            delay: Some(Duration::from_millis(30)),
            mtu: 1500,
            ..PathFlags::default()
        };
        let c = f.apply(base, prob, time).unwrap();
        assert_eq!(c.seed, 7);
        let l = c.left_to_right.link.as_ref().unwrap();
        assert_eq!((l.rate_bps, l.delay_ms), (5_000_000, 30.0));
        assert_eq!(c.left_to_right.queue.as_ref().unwrap().kind(), "codel");
        assert_eq!(c.left_to_right.impairments.loss_prob, Some(0.02));
        let e = EmulatorConfig::load(std::path::Path::new("/nonexistent/x.toml")).unwrap_err();
        assert!(
            e.to_string().starts_with("cannot read /nonexistent/x.toml"),
            "{e}"
        );
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
        let e = parse_queue("wfq").unwrap_err();
        assert!(e.contains("droptail"), "{e}");
        let e = parse_queue("red:min_th_pkts=20,max_th_pkts=10").unwrap_err();
        assert!(e.contains("max_th_pkts"), "{e}");
        assert!(parse_queue("codel:bogus=1").is_err());
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
                prop_assert!(e.starts_with("--queue"), "{e}");
            }
        }
    }
}
