//! `ackclock-units`: the one grammar of times, rates and sizes on ackclock's command line.
//! Every flag that takes one parses it here, so `25ms` means the same to every command.
//!
//! | kind | forms (unit names are case-insensitive) | bare number |
//! |---|---|---|
//! | time | `200ns`, `200us` (`µs`), `25ms`, `1.5s`, `2min`, `1h`; tc's `usec`, `msec`, `sec` (and plurals) too | only where the flag names its unit: `--rto-min-ms 200` is 200 ms, `--tolerance-usecs 25000` is 25 ms, `--interval-secs 1` (`stream -i 1`) is 1 s; elsewhere an error that says what to type |
//! | rate | `9600bit`, `64kbit`, `10mbit`, `1.5gbit`, `1tbit` (bits per second, as tc writes them; `/s` may follow: `10mbit/s`) | error |
//! | size | `1500` or `1500b` (bytes), `64k` = `64KiB` = 65536, `1m` = `1MiB`, `1g` = `1GiB`, `1t` = `1TiB` (binary), `64KB` = 64000, `1MB`, `1GB`, `1TB` (decimal) | bytes |
//! | probability | `1%`, `0.01` | a fraction |
//! | address | `198.18.0.1:5001` (IPv4 and port) | an address without a port is refused with a hint to add `:PORT` |
//!
//! Numbers are decimal, with an optional fraction and exponent (`1.5`, `2e3`, `.5`), and are
//! read exactly: `0.1s` is 100,000,000 ns. A result is rounded to the nearest unit of its
//! kind (ns, bit/s, byte). `bps`, `kbps`, `Mbps`... are refused, because tc reads them as
//! bytes per second and most other tools as bits: the message offers both readings. `m`
//! alone is refused for a time (milliseconds or minutes?).
//!
//! Negative, not-a-number and infinite values are refused, as is anything past the kind's
//! range (times up to 2^64 - 1 ns, about 584 years; rates 1 bit/s to 10 Tbit/s; sizes up to
//! what the flag's type holds) — before any command acts on it.

//!
//! # Example
//!
//! ```
//! use ackclock_units::{format_rate, parse_rate, parse_size, parse_time, Bare, TimeUnit};
//! use std::time::Duration;
//!
//! assert_eq!(parse_time("1.5s", Bare::Refused(TimeUnit::Ms)), Ok(Duration::from_millis(1500)));
//! assert_eq!(parse_time("200", Bare::Is(TimeUnit::Ms)), Ok(Duration::from_millis(200)));
//! assert_eq!(parse_rate("10mbit"), Ok(10_000_000));
//! assert_eq!(parse_size("64k"), Ok(65_536));
//! assert_eq!(format_rate(10_000_000), "10mbit");
//! assert!(parse_rate("10mbps").is_err(), "bytes or bits? refused");
//! ```

#![warn(missing_docs)]

use clap::builder::TypedValueParser;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

/// Help text about units, for the `after_help` of commands whose flags take them (a macro,
/// so that `concat!` can join it to their examples).
#[macro_export]
macro_rules! units_help {
    () => {
        "\
Units: a time takes one (25ms, 1.5s, 200us, 2min); a flag ending in -ms also takes a bare
number of milliseconds (--rto-min-ms 200 = 200ms), one ending in -secs a bare number of
seconds (--interval-secs 1 = 1s). Rates are bits per second (64kbit,
10mbit, 1.5gbit). Sizes are bytes: 1500, 64K = 64KiB = 65536, 1M = 1MiB (binary);
64KB = 64000 (decimal)."
    };
}

/// A unit of time, for what a bare number means (or would have meant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
}

impl TimeUnit {
    const fn ns(self) -> u64 {
        match self {
            TimeUnit::Us => 1_000,
            TimeUnit::Ms => 1_000_000,
            TimeUnit::S => 1_000_000_000,
        }
    }
    const fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Us => "us",
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
        }
    }
    /// The other unit an example offers beside this one.
    const fn neighbour(self) -> TimeUnit {
        match self {
            TimeUnit::Us => TimeUnit::Ms,
            TimeUnit::Ms => TimeUnit::S,
            TimeUnit::S => TimeUnit::Ms,
        }
    }
}

