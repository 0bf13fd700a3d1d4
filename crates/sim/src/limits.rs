//! The range of every numeric scenario field, in one table, so that a typo is an error and
//! not a silently different experiment, an allocation failure or a run without end.
//!
//! The ranges are wide on purpose: they exclude what cannot be meant (a negative delay, a
//! link of 0 b/s, a 10^300 b/s source, NaN) and what the simulator cannot represent (times
//! past its nanosecond clock, packets past IPv4's 65,535 bytes), not what is merely unusual.
//! What a valid scenario costs is bounded separately, by [`crate::cost`]. `docs/SCENARIOS.md`
//! prints this table; a test keeps the two equal.

use std::fmt;

/// A closed or half-open interval of accepted values, with its unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// The smallest value accepted (or, with `min_inclusive` false, the bound above which
    /// values are accepted).
    pub min: f64,
    /// `false`: the minimum itself is refused (a rate must be above 0).
    pub min_inclusive: bool,
    /// The largest value accepted; the maximum is always included.
    pub max: f64,
    /// The unit the message shows after the interval (`"ms"`, `"b/s"`); empty for counts.
    pub unit: &'static str,
}

impl Range {
    const fn closed(min: f64, max: f64, unit: &'static str) -> Range {
        Range {
            min,
            min_inclusive: true,
            max,
            unit,
        }
    }
    const fn above(min: f64, max: f64, unit: &'static str) -> Range {
        Range {
            min,
            min_inclusive: false,
            max,
            unit,
        }
    }

    /// Whether `v` is in the interval; NaN never is.
    pub fn contains(&self, v: f64) -> bool {
        // NaN fails both comparisons.
        let low = if self.min_inclusive {
            v >= self.min
        } else {
            v > self.min
        };
        low && v <= self.max
    }

    /// `Ok` when `v` is in range, else the message for the scenario error.
    pub fn check(&self, v: f64) -> Result<(), String> {
        if self.contains(v) {
            Ok(())
        } else {
            Err(format!("{} is out of range: expected {self}", num(v)))
        }
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let open = if self.min_inclusive { '[' } else { '(' };
        write!(f, "{open}{}, {}]", num(self.min), num(self.max))?;
        if !self.unit.is_empty() {
            write!(f, " {}", self.unit)?;
        }
        Ok(())
    }
}

