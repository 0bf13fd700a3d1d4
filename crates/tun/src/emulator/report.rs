//! What `ackclock emulate` prints: each direction's settings as the flags write them, and
//! its statistics after a run, as text and as JSON (docs/OUTPUTS.md).

use super::{DirectionStats, EmulatorConfig, EmulatorReport, PathConfig};
use std::fmt::Write as _;
use std::time::Duration;

/// `writeln!` into a `String`, which cannot fail.
macro_rules! w {
    ($out:expr, $($t:tt)*) => {
        let _ = writeln!($out, $($t)*);
    };
}

/// A time as the command line writes it (25ms, 1.5s).
pub type TimeFormat = fn(Duration) -> String;
/// A rate as the command line writes it (10mbit).
pub type RateFormat = fn(u64) -> String;

/// One direction's settings, written as the flags take them (rate 10mbit, delay 25ms),
/// with the command line's formatters.
pub fn describe(p: &PathConfig, format_time: TimeFormat, format_rate: RateFormat) -> String {
    let mut v = Vec::new();
    let delay = |ms: f64| {
        format_time(Duration::from_nanos(
            (ms * 1e6).round().clamp(0.0, u64::MAX as f64) as u64,
        ))
    };
    match &p.link {
        Some(l) if l.rate_bps != u64::MAX => v.push(format!(
            "rate {}, delay {}",
            format_rate(l.rate_bps),
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

fn ms(d: Option<ackclock_wire::Duration>) -> String {
    d.map(|d| format!("{:.3}", d.as_nanos() as f64 / 1e6))
        .unwrap_or_else(|| "-".into())
}

/// One direction's statistics after a run, as lines under its name.
pub fn direction_text(
    name: &str,
    s: &DirectionStats,
    p: &PathConfig,
    elapsed: ackclock_wire::Duration,
) -> String {
    let mut out = String::new();
    w!(out, "{name}:");
    w!(out,
        "  packets    {} in ({} bytes), {} delivered ({} bytes), {} too big, {} refused by the kernel",
        s.packets_in, s.bytes_in, s.delivered_pkts, s.delivered_bytes, s.too_big, s.write_failures
    );
    w!(out,
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
        w!(
            out,
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
        w!(
            out,
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
    w!(out,
        "  delay ms   set {}; through the emulator min {} mean {} p99 {} max {}; queueing mean {} p99 {}",
        p.link.as_ref().map_or("0".to_string(), |l| l.delay_ms.to_string()),
        ms(s.delay.min()),
        ms(s.mean_delay()),
        ms(s.delay.quantile(0.99)),
        ms(s.delay.max()),
        ms(s.queue.mean_delay()),
        ms(s.queue.p99_delay()),
    );
    w!(
        out,
        "  lateness   of writes against schedule: mean {} ms, p99 {} ms, max {} ms",
        ms(s.mean_lateness()),
        ms(s.lateness.quantile(0.99)),
        ms(s.lateness.max())
    );
    out
}

/// The run's statistics as JSON (`emulate --json`).
pub fn json(r: &EmulatorReport, cfg: &EmulatorConfig) -> serde_json::Value {
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
    serde_json::json!({
        "elapsed_s": r.elapsed.as_secs_f64(),
        "cpu_s": r.cpu.as_secs_f64(),
        "left_to_right": j(&r.left_to_right, &cfg.left_to_right),
        "right_to_left": j(&r.right_to_left, &cfg.right_to_left),
    })
}