/// What a bare number (no unit) given to a time flag means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bare {
    /// The flag's name carries the unit (`--rto-min-ms`): a bare number is in this unit.
    Is(TimeUnit),
    /// It does not (`--delay`): a bare number is an error, whose example reads it in this
    /// unit.
    Refused(TimeUnit),
}

const TIME_UNITS: &[(&[&str], u64)] = &[
    (&["ns", "nsec", "nsecs"], 1),
    (&["us", "usec", "usecs", "µs", "μs"], 1_000),
    (&["ms", "msec", "msecs"], 1_000_000),
    (&["s", "sec", "secs"], 1_000_000_000),
    (&["min", "mins"], 60_000_000_000),
    (&["h", "hour", "hours"], 3_600_000_000_000),
];

const RATE_PREFIXES: &[(&str, u64)] = &[
    ("", 1),
    ("k", 1_000),
    ("m", 1_000_000),
    ("g", 1_000_000_000),
    ("t", 1_000_000_000_000),
];

const SIZE_UNITS: &[(&[&str], u64)] = &[
    (&["", "b"], 1),
    (&["k", "kib"], 1 << 10),
    (&["m", "mib"], 1 << 20),
    (&["g", "gib"], 1 << 30),
    (&["t", "tib"], 1 << 40),
    (&["kb"], 1_000),
    (&["mb"], 1_000_000),
    (&["gb"], 1_000_000_000),
    (&["tb"], 1_000_000_000_000),
];

/// The largest rate: 10 Tbit/s (the bound scenario files put on `rate_bps` too).
pub const MAX_RATE_BPS: u64 = 10_000_000_000_000;

/// A decimal number as written: `mantissa * 10^exp10`, exactly (up to 24 significant
/// digits; later ones are dropped, which moves no value by a whole unit).
#[derive(Clone, Copy, Debug)]
struct Number {
    negative: bool,
    mantissa: u128,
    exp10: i64,
}

impl Number {
    /// `self * unit`, rounded to the nearest integer (halves up); `None` if past u128.
    fn times(&self, unit: u64) -> Option<u128> {
        let m = self.mantissa.checked_mul(u128::from(unit))?;
        if m == 0 {
            return Some(0);
        }
        if self.exp10 >= 0 {
            let p = 10u128.checked_pow(u32::try_from(self.exp10).ok()?)?;
            m.checked_mul(p)
        } else {
            let k = self.exp10.unsigned_abs();
            if k > 38 {
                // m < 10^24 * 2^42 < 10^38 / 2: rounds to zero.
                return Some(0);
            }
            let d = 10u128.pow(k as u32);
            let (q, r) = (m / d, m % d);
            Some(q + u128::from(2 * r >= d))
        }
    }
}

/// Splits `s` into the decimal number it starts with and the rest; `None` when it does not
/// start with one.
fn split_number(s: &str) -> Option<(Number, &str)> {
    const DIGITS: u32 = 24;
    let b = s.as_bytes();
    let mut i = 0;
    let negative = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let (mut mantissa, mut exp10, mut digits, mut significant) = (0u128, 0i64, 0u32, 0u32);
    let mut point = false;
    while let Some(&c) = b.get(i) {
        match c {
            b'0'..=b'9' => {
                digits += 1;
                let d = u128::from(c - b'0');
                if significant < DIGITS {
                    if mantissa > 0 || d > 0 {
                        significant += 1;
                    }
                    mantissa = mantissa * 10 + d;
                    if point {
                        exp10 -= 1;
                    }
                } else if !point {
                    exp10 += 1;
                }
            }
            b'.' if !point => point = true,
            _ => break,
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        let negative_exp = match b.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        let start = j;
        let mut e: i64 = 0;
        while let Some(c) = b.get(j).filter(|c| c.is_ascii_digit()) {
            e = (e * 10 + i64::from(c - b'0')).min(1_000_000);
            j += 1;
        }
        if j > start {
            exp10 += if negative_exp { -e } else { e };
            i = j;
        }
    }
    Some((
        Number {
            negative,
            mantissa,
            exp10,
        },
        &s[i..],
    ))
}

/// A number and its unit (trimmed, as written), or the error for text that is no number.
fn quantity<'a>(s: &'a str, expected: &str) -> Result<(Number, &'a str, &'a str), String> {
    let t = s.trim();
    let (n, rest) = split_number(t).ok_or_else(|| format!("expected {expected}"))?;
    let num_text = &t[..t.len() - rest.len()];
    let unit = rest.trim();
    if unit.chars().next().is_some_and(|c| !c.is_alphabetic()) {
        return Err(format!("expected {expected}"));
    }
    if n.negative && n.mantissa != 0 {
        return Err(format!("{} must not be negative", article(expected)));
    }
    Ok((n, num_text.trim_start_matches('+'), unit))
}

