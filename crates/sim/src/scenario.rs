//! Scenario files (TOML): topology, links, gateways, flows, cross traffic, duration, seed
//! and outputs. Errors name the file, the line and the field, and say what was expected.
//!
//! ```toml
//! name = "dumbbell"
//! seed = 1
//! duration_s = 30
//!
//! [[node]]
//! name = "h1"            # kind = "host" by default; routers: kind = "router"
//! [[node]]
//! name = "r1"
//! kind = "router"
//!
//! [[link]]
//! a = "h1"
//! b = "r1"
//! rate_bps = 10e6
//! delay_ms = 1
//! queue = { kind = "drop_tail", limit_pkts = 50 }
//!
//! [[flow]]
//! from = "h1"
//! to = "h2"
//! tcp = "reno"                     # a preset; fields below override it
//! tcp_overrides = { mss = 512 }
//! app = { kind = "bulk", bytes = 1e6 }
//! ```

use crate::cost::Budget;
use crate::locate::{line_of, line_of_field};
use crate::resolve::Invalid;
use ackclock_gateway::{ImpairmentConfig, QdiscConfig};
use ackclock_tcp::cc::SsthreshBase;
use ackclock_tcp::config::{CongestionName, EcnEcho, Overrides, RttEstimatorName};
use ackclock_tcp::RecoveryAlgorithm;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// A problem in a scenario file, located.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The field path, e.g. `link[2].b`.
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

fn default_duration() -> f64 {
    60.0
}
fn default_seed() -> u64 {
    1
}
fn default_mtu() -> usize {
    1500
}

/// The whole file.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default = "default_seed")]
    pub seed: u64,
    #[serde(default = "default_duration")]
    pub duration_s: f64,
    /// A generated topology (dumbbell, parking lot, chain) in addition to explicit nodes.
    #[serde(default)]
    pub topology: Option<Topology>,
    #[serde(default)]
    pub node: Vec<NodeSpec>,
    #[serde(default)]
    pub link: Vec<LinkSpec>,
    #[serde(default)]
    pub flow: Vec<FlowSpec>,
    #[serde(default)]
    pub cross: Vec<CrossSpec>,
    #[serde(default)]
    pub output: OutputSpec,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    #[default]
    Host,
    Router,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    #[serde(default)]
    pub kind: NodeKind,
    /// IPv4 address; assigned from 198.18.0.0/15 when absent.
    #[serde(default)]
    pub addr: Option<String>,
    /// Host processing costs (seed Jul 1988's budget), optional.
    #[serde(default)]
    pub cpu: Option<CpuSpec>,
    /// Capture every interface of this node, both directions, one pcap file per interface
    /// (`<node>-<neighbour>.pcap`), as ns-3's per-device pcaps do.
    #[serde(default)]
    pub pcap: bool,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CpuSpec {
    #[serde(default)]
    pub rx_packet_us: f64,
    #[serde(default)]
    pub rx_byte_ns: f64,
    #[serde(default)]
    pub tx_packet_us: f64,
    #[serde(default)]
    pub tx_byte_ns: f64,
    /// Fixed cost of an application write call; with `write_byte_ns`, writes are charged
    /// as CPU jobs (the copy runs before TCP sees the data).
    #[serde(default)]
    pub write_call_us: f64,
    /// Copy cost per byte written by the application (copyin).
    #[serde(default)]
    pub write_byte_ns: f64,
}