/// A number as a user would write it: integers without a fraction, in scientific notation
/// when that is shorter (1e13, but 4294967296).
pub fn num(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else if v == v.trunc() && v.abs() < 1e17 {
        let int = format!("{v:.0}");
        let sci = format!("{v:e}");
        if int.len() > 7 && sci.len() < int.len() {
            sci
        } else {
            int
        }
    } else if v.abs() >= 1e17 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Simulated time runs on a u64 nanosecond clock (584 years); a run, a start time or a
/// delay of more than about 115 days is not an experiment anyone means.
const MAX_SECONDS: f64 = 1e7;
const MAX_MS: f64 = MAX_SECONDS * 1e3;
/// 10 Tb/s: above any link built, far below where packet times round to zero.
const MAX_RATE: f64 = 1e13;
/// A socket buffer or an application write: the largest window RFC 7323 can advertise.
const GIB: f64 = (1u64 << 30) as f64;

// Scenario-wide.
/// `duration_s`: (0, 10^7] s.
pub const DURATION_S: Range = Range::above(0.0, MAX_SECONDS, "s");
/// `output.sample_ms`: [0.001, 10^10] ms.
pub const SAMPLE_MS: Range = Range::closed(0.001, MAX_MS, "ms");

// Links (explicit `[[link]]` entries and the shortcuts' `access`, `hop`, `bottleneck`).
/// A link's `rate_bps` (and a datagram stream's fixed `rate_bps`): [1, 10^13] b/s.
pub const RATE_BPS: Range = Range::closed(1.0, MAX_RATE, "b/s");
/// A link's `delay_ms`: [0, 10^10] ms.
pub const DELAY_MS: Range = Range::closed(0.0, MAX_MS, "ms");
/// A link's `mtu_bytes`: [68, 65535] bytes (68 is the least MTU IPv4 allows, RFC 791).
pub const MTU_BYTES: Range = Range::closed(68.0, 65535.0, "bytes");
/// A link's `framing_bytes`: [0, 65535] bytes.
pub const FRAMING_BYTES: Range = Range::closed(0.0, 65535.0, "bytes");
/// A link's `min_wire_bytes`: [0, 65535] bytes.
pub const MIN_WIRE_BYTES: Range = Range::closed(0.0, 65535.0, "bytes");

// Generated topologies.
/// A topology's `pairs` (dumbbell), `routers` (chain) and `hops` (parking lot): [1, 10000].
pub const GENERATED: Range = Range::closed(1.0, 10_000.0, "");

// Flows and applications.
/// Start and stop times: a flow's `start_s`, a dumbbell's `flows.start_s` and
/// `flows.stagger_s` (and the last pair flow's start), a cross source's `start_s` and
/// `stop_s`: [0, 10^7] s.
pub const START_S: Range = Range::closed(0.0, MAX_SECONDS, "s");
/// A flow's `port`: [1, 65535].
pub const PORT: Range = Range::closed(1.0, 65535.0, "");
/// A bulk application's `bytes`: [1, 10^15] bytes.
pub const BULK_BYTES: Range = Range::closed(1.0, 1e15, "bytes");
/// The `duration_s` of a bulk, RPC, DNS or datagram-stream application: (0, 10^7] s.
pub const APP_DURATION_S: Range = Range::above(0.0, MAX_SECONDS, "s");
/// A bulk application's `chunk_bytes` (bytes per write call): [1, 2^30] bytes.
pub const CHUNK_BYTES: Range = Range::closed(1.0, GIB, "bytes");
/// A request-response application's `request_bytes`: [1, 2^30] bytes.
pub const REQUEST_BYTES: Range = Range::closed(1.0, GIB, "bytes");
/// A request-response application's `response_bytes`: [0, 2^30] bytes (a response may be
/// empty).
pub const RESPONSE_BYTES: Range = Range::closed(0.0, GIB, "bytes");
/// A request-response application's `count` of transactions: [1, 10^9].
pub const REQUEST_COUNT: Range = Range::closed(1.0, 1e9, "");
/// A request-response application's `think_ms`: [0, 10^10] ms.
pub const THINK_MS: Range = Range::closed(0.0, MAX_MS, "ms");
/// An echo application's `bytes`: [1, 10^12] bytes.
pub const ECHO_BYTES: Range = Range::closed(1.0, 1e12, "bytes");
/// A request or response must hold the 20-byte message header and fit an unfragmented
/// datagram (RFC 791: 65535 - 20 - 8). RPC and DNS `request_bytes` and `response_bytes`,
/// a datagram stream's `packet_bytes`: [20, 65507] bytes.
pub const DATAGRAM_BYTES: Range = Range::closed(20.0, 65507.0, "bytes");
/// RPC and DNS `outstanding` requests: [1, 10^6].
pub const OUTSTANDING: Range = Range::closed(1.0, 1e6, "");
/// RPC and DNS `requests_per_s` (the Poisson arrival rate): (0, 10^9] per second.
pub const REQUESTS_PER_S: Range = Range::above(0.0, 1e9, "/s");
/// RPC and DNS `requests` (how many to issue): [1, 10^12].
pub const RPC_REQUESTS: Range = Range::closed(1.0, 1e12, "");
/// RPC and DNS `timeout_ms` (the fixed timer's): (0, 10^10] ms.
pub const TIMEOUT_MS: Range = Range::above(0.0, MAX_MS, "ms");
/// RPC and DNS `max_transmissions` of one request: [1, 255].
pub const MAX_TRANSMISSIONS: Range = Range::closed(1.0, 255.0, "");
/// RPC and DNS `service_ms` (the server's time per request): [0, 10^10] ms.
pub const SERVICE_MS: Range = Range::closed(0.0, MAX_MS, "ms");
/// RPC and DNS `server_queue` (requests the server holds): [1, 10^6] requests.
pub const SERVER_QUEUE: Range = Range::closed(1.0, 1e6, "requests");
/// A datagram stream's `bytes`: [1, 10^15] bytes.
pub const STREAM_BYTES: Range = Range::closed(1.0, 1e15, "bytes");

// Cross traffic.
/// A cross-traffic source's `rate_bps`: [1, 10^13] b/s (and at most one packet per
/// nanosecond, which `resolve` checks apart).
pub const CROSS_RATE_BPS: Range = Range::closed(1.0, MAX_RATE, "b/s");
/// A cross-traffic source's `packet_bytes`: [28, 65535] bytes (at least the IP and UDP
/// headers).
pub const CROSS_PACKET_BYTES: Range = Range::closed(28.0, 65535.0, "bytes");
/// An on/off source's `mean_on_ms` and `mean_off_ms`: (0, 10^10] ms.
pub const ON_OFF_MS: Range = Range::above(0.0, MAX_MS, "ms");

// Host CPU costs.
/// A node's `cpu` fields in microseconds (`rx_packet_us`, `tx_packet_us`,
/// `write_call_us`): [0, 10^9] us.
pub const CPU_US: Range = Range::closed(0.0, 1e9, "us");
/// A node's `cpu` fields in nanoseconds (`rx_byte_ns`, `tx_byte_ns`, `write_byte_ns`):
/// [0, 10^9] ns.
pub const CPU_NS: Range = Range::closed(0.0, 1e9, "ns");

/// Every range, by the field names it applies to, for the documentation and its test.
pub const TABLE: &[(&str, Range)] = &[
    ("duration_s", DURATION_S),
    ("output.sample_ms", SAMPLE_MS),
    ("link rate_bps", RATE_BPS),
    ("link delay_ms", DELAY_MS),
    ("link mtu_bytes", MTU_BYTES),
    ("link framing_bytes", FRAMING_BYTES),
    ("link min_wire_bytes", MIN_WIRE_BYTES),
    ("topology pairs, routers, hops", GENERATED),
    ("start_s, stagger_s, stop_s", START_S),
    ("flow port", PORT),
    ("bulk app bytes", BULK_BYTES),
    ("bulk app duration_s", APP_DURATION_S),
    ("bulk app chunk_bytes", CHUNK_BYTES),
    ("request_response app request_bytes", REQUEST_BYTES),
    ("request_response app response_bytes", RESPONSE_BYTES),
    ("request_response app count", REQUEST_COUNT),
    ("request_response app think_ms", THINK_MS),
    ("echo app bytes", ECHO_BYTES),
    (
        "rpc/dns request_bytes, response_bytes; datagram_stream packet_bytes",
        DATAGRAM_BYTES,
    ),
    ("rpc/dns outstanding", OUTSTANDING),
    ("rpc/dns requests_per_s", REQUESTS_PER_S),
    ("rpc/dns requests", RPC_REQUESTS),
    ("rpc/dns timeout_ms", TIMEOUT_MS),
    ("rpc/dns max_transmissions", MAX_TRANSMISSIONS),
    ("rpc/dns service_ms", SERVICE_MS),
    ("rpc/dns server_queue", SERVER_QUEUE),
    ("datagram_stream bytes", STREAM_BYTES),
    ("rpc/dns/datagram_stream duration_s", APP_DURATION_S),
    ("datagram_stream rate_bps", RATE_BPS),
    ("cross rate_bps", CROSS_RATE_BPS),
    ("cross packet_bytes", CROSS_PACKET_BYTES),
    ("cross mean_on_ms, mean_off_ms", ON_OFF_MS),
    ("node cpu *_us", CPU_US),
    ("node cpu *_ns", CPU_NS),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_refuse_nan_infinities_and_their_bounds() {
        assert!(RATE_BPS.contains(1.0) && RATE_BPS.contains(1e13));
        assert!(!RATE_BPS.contains(0.0) && !RATE_BPS.contains(1.1e13));
        assert!(!DURATION_S.contains(0.0) && DURATION_S.contains(1e-9));
        for r in TABLE.iter().map(|(_, r)| r) {
            assert!(!r.contains(f64::NAN) && !r.contains(f64::INFINITY));
            assert!(!r.contains(f64::NEG_INFINITY) && !r.contains(-1e-300));
        }
    }

    #[test]
    fn messages_show_the_value_and_the_range() {
        assert_eq!(
            DELAY_MS.check(-25.0).unwrap_err(),
            "-25 is out of range: expected [0, 1e10] ms"
        );
        assert_eq!(
            RATE_BPS.check(0.0).unwrap_err(),
            "0 is out of range: expected [1, 1e13] b/s"
        );
        assert_eq!(
            CROSS_RATE_BPS.check(f64::INFINITY).unwrap_err(),
            "inf is out of range: expected [1, 1e13] b/s"
        );
        assert_eq!(num(0.5), "0.5");
        assert_eq!(num(1538.0), "1538");
    }
}