/// "a time such as ..." -> "a time".
fn article(expected: &str) -> &str {
    expected.split(" such as").next().unwrap_or(expected)
}

/// `v / unit` in decimal, exactly, without trailing zeros: `decimal(25_000_000, 10^9)` is
/// "0.025". `unit` is a power of ten.
fn decimal(v: u128, unit: u128) -> String {
    let (whole, frac) = (v / unit, v % unit);
    if frac == 0 {
        return whole.to_string();
    }
    let width = unit.ilog10() as usize;
    let f = format!("{frac:0width$}");
    format!("{whole}.{}", f.trim_end_matches('0'))
}

/// A time. `bare` says what a number without a unit means.
pub fn parse_time(s: &str, bare: Bare) -> Result<Duration, String> {
    const EXPECTED: &str = "a time such as 25ms, 1.5s or 200us";
    let (n, num, unit) = quantity(s, EXPECTED)?;
    let lower = unit.to_lowercase();
    let per_unit = if lower.is_empty() {
        match bare {
            Bare::Is(u) => u.ns(),
            Bare::Refused(hint) => {
                let other = hint.neighbour();
                return Err(match n.times(hint.ns()) {
                    Some(ns) => format!(
                        "a time needs a unit, e.g. {}{} or {}{}",
                        decimal(ns, u128::from(hint.ns())),
                        hint.symbol(),
                        decimal(ns, u128::from(other.ns())),
                        other.symbol()
                    ),
                    None => "a time needs a unit, e.g. 25ms or 1.5s".to_string(),
                });
            }
        }
    } else if lower == "m" {
        return Err(format!(
            "\"m\" could be milliseconds or minutes: write {num}ms or {num}min"
        ));
    } else {
        TIME_UNITS
            .iter()
            .find(|(names, _)| names.contains(&lower.as_str()))
            .map(|(_, ns)| *ns)
            .ok_or_else(|| {
                format!(
                    "unknown unit \"{unit}\"; a time takes ns, us, ms, s, min or h (e.g. {num}ms)"
                )
            })?
    };
    n.times(per_unit)
        .and_then(|ns| u64::try_from(ns).ok())
        .map(Duration::from_nanos)
        .ok_or_else(|| "out of range: a time can be at most 18446744073s (584 years)".into())
}

/// A rate in bits per second (`10mbit`); a bare number is refused.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    const EXPECTED: &str = "a rate such as 10mbit, 1.5gbit or 64kbit";
    let (n, num, unit) = quantity(s, EXPECTED)?;
    let lower = unit.to_ascii_lowercase();
    let units = "a rate takes bit, kbit, mbit, gbit or tbit (bits per second)";
    if lower.is_empty() {
        return Err(format!(
            "a rate needs a unit, e.g. {num}mbit or {num}kbit; {units}"
        ));
    }
    let prefix_of = |stem: &str| RATE_PREFIXES.iter().find(|(p, _)| *p == stem).map(|p| p.1);
    if let Some(mult) = lower.strip_suffix("bps").and_then(prefix_of) {
        let p = &lower[..lower.len() - 3];
        let bytes = n
            .times(mult)
            .and_then(|v| v.checked_mul(8))
            .and_then(|v| u64::try_from(v).ok())
            .filter(|v| *v > 0);
        return Err(match bytes {
            Some(b) => format!(
                "\"{unit}\" is ambiguous (tc reads it as bytes per second, most tools as bits): write {num}{p}bit for bits, or {} for bytes per second",
                format_rate(b)
            ),
            None => format!(
                "\"{unit}\" is ambiguous (tc reads it as bytes per second, most tools as bits): write {num}{p}bit for bits per second"
            ),
        });
    }
    let stem = lower
        .strip_suffix("bit/s")
        .or_else(|| lower.strip_suffix("bit"));
    let Some(mult) = stem.and_then(prefix_of) else {
        if prefix_of(&lower).is_some() {
            return Err(format!("\"{unit}\" of what? write {num}{lower}bit"));
        }
        return Err(format!("unknown unit \"{unit}\"; {units}, e.g. {num}mbit"));
    };
    let v = n
        .times(mult)
        .ok_or_else(|| "out of range: a rate can be at most 10tbit".to_string())?;
    if v == 0 {
        return Err("a rate must be positive".into());
    }
    if v > u128::from(MAX_RATE_BPS) {
        return Err("out of range: a rate can be at most 10tbit".into());
    }
    Ok(v as u64)
}