/// Link parameters shared by explicit links and generated ones.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkParams {
    pub rate_bps: f64,
    #[serde(default)]
    pub delay_ms: f64,
    #[serde(default = "default_mtu")]
    pub mtu_bytes: usize,
    /// Per-packet bytes on the wire beyond the IP packet (38 for Ethernet with preamble and
    /// inter-frame gap: the seed's 1538-byte frames).
    #[serde(default)]
    pub framing_bytes: usize,
    /// Smallest frame on the wire, framing included (84 byte-times for Ethernet: a 64-byte
    /// minimum frame plus preamble and gap; IEEE 802.3).
    #[serde(default)]
    pub min_wire_bytes: usize,
    /// Queue discipline in both directions (drop-tail of 100 packets when absent).
    #[serde(default)]
    pub queue: Option<QdiscConfig>,
    #[serde(default)]
    pub queue_ab: Option<QdiscConfig>,
    #[serde(default)]
    pub queue_ba: Option<QdiscConfig>,
    #[serde(default)]
    pub impair: Option<ImpairmentConfig>,
    #[serde(default)]
    pub impair_ab: Option<ImpairmentConfig>,
    #[serde(default)]
    pub impair_ba: Option<ImpairmentConfig>,
    /// Data and ACKs take turns on one wire (shared half-duplex medium).
    #[serde(default)]
    pub half_duplex: bool,
    /// Capture the interfaces at both ends of this link, each file with both directions
    /// (`<a>-<b>.pcap` is a's interface, `<b>-<a>.pcap` b's).
    #[serde(default)]
    pub pcap: bool,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub a: String,
    pub b: String,
    pub rate_bps: f64,
    #[serde(default)]
    pub delay_ms: f64,
    #[serde(default = "default_mtu")]
    pub mtu_bytes: usize,
    #[serde(default)]
    pub framing_bytes: usize,
    #[serde(default)]
    pub min_wire_bytes: usize,
    #[serde(default)]
    pub queue: Option<QdiscConfig>,
    #[serde(default)]
    pub queue_ab: Option<QdiscConfig>,
    #[serde(default)]
    pub queue_ba: Option<QdiscConfig>,
    #[serde(default)]
    pub impair: Option<ImpairmentConfig>,
    #[serde(default)]
    pub impair_ab: Option<ImpairmentConfig>,
    #[serde(default)]
    pub impair_ba: Option<ImpairmentConfig>,
    #[serde(default)]
    pub half_duplex: bool,
    #[serde(default)]
    pub pcap: bool,
}

impl LinkParams {
    /// The serializer's configuration ([`ackclock_gateway::Link`] models every link).
    pub fn link_config(&self) -> ackclock_gateway::LinkConfig {
        ackclock_gateway::LinkConfig {
            rate_bps: self.rate_bps as u64,
            delay_ms: self.delay_ms,
            mtu_bytes: self.mtu_bytes,
            framing_overhead_bytes: self.framing_bytes,
            min_wire_bytes: self.min_wire_bytes,
        }
    }
}

impl LinkSpec {
    /// The parameters, as generated links carry them. (Not `#[serde(flatten)]`: serde cannot
    /// combine flatten with deny_unknown_fields, and a misspelt field must be an error.)
    pub fn params(&self) -> LinkParams {
        LinkParams {
            rate_bps: self.rate_bps,
            delay_ms: self.delay_ms,
            mtu_bytes: self.mtu_bytes,
            framing_bytes: self.framing_bytes,
            min_wire_bytes: self.min_wire_bytes,
            queue: self.queue.clone(),
            queue_ab: self.queue_ab.clone(),
            queue_ba: self.queue_ba.clone(),
            impair: self.impair.clone(),
            impair_ab: self.impair_ab.clone(),
            impair_ba: self.impair_ba.clone(),
            half_duplex: self.half_duplex,
            pcap: self.pcap,
        }
    }
}

/// Generated topologies. Node names: dumbbell `left1..leftN`, `right1..rightN`, routers
/// `gw_left`, `gw_right`; chain `src`, `r1..rN`, `dst`; parking lot `r0..rN` with hosts
/// `long_src`, `long_dst` (end to end) and `cross{i}_src`, `cross{i}_dst` across hop i.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[allow(clippy::large_enum_variant)] // parsed once per run
pub enum Topology {
    Dumbbell {
        pairs: usize,
        access: LinkParams,
        bottleneck: LinkParams,
        /// A flow from each left host to its right partner.
        #[serde(default)]
        flows: Option<PairFlows>,
    },
    Chain {
        routers: usize,
        access: LinkParams,
        /// The router-to-router links.
        hop: LinkParams,
        /// Index of a router-to-router hop (0-based) that uses `bottleneck` instead.
        #[serde(default)]
        bottleneck_hop: Option<usize>,
        #[serde(default)]
        bottleneck: Option<LinkParams>,
    },
    ParkingLot {
        hops: usize,
        access: LinkParams,
        hop: LinkParams,
    },
}

