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
use ackclock_tcp::config::Overrides;
use serde::{Deserialize, Serialize};
use std::fmt;
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
    /// minimum frame plus preamble and gap; REFERENCES S-f).
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
    /// Capture both directions to pcap files.
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

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppSpec {
    /// chargen to discard: `bytes`, or for `duration_s`, or until the run ends.
    Bulk {
        #[serde(default)]
        bytes: Option<f64>,
        #[serde(default)]
        duration_s: Option<f64>,
        /// Bytes handed to TCP per write call.
        #[serde(default)]
        chunk_bytes: Option<usize>,
    },
    /// `count` transactions of `request_bytes` up and `response_bytes` down.
    RequestResponse {
        request_bytes: usize,
        response_bytes: usize,
        #[serde(default = "one")]
        count: u32,
        #[serde(default)]
        think_ms: f64,
    },
    /// Sends `bytes` to an echo server and reads them back.
    Echo { bytes: f64 },
}

fn one() -> u32 {
    1
}

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
    /// Write a pcap per link direction for every link (links can also ask with pcap = true).
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
            let at = e.span().map(|sp| sp.start);
            ScenarioError {
                file: file.to_path_buf(),
                line: at.map(|a| line_of(text, a)),
                field: at.and_then(|a| key_before(text, a)),
                message: plain_message(e.message()),
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