/// A size in bytes, at most `max` (a bare number is bytes).
pub fn parse_size_max(s: &str, max: u64) -> Result<u64, String> {
    const EXPECTED: &str = "a size such as 65536, 64KiB, 1MiB or 1GB";
    let (n, _num, unit) = quantity(s, EXPECTED)?;
    let lower = unit.to_ascii_lowercase();
    let mult = SIZE_UNITS
        .iter()
        .find(|(names, _)| names.contains(&lower.as_str()))
        .map(|(_, m)| *m)
        .ok_or_else(|| {
            format!(
                "unknown unit \"{unit}\"; a size takes B, K/KiB, M/MiB, G/GiB (binary) or KB, MB, GB (decimal)"
            )
        })?;
    n.times(mult)
        .and_then(|v| u64::try_from(v).ok())
        .filter(|v| *v <= max)
        .ok_or_else(|| format!("out of range: at most {max} bytes"))
}

/// A size in bytes (a bare number is bytes).
pub fn parse_size(s: &str) -> Result<u64, String> {
    parse_size_max(s, u64::MAX)
}

/// A probability: `1%` or `0.01`.
pub fn parse_prob(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = if let Some(p) = t.strip_suffix('%') {
        p.trim().parse::<f64>().map(|v| v / 100.0)
    } else {
        t.parse::<f64>()
    }
    .map_err(|_| "expected a probability such as 1% or 0.01".to_string())?;
    if !(0.0..=1.0).contains(&v) {
        return Err("a probability must be between 0 and 1 (0% to 100%)".into());
    }
    Ok(v)
}

/// An IPv4 address and port, `198.18.0.1:5001`. An address alone is refused with the hint
/// to add `:PORT` (the standard parser's "invalid IPv4 socket address syntax" does not say
/// what is missing).
pub fn parse_socket_addr(s: &str) -> Result<SocketAddrV4, String> {
    let t = s.trim();
    if let Ok(a) = t.parse::<SocketAddrV4>() {
        return Ok(a);
    }
    if t.parse::<Ipv4Addr>().is_ok() {
        return Err(format!("no port: add one, as in {t}:5001"));
    }
    Err("expected an IPv4 address and port, such as 198.18.0.1:5001".into())
}

/// A time as the grammar writes it, exactly: `25ms`, `1.5s`, `2min`.
pub fn format_time(d: Duration) -> String {
    let ns = d.as_nanos();
    for (names, unit) in TIME_UNITS.iter().rev().take(2) {
        if ns > 0 && ns % u128::from(*unit) == 0 {
            return format!("{}{}", ns / u128::from(*unit), names[0]);
        }
    }
    let (unit, name) = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")]
        .into_iter()
        .find(|(u, _)| ns >= *u)
        .unwrap_or((1, if ns == 0 { "s" } else { "ns" }));
    format!("{}{name}", decimal(ns, unit))
}

/// A rate as the grammar writes it, exactly: `10mbit`, `1.5gbit`.
pub fn format_rate(bps: u64) -> String {
    let (prefix, unit) = RATE_PREFIXES
        .iter()
        .rev()
        .find(|(_, u)| bps >= *u)
        .copied()
        .unwrap_or(("", 1));
    format!("{}{prefix}bit", decimal(u128::from(bps), u128::from(unit)))
}