/// The flows a dumbbell creates for its pairs.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PairFlows {
    #[serde(default = "default_tcp")]
    pub tcp: String,
    #[serde(default)]
    pub tcp_overrides: Overrides,
    pub app: AppSpec,
    #[serde(default)]
    pub start_s: f64,
    /// Flow i starts at start_s + i * stagger_s.
    #[serde(default)]
    pub stagger_s: f64,
}

fn default_tcp() -> String {
    "newreno".into()
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    #[serde(default)]
    pub name: Option<String>,
    pub from: String,
    pub to: String,
    /// Destination port (5001 + flow index when absent).
    #[serde(default)]
    pub port: Option<u16>,
    #[serde(default)]
    pub start_s: f64,
    /// A preset: vanilla_4_3bsd, tahoe, reno, newreno, sack, cubic, modern.
    #[serde(default = "default_tcp")]
    pub tcp: String,
    /// Overrides for both ends.
    #[serde(default)]
    pub tcp_overrides: Overrides,
    /// Overrides for the receiving end only (e.g. its receive buffer or ACK policy).
    #[serde(default)]
    pub receiver_overrides: Overrides,
    pub app: AppSpec,
}

pub use ackclock_apps::spec::{AppSpec, RateControlName, RpcSpec, StreamSpec, TimerName};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CrossSpec {
    pub from: String,
    pub to: String,
    /// "poisson", "cbr" or "on_off".
    pub kind: CrossKindName,
    pub rate_bps: f64,
    /// Mean on and off periods of "on_off" sources (exponentially distributed).
    #[serde(default)]
    pub mean_on_ms: Option<f64>,
    #[serde(default)]
    pub mean_off_ms: Option<f64>,
    #[serde(default = "default_cross_size")]
    pub packet_bytes: usize,
    #[serde(default)]
    pub start_s: f64,
    #[serde(default)]
    pub stop_s: Option<f64>,
}

fn default_cross_size() -> usize {
    576
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CrossKindName {
    Poisson,
    Cbr,
    OnOff,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Queue-length sampling period.
    #[serde(default = "default_sample")]
    pub sample_ms: f64,
    /// Record queue-length samples of every link direction (for the queue plots and CSVs).
    /// Off, a long run of many links keeps no per-sample memory.
    #[serde(default = "yes")]
    pub queues: bool,
    /// Capture every interface of every host (as `ackclock sim --pcap`); routers' interfaces
    /// are captured when their node or link asks with `pcap = true`.
    #[serde(default)]
    pub pcap_all: bool,
    /// Record every sender TCP event (for time-sequence and cwnd plots).
    #[serde(default = "yes")]
    pub trace: bool,
    /// Draw SVG plots.
    #[serde(default = "yes")]
    pub plots: bool,
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec {
            sample_ms: default_sample(),
            queues: true,
            pcap_all: false,
            trace: true,
            plots: true,
        }
    }
}

fn default_sample() -> f64 {
    10.0
}
fn yes() -> bool {
    true
}

impl Scenario {
    /// Parses a scenario from text and checks it ([`Scenario::resolve`]); `file` is only
    /// used in error messages, which carry the file, the line and the field.
    pub fn from_str_named(text: &str, file: &Path) -> Result<Self, ScenarioError> {
        Self::from_str_within(text, file, &Budget::unlimited())
    }

    /// As [`from_str_named`](Self::from_str_named), and refuses a scenario whose predicted
    /// memory or event count ([`Scenario::predict_cost`]) is beyond `budget`.
    pub fn from_str_within(
        text: &str,
        file: &Path,
        budget: &Budget,
    ) -> Result<Self, ScenarioError> {
        let s: Scenario = toml::from_str(text).map_err(|e| {
            let mut span = e.span();
            if let (Some(within), Some(word)) = (&span, unknown_variant(e.message())) {
                if key_before(text, within.start).is_none() {
                    span = span_of_name(text, within, word).or(span);
                }
            }
            let at = span.as_ref().map(|sp| sp.start);
            // A value's error names its field by path, as validation does.
            let field = at.and_then(|a| key_before(text, a).map(|key| field_path(text, a, key)));
            let name_message = field.as_deref().zip(span).and_then(|(field, sp)| {
                override_name_message(field, text.get(sp).unwrap_or_default())
            });
            ScenarioError {
                file: file.to_path_buf(),
                line: at.map(|a| line_of(text, a)),
                field,
                message: name_message.unwrap_or_else(|| plain_message(e.message())),
            }
        })?;
        let located = |e: Invalid| ScenarioError {
            file: file.to_path_buf(),
            line: line_of_field(text, &e.field),
            field: Some(e.field),
            message: e.message,
        };
        let r = s.resolve().map_err(located)?;
        if *budget != Budget::unlimited() {
            s.predict_cost(&r).check(budget).map_err(located)?;
        }
        Ok(s)
    }

    /// Reads and parses a scenario file.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        Self::load_within(path, &Budget::unlimited())
    }

    /// Reads and parses a scenario file, within `budget`.
    pub fn load_within(path: &Path, budget: &Budget) -> Result<Self, ScenarioError> {
        let bytes = std::fs::read(path).map_err(|e| ScenarioError {
            file: path.to_path_buf(),
            line: None,
            field: None,
            message: format!("cannot read: {}", io_reason(&e)),
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes());
            ScenarioError {
                file: path.to_path_buf(),
                line: Some(line_of(&text, at)),
                field: None,
                message: format!(
                    "not UTF-8 text (byte {at} is not valid UTF-8); scenario files are TOML"
                ),
            }
        })?;
        Self::from_str_within(&text, path, budget)
    }
}

/// The key a value at `offset` is assigned to (`delay_ms` in `delay_ms = -5`), for
/// parse errors whose span is the value.
fn key_before(text: &str, offset: usize) -> Option<String> {
    let before = &text[..offset.min(text.len())];
    let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    let lhs = line.trim_end().strip_suffix('=')?.trim_end();
    let key: String = lhs
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (!key.is_empty()).then_some(key)
}

/// Every value written in `text`, tables and arrays included: its path as validation names
/// fields (`flow[0].tcp_overrides.recovery`), its span, and its text when it is a string.
/// Empty when the text does not parse.
fn spanned_values(text: &str) -> Vec<(String, Range<usize>, Option<String>)> {
    use toml::de::{DeTable, DeValue};
    use toml::Spanned;
    type Found = Vec<(String, Range<usize>, Option<String>)>;
    fn table(t: &DeTable<'_>, prefix: &str, out: &mut Found) {
        for (k, v) in t.iter() {
            let path = if prefix.is_empty() {
                k.get_ref().to_string()
            } else {
                format!("{prefix}.{}", k.get_ref())
            };
            value(v, path, out);
        }
    }
    fn value(v: &Spanned<DeValue<'_>>, path: String, out: &mut Found) {
        match v.get_ref() {
            DeValue::Table(t) => table(t, &path, out),
            DeValue::Array(a) => {
                for (i, e) in a.into_iter().enumerate() {
                    value(e, format!("{path}[{i}]"), out);
                }
            }
            _ => {}
        }
        let string = match v.get_ref() {
            DeValue::String(s) => Some(s.to_string()),
            _ => None,
        };
        out.push((path, v.span(), string));
    }
    let mut out = Vec::new();
    if let Ok(doc) = toml::de::DeTable::parse(text) {
        table(doc.get_ref(), "", &mut out);
    }
    out
}

/// The path of the innermost value at `offset`, whose key is `key`; `key` alone when the
/// text does not tell more.
fn field_path(text: &str, offset: usize, key: String) -> String {
    let innermost = spanned_values(text)
        .into_iter()
        .filter(|(_, span, _)| span.contains(&offset))
        .min_by_key(|(_, span, _)| span.len());
    match innermost {
        Some((path, _, _))
            if path
                .rsplit('.')
                .next()
                .is_some_and(|last| last == key || last.starts_with(&format!("{key}["))) =>
        {
            path
        }
        _ => key,
    }
}