/// A size as the grammar writes it, exactly: `64KiB`, `1500B`, `64KB`. (No message needs
/// it yet; it is the other half of the size grammar's round-trip property.)
#[cfg_attr(not(test), allow(dead_code))]
pub fn format_size(bytes: u64) -> String {
    for (name, unit) in [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
        ("TB", 1_000_000_000_000),
        ("GB", 1_000_000_000),
        ("MB", 1_000_000),
        ("KB", 1_000),
    ] {
        if bytes > 0 && bytes % unit == 0 {
            return format!("{}{name}", bytes / unit);
        }
    }
    format!("{bytes}B")
}

/// A clap value parser over one of the functions above: its errors read
/// `error: --flag VALUE: reason`.
#[derive(Clone, Copy)]
pub struct Units<T> {
    parse: fn(&str) -> Result<T, String>,
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Units<T> {
    type Value = T;
    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let text = value.to_string_lossy();
        (self.parse)(&text).map_err(|reason| {
            let flag = arg
                .and_then(|a| a.get_long().map(|l| format!("--{l}")))
                .or_else(|| arg.map(|a| a.get_id().to_string()))
                .unwrap_or_else(|| "value".into());
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("{flag} {text}: {reason}\n"),
            )
            .with_cmd(cmd)
        })
    }
}

/// A time with its unit; a bare number is refused (the example reads it as milliseconds,
/// what it used to mean for the delay flags).
pub fn time_hint_ms() -> Units<Duration> {
    Units {
        parse: |s| parse_time(s, Bare::Refused(TimeUnit::Ms)),
    }
}

/// A time with its unit; a bare number is refused (the example reads it as seconds, what
/// it used to mean for `--time`, `--duration` and the like).
pub fn time_hint_s() -> Units<Duration> {
    Units {
        parse: |s| parse_time(s, Bare::Refused(TimeUnit::S)),
    }
}

/// A `-ms` flag: milliseconds, bare or with any time unit (`200`, `200ms`, `0.2s`).
pub fn millis() -> Units<f64> {
    Units { parse: parse_ms }
}

/// A `-ms` flag's value in milliseconds.
pub fn parse_ms(s: &str) -> Result<f64, String> {
    parse_time(s, Bare::Is(TimeUnit::Ms)).map(|d| d.as_nanos() as f64 / 1e6)
}

/// A `-secs` flag: seconds, bare or with any time unit (`1`, `0.5`, `500ms`).
pub fn secs() -> Units<Duration> {
    Units {
        parse: |s| parse_time(s, Bare::Is(TimeUnit::S)),
    }
}

/// A `-usecs` flag: whole microseconds, bare or with any time unit (`25000`, `25ms`).
pub fn micros() -> Units<u64> {
    Units {
        parse: |s| {
            parse_time(s, Bare::Is(TimeUnit::Us)).map(|d| ((d.as_nanos() + 500) / 1_000) as u64)
        },
    }
}

/// A rate in bits per second.
pub fn rate() -> Units<u64> {
    Units { parse: parse_rate }
}

/// A size in bytes.
pub fn size() -> Units<u64> {
    Units { parse: parse_size }
}

/// A size in bytes that fits a `usize`.
pub fn size_usize() -> Units<usize> {
    Units {
        parse: |s| parse_size_max(s, usize::MAX as u64).map(|v| v as usize),
    }
}

/// A size in bytes that fits a `u32`.
pub fn size_u32() -> Units<u32> {
    Units {
        parse: |s| parse_size_max(s, u64::from(u32::MAX)).map(|v| v as u32),
    }
}

/// A size in bytes that fits a `u16`.
pub fn size_u16() -> Units<u16> {
    Units {
        parse: |s| parse_size_max(s, u64::from(u16::MAX)).map(|v| v as u16),
    }
}

/// A probability.
pub fn prob() -> Units<f64> {
    Units { parse: parse_prob }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Bare = Bare::Is(TimeUnit::Ms);
    const NEEDS: Bare = Bare::Refused(TimeUnit::Ms);

    fn t(s: &str) -> Result<Duration, String> {
        parse_time(s, NEEDS)
    }

    #[test]
    fn time_forms() {
        assert_eq!(t("25ms"), Ok(Duration::from_millis(25)));
        assert_eq!(t("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(t("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(t("200us"), Ok(Duration::from_micros(200)));
        assert_eq!(t("200µs"), Ok(Duration::from_micros(200)));
        assert_eq!(t("200ns"), Ok(Duration::from_nanos(200)));
        assert_eq!(t("2min"), Ok(Duration::from_secs(120)));
        assert_eq!(t("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(t("25MS"), Ok(Duration::from_millis(25)));
        assert_eq!(t("25 ms"), Ok(Duration::from_millis(25)));
        assert_eq!(t("25msec"), Ok(Duration::from_millis(25)));
        assert_eq!(t("3secs"), Ok(Duration::from_secs(3)));
        assert_eq!(t("2e3ms"), Ok(Duration::from_secs(2)));
        assert_eq!(t(".5s"), Ok(Duration::from_millis(500)));
        assert_eq!(
            t("0.1s"),
            Ok(Duration::from_millis(100)),
            "exact, not 0.1 in binary"
        );
        assert_eq!(t("0s"), Ok(Duration::ZERO));
        assert_eq!(
            t("1.5ns"),
            Ok(Duration::from_nanos(2)),
            "rounded to the nearest ns"
        );
    }

    #[test]
    fn time_bare_numbers() {
        assert_eq!(parse_time("200", MS), Ok(Duration::from_millis(200)));
        assert_eq!(parse_time("0.5", MS), Ok(Duration::from_micros(500)));
        assert_eq!(parse_time("1s", MS), Ok(Duration::from_secs(1)));
        assert_eq!(
            parse_time("25000", Bare::Is(TimeUnit::Us)),
            Ok(Duration::from_millis(25))
        );
        assert_eq!(
            t("25").unwrap_err(),
            "a time needs a unit, e.g. 25ms or 0.025s"
        );
        assert_eq!(
            parse_time("10", Bare::Refused(TimeUnit::S)).unwrap_err(),
            "a time needs a unit, e.g. 10s or 10000ms"
        );
        assert_eq!(parse_ms("200"), Ok(200.0));
        assert_eq!(parse_ms("200ms"), Ok(200.0));
        assert_eq!(parse_ms("1s"), Ok(1000.0));
        assert_eq!(parse_ms("300us"), Ok(0.3));
    }

    #[test]
    fn time_errors() {
        assert_eq!(
            t("fast").unwrap_err(),
            "expected a time such as 25ms, 1.5s or 200us"
        );
        assert_eq!(
            t("").unwrap_err(),
            "expected a time such as 25ms, 1.5s or 200us"
        );
        assert_eq!(
            t("1,5ms").unwrap_err(),
            "expected a time such as 25ms, 1.5s or 200us"
        );
        assert_eq!(t("-5ms").unwrap_err(), "a time must not be negative");
        assert_eq!(
            t("5m").unwrap_err(),
            "\"m\" could be milliseconds or minutes: write 5ms or 5min"
        );
        assert_eq!(
            t("25xs").unwrap_err(),
            "unknown unit \"xs\"; a time takes ns, us, ms, s, min or h (e.g. 25ms)"
        );
        for absurd in [
            "nan",
            "NaNms",
            "inf",
            "infs",
            "-inf",
            "1e400s",
            "18446744074s",
        ] {
            assert!(t(absurd).is_err(), "{absurd}");
        }
        assert_eq!(
            t("1e12s").unwrap_err(),
            "out of range: a time can be at most 18446744073s (584 years)"
        );
        assert_eq!(
            t("18446744073.709551615s"),
            Ok(Duration::from_nanos(u64::MAX))
        );
    }

    #[test]
    fn rate_forms() {
        assert_eq!(parse_rate("9600bit"), Ok(9600));
        assert_eq!(parse_rate("64kbit"), Ok(64_000));
        assert_eq!(parse_rate("10mbit"), Ok(10_000_000));
        assert_eq!(parse_rate("10Mbit"), Ok(10_000_000));
        assert_eq!(parse_rate("10mbit/s"), Ok(10_000_000));
        assert_eq!(parse_rate("1.5Gbit"), Ok(1_500_000_000));
        assert_eq!(parse_rate("1tbit"), Ok(1_000_000_000_000));
        assert_eq!(parse_rate("10tbit"), Ok(MAX_RATE_BPS));
    }

    #[test]
    fn rate_errors() {
        assert_eq!(
            parse_rate("10").unwrap_err(),
            "a rate needs a unit, e.g. 10mbit or 10kbit; a rate takes bit, kbit, mbit, gbit or tbit (bits per second)"
        );
        assert_eq!(
            parse_rate("100Mbps").unwrap_err(),
            "\"Mbps\" is ambiguous (tc reads it as bytes per second, most tools as bits): write 100mbit for bits, or 800mbit for bytes per second"
        );
        assert!(parse_rate("1bps")
            .unwrap_err()
            .contains("write 1bit for bits"));
        assert_eq!(
            parse_rate("100M").unwrap_err(),
            "\"M\" of what? write 100mbit"
        );
        assert_eq!(
            parse_rate("10furlongs").unwrap_err(),
            "unknown unit \"furlongs\"; a rate takes bit, kbit, mbit, gbit or tbit (bits per second), e.g. 10mbit"
        );
        assert_eq!(parse_rate("0mbit").unwrap_err(), "a rate must be positive");
        assert_eq!(parse_rate("0.4bit").unwrap_err(), "a rate must be positive");
        assert_eq!(
            parse_rate("-1mbit").unwrap_err(),
            "a rate must not be negative"
        );
        assert_eq!(
            parse_rate("11tbit").unwrap_err(),
            "out of range: a rate can be at most 10tbit"
        );
        assert!(parse_rate("1e99gbit").is_err());
        assert!(parse_rate("nanmbit").is_err());
    }

    #[test]
    fn size_forms() {
        assert_eq!(parse_size("1500"), Ok(1500));
        assert_eq!(parse_size("1500b"), Ok(1500));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("64k"), Ok(65536));
        assert_eq!(parse_size("64KiB"), Ok(65536));
        assert_eq!(parse_size("64KB"), Ok(64_000), "decimal");
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("100M"), Ok(100 << 20));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("1TiB"), Ok(1 << 40));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert_eq!(parse_size("2e7"), Ok(20_000_000));
    }

    #[test]
    fn size_errors() {
        assert_eq!(
            parse_size("lots").unwrap_err(),
            "expected a size such as 65536, 64KiB, 1MiB or 1GB"
        );
        assert_eq!(
            parse_size("-1K").unwrap_err(),
            "a size must not be negative"
        );
        assert_eq!(
            parse_size("64kbit").unwrap_err(),
            "unknown unit \"kbit\"; a size takes B, K/KiB, M/MiB, G/GiB (binary) or KB, MB, GB (decimal)"
        );
        assert_eq!(
            parse_size_max("64KiB", 65535).unwrap_err(),
            "out of range: at most 65535 bytes"
        );
        assert!(parse_size("1e30").is_err());
        assert!(parse_size("inf").is_err());
    }

    #[test]
    fn probability_forms() {
        assert_eq!(parse_prob("1%"), Ok(0.01));
        assert_eq!(parse_prob("0.02"), Ok(0.02));
        assert!(parse_prob("120%").is_err());
        assert!(parse_prob("nan").is_err());
    }

    #[test]
    fn formats() {
        assert_eq!(format_time(Duration::from_millis(25)), "25ms");
        assert_eq!(format_time(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format_time(Duration::from_secs(120)), "2min");
        assert_eq!(format_time(Duration::from_secs(7200)), "2h");
        assert_eq!(format_time(Duration::from_nanos(1)), "1ns");
        assert_eq!(format_time(Duration::ZERO), "0s");
        assert_eq!(format_rate(10_000_000), "10mbit");
        assert_eq!(format_rate(1_500_000_000), "1.5gbit");
        assert_eq!(format_rate(9600), "9.6kbit");
        assert_eq!(format_size(65536), "64KiB");
        assert_eq!(format_size(64_000), "64KB");
        assert_eq!(format_size(1500), "1500B");
    }
}

/// Property tests: no text makes a parser panic; what the formatters write reads back as
/// the same value; a `-ms` flag's `Xms` is its bare `X`.
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Text made mostly of the characters the parsers look at.
    fn near_valid() -> impl Strategy<Value = String> {
        proptest::string::string_regex(
            "[-+]?[0-9]{0,25}(\\.[0-9]{0,25})?([eE][-+]?[0-9]{0,6})? ?(ns|us|µs|ms|s|min|m|h|bit|kbit|mbit|gbit|tbit|mbps|k|m|g|kib|kb|mib|b|%|x|/s)?|[-+0-9.eE%a-zµ/ ]{0,24}",
        )
        .unwrap()
    }

    /// A decimal number as people write it: digits, maybe a fraction, maybe an exponent.
    fn number_text() -> impl Strategy<Value = String> {
        proptest::string::string_regex("[0-9]{1,12}(\\.[0-9]{1,9})?(e-?[0-9])?").unwrap()
    }

    proptest! {
        #![proptest_config(ackclock_testkit::proptest_config(2000))]

        #[test]
        fn no_text_makes_a_parser_panic(s in prop_oneof![near_valid(), any::<String>()]) {
            for bare in [Bare::Is(TimeUnit::Ms), Bare::Is(TimeUnit::Us), Bare::Refused(TimeUnit::Ms), Bare::Refused(TimeUnit::S)] {
                let _ = parse_time(&s, bare);
            }
            let _ = parse_rate(&s);
            let _ = parse_size(&s);
            let _ = parse_size_max(&s, 65535);
            let _ = parse_prob(&s);
            let _ = parse_ms(&s);
            if let Ok(v) = parse_ms(&s) {
                prop_assert!(v.is_finite() && v >= 0.0);
            }
        }

        #[test]
        fn a_formatted_time_reads_back(ns in prop_oneof![any::<u64>(), 0u64..10_000_000_000, (0u64..10_000).prop_map(|s| s * 60_000_000_000)]) {
            let d = Duration::from_nanos(ns);
            let text = format_time(d);
            prop_assert_eq!(parse_time(&text, Bare::Refused(TimeUnit::Ms)), Ok(d), "{}", text);
            prop_assert_eq!(parse_time(&text, Bare::Is(TimeUnit::Ms)), Ok(d), "{}", text);
        }

        #[test]
        fn a_formatted_rate_reads_back(bps in prop_oneof![1u64..=MAX_RATE_BPS, (1u64..10_000).prop_map(|m| m * 1_000_000)]) {
            let text = format_rate(bps);
            prop_assert_eq!(parse_rate(&text), Ok(bps), "{}", text);
        }

        #[test]
        fn a_formatted_size_reads_back(bytes in prop_oneof![any::<u64>(), (0u64..1 << 20).prop_map(|k| k << 10), (0u64..1 << 20).prop_map(|k| k * 1000)]) {
            let text = format_size(bytes);
            prop_assert_eq!(parse_size(&text), Ok(bytes), "{}", text);
        }

        #[test]
        fn x_ms_on_a_ms_flag_is_bare_x(x in number_text()) {
            let bare = parse_time(&x, Bare::Is(TimeUnit::Ms));
            prop_assert_eq!(&parse_time(&format!("{x}ms"), Bare::Is(TimeUnit::Ms)), &bare);
            prop_assert_eq!(parse_ms(&format!("{x}ms")), parse_ms(&x));
            // And in the other units, the same time.
            if let Ok(d) = bare {
                prop_assert_eq!(parse_time(&format_time(d), Bare::Is(TimeUnit::Ms)), Ok(d));
            }
        }

        #[test]
        fn decimal_fractions_read_exactly(v in 0u32..1_000_000, frac in 0u32..1000) {
            let text = format!("{v}.{frac:03}s");
            let want = u64::from(v) * 1_000_000_000 + u64::from(frac) * 1_000_000;
            prop_assert_eq!(parse_time(&text, Bare::Refused(TimeUnit::S)), Ok(Duration::from_nanos(want)));
        }
    }
}