/// Serde reports a bad name inside an internally tagged table (`[topology]`, whose
/// `flows.tcp_overrides` may hold one) at the table's header, `at`: the span of the one
/// string value inside that table that is `word`, if there is exactly one.
fn span_of_name(text: &str, at: &Range<usize>, word: &str) -> Option<Range<usize>> {
    let values = spanned_values(text);
    let (table, _, _) = values.iter().find(|(_, span, _)| span == at)?;
    let inside = |path: &str| {
        path.strip_prefix(table.as_str())
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
    };
    let mut found = values
        .iter()
        .filter(|(path, _, string)| string.as_deref() == Some(word) && inside(path));
    let (_, span, _) = found.next()?;
    found.next().is_none().then(|| span.clone())
}

/// A field of `tcp_overrides` or `receiver_overrides` that takes a name (`recovery`, `cc`,
/// `rtt_estimator`, `ssthresh_base`) and was given something else, `written` as in the
/// file: the engine's wording, `recovery = "fast": expected one of timeout_only, tahoe,
/// reno, newreno, sack`, with a did-you-mean for a near miss. `None` for any other field.
fn override_name_message(path: &str, written: &str) -> Option<String> {
    let (table, field) = path.rsplit_once('.')?;
    if !(table.ends_with("tcp_overrides") || table.ends_with("receiver_overrides")) {
        return None;
    }
    let (names, aliases) = match field {
        "rtt_estimator" => (RttEstimatorName::NAMES, RttEstimatorName::ALIASES),
        "recovery" => (RecoveryAlgorithm::NAMES, RecoveryAlgorithm::ALIASES),
        "cc" => (CongestionName::NAMES, CongestionName::ALIASES),
        "ssthresh_base" => (SsthreshBase::NAMES, SsthreshBase::ALIASES),
        "ecn_echo" => (EcnEcho::NAMES, EcnEcho::ALIASES),
        _ => return None,
    };
    let listed: Vec<String> = names
        .iter()
        .map(|name| {
            let also: Vec<&str> = aliases
                .iter()
                .filter(|(_, to)| to == name)
                .map(|(alias, _)| *alias)
                .collect();
            if also.is_empty() {
                name.to_string()
            } else {
                format!("{name} (alias {})", also.join(", "))
            }
        })
        .collect();
    let word = written
        .strip_prefix('"')
        .and_then(|w| w.strip_suffix('"'))
        .or_else(|| written.strip_prefix('\'')?.strip_suffix('\''))
        .unwrap_or(written);
    let candidates = names.iter().copied().chain(aliases.iter().map(|(a, _)| *a));
    Some(format!(
        "{field} = {written}: expected one of {}{}",
        listed.join(", "),
        crate::resolve::suggestion(word, candidates)
    ))
}

/// The name in serde's "unknown variant `name`, expected ..." message.
fn unknown_variant(message: &str) -> Option<&str> {
    message.strip_prefix("unknown variant `")?.split('`').next()
}

/// A TOML or serde message in the words of the file, not of Rust: "expected a number", not
/// "expected f64"; with a suggestion when an unknown name is close to a known one.
fn plain_message(m: &str) -> String {
    let mut m = m.trim().to_string();
    for (rust, plain) in [
        ("expected f64", "expected a number"),
        ("expected usize", "expected a whole number"),
        ("expected u64", "expected a whole number"),
        ("expected u32", "expected a whole number below 2^32"),
        ("expected u16", "expected a whole number from 0 to 65535"),
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected a boolean", "expected true or false"),
        ("floating point `", "the number `"),
    ] {
        m = m.replace(rust, plain);
    }
    for what in ["unknown field `", "unknown variant `"] {
        if let Some(rest) = m.strip_prefix(what) {
            let word = rest.split('`').next().unwrap_or("");
            let known: Vec<&str> = rest
                .split_once("expected")
                .map(|(_, list)| list.split('`').skip(1).step_by(2).collect())
                .unwrap_or_default();
            m.push_str(&crate::resolve::suggestion(word, known));
        }
    }
    m
}

/// An I/O error as a reason, without Rust's "(os error N)" suffix.
pub fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name and alias the engine's `FromStr` takes reads the same from a scenario, and
    /// a value writes back as its name.
    #[test]
    fn typed_overrides_read_and_write_the_engines_names() {
        fn check<T>(
            field: &str,
            names: &[&str],
            aliases: &[(&str, &str)],
            get: fn(&Overrides) -> Option<T>,
        ) where
            T: std::str::FromStr + PartialEq + fmt::Debug + fmt::Display,
            T::Err: fmt::Debug,
        {
            let spellings = names.iter().copied().chain(aliases.iter().map(|(a, _)| *a));
            for name in spellings {
                let o: Overrides = toml::from_str(&format!("{field} = \"{name}\"")).unwrap();
                let v = get(&o).unwrap();
                assert_eq!(v, name.parse::<T>().unwrap(), "{field} = {name}");
                let back = toml::to_string(&o).unwrap();
                assert_eq!(back.trim(), format!("{field} = \"{v}\""));
            }
        }
        check(
            "rtt_estimator",
            RttEstimatorName::NAMES,
            RttEstimatorName::ALIASES,
            |o| o.rtt_estimator,
        );
        check(
            "recovery",
            RecoveryAlgorithm::NAMES,
            RecoveryAlgorithm::ALIASES,
            |o| o.recovery,
        );
        check("cc", CongestionName::NAMES, CongestionName::ALIASES, |o| {
            o.cc
        });
        check(
            "ssthresh_base",
            SsthreshBase::NAMES,
            SsthreshBase::ALIASES,
            |o| o.ssthresh_base,
        );
        check("ecn_echo", EcnEcho::NAMES, EcnEcho::ALIASES, |o| o.ecn_echo);
        let o: Overrides = toml::from_str("cc = \"reno\"").unwrap();
        assert_eq!(o.cc, Some(CongestionName::Aimd));
    }

    #[test]
    fn a_wrong_name_is_located_and_listed_with_a_suggestion() {
        let base = "[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[link]]\na = \"a\"\nb = \"b\"\nrate_bps = 1e6\n[[flow]]\nfrom = \"a\"\nto = \"b\"\napp = { kind = \"bulk\" }\n";
        let err = |extra: &str| {
            Scenario::from_str_named(&format!("{base}{extra}"), Path::new("x.toml"))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err("[flow.receiver_overrides]\nack_every = 1\ncc = \"cubbic\"\n"),
            "x.toml:15: field `flow[0].receiver_overrides.cc`: cc = \"cubbic\": expected one of none, fixed, aimd (alias reno), cubic, dctcp, dec_bit (did you mean \"cubic\"?)"
        );
        assert_eq!(
            err("tcp_overrides = { rtt_estimator = 'Jacobson' }\n"),
            "x.toml:13: field `flow[0].tcp_overrides.rtt_estimator`: rtt_estimator = 'Jacobson': expected one of jacobson, rfc793 (did you mean \"jacobson\"?)"
        );
        assert_eq!(
            err("tcp_overrides = { ssthresh_base = 2 }\n"),
            "x.toml:13: field `flow[0].tcp_overrides.ssthresh_base`: ssthresh_base = 2: expected one of window, flight"
        );
        let flows = "[topology]\nkind = \"dumbbell\"\npairs = 1\naccess = { rate_bps = 1e6 }\nbottleneck = { rate_bps = 1e6 }\nflows = { app = { kind = \"bulk\" }, tcp_overrides = { recovery = \"fast\" } }\n";
        assert_eq!(
            Scenario::from_str_named(flows, Path::new("y.toml"))
                .unwrap_err()
                .to_string(),
            "y.toml:6: field `topology.flows.tcp_overrides.recovery`: recovery = \"fast\": expected one of timeout_only, tahoe, reno, newreno, sack"
        );
    }
}
