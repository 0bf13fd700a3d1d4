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

use ackclock_gateway::{ImpairmentConfig, QdiscConfig};
use ackclock_tcp::config::Overrides;
use ackclock_tcp::TcpConfig;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use toml::Spanned;

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
    /// Published claims this scenario reproduces (read by `ackclock repro`; the simulator
    /// itself ignores them).
    #[serde(default)]
    pub claim: Vec<ClaimSpec>,
}

/// A claim from a seed or paper: what is measured, the published number, how close ours must
/// be, and where it comes from.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    /// Short identifier, unique within the experiment.
    pub id: String,
    /// The claim in words.
    pub claim: String,
    /// The metric ackclock computes.
    pub metric: String,
    /// The published number, as published.
    pub published: String,
    /// The acceptance band, in words (the code applies it).
    pub tolerance: String,
    /// Seed file and date, or paper and figure.
    pub source: String,
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
    pub name: Spanned<String>,
    #[serde(default)]
    pub kind: NodeKind,
    /// IPv4 address; assigned from 198.18.0.0/15 when absent.
    #[serde(default)]
    pub addr: Option<Spanned<String>>,
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
    pub a: Spanned<String>,
    pub b: Spanned<String>,
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

fn default_tcp_spanned() -> Spanned<String> {
    Spanned::new(0..0, default_tcp())
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    #[serde(default)]
    pub name: Option<String>,
    pub from: Spanned<String>,
    pub to: Spanned<String>,
    /// Destination port (5001 + flow index when absent).
    #[serde(default)]
    pub port: Option<u16>,
    #[serde(default)]
    pub start_s: f64,
    /// A preset: vanilla_4_3bsd, tahoe, reno, newreno, sack, cubic, modern.
    #[serde(default = "default_tcp_spanned")]
    pub tcp: Spanned<String>,
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
    pub from: Spanned<String>,
    pub to: Spanned<String>,
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

/// Where `key = ...` is written in the `[[...]]` table that holds `anchor` (the span of
/// another of its values), for errors about fields that carry no span of their own; the
/// anchor itself when the key is not found on a line of its own.
fn key_in_table(text: &str, anchor: std::ops::Range<usize>, key: &str) -> std::ops::Range<usize> {
    let at = anchor.start.min(text.len());
    let start = text[..at].rfind("[[").unwrap_or(0);
    let end = text[at..].find("\n[[").map_or(text.len(), |e| at + e);
    let mut off = start;
    for line in text[start..end].split_inclusive('\n') {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix(key) {
            if rest.trim_start().starts_with('=') {
                let k = off + (line.len() - t.len());
                return k..k + key.len();
            }
        }
        off += line.len();
    }
    anchor
}

/// Most pairs, routers or hops a topology builder generates.
pub const MAX_GENERATED: usize = 10_000;

/// Line (1-based) of a byte offset in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

impl Scenario {
    /// Parses a scenario from text; `file` is only used in error messages.
    pub fn from_str_named(text: &str, file: &Path) -> Result<Self, ScenarioError> {
        let s: Scenario = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|sp| line_of(text, sp.start));
            ScenarioError {
                file: file.to_path_buf(),
                line,
                field: None,
                message: e.message().trim().to_string(),
            }
        })?;
        s.validate(text, file)?;
        Ok(s)
    }

    /// Reads and parses a scenario file.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: path.to_path_buf(),
            line: None,
            field: None,
            message: format!("cannot read: {e}"),
        })?;
        Self::from_str_named(&text, path)
    }

    /// Checks what serde cannot: durations, references to nodes, preset names.
    fn validate(&self, text: &str, file: &Path) -> Result<(), ScenarioError> {
        let err =
            |span: Option<std::ops::Range<usize>>, field: String, message: String| ScenarioError {
                file: file.to_path_buf(),
                line: span.map(|s| line_of(text, s.start)),
                field: Some(field),
                message,
            };
        // Generated nodes are allocated up front and numbered in 198.18.0.0/15: bound them so
        // a typo is an error, not an allocation failure.
        let (what, n) = match &self.topology {
            Some(Topology::Dumbbell { pairs, .. }) => ("pairs", *pairs),
            Some(Topology::Chain { routers, .. }) => ("routers", *routers),
            Some(Topology::ParkingLot { hops, .. }) => ("hops", *hops),
            None => ("", 0),
        };
        if n > MAX_GENERATED {
            return Err(err(
                None,
                format!("topology.{what}"),
                format!("{n} is more than {MAX_GENERATED}"),
            ));
        }
        if !(self.duration_s > 0.0 && self.duration_s.is_finite()) {
            return Err(err(
                None,
                "duration_s".into(),
                format!("{} is not a positive number of seconds", self.duration_s),
            ));
        }
        let names = self.node_names();
        for (i, n) in self.node.iter().enumerate() {
            let dups = names.iter().filter(|x| **x == *n.name.get_ref()).count();
            if dups > 1 {
                return Err(err(
                    Some(n.name.span()),
                    format!("node[{i}].name"),
                    format!("\"{}\" is defined more than once", n.name.get_ref()),
                ));
            }
            if let Some(a) = &n.addr {
                if a.get_ref().parse::<core::net::Ipv4Addr>().is_err() {
                    return Err(err(
                        Some(a.span()),
                        format!("node[{i}].addr"),
                        format!(
                            "\"{}\" is not an IPv4 address (e.g. \"198.18.0.7\")",
                            a.get_ref()
                        ),
                    ));
                }
            }
        }
        let known = |s: &Spanned<String>, field: String| -> Result<(), ScenarioError> {
            if names.iter().any(|n| n == s.get_ref()) {
                Ok(())
            } else {
                Err(err(
                    Some(s.span()),
                    field,
                    format!(
                        "no node named \"{}\"; nodes are: {}",
                        s.get_ref(),
                        names.join(", ")
                    ),
                ))
            }
        };
        for (i, l) in self.link.iter().enumerate() {
            known(&l.a, format!("link[{i}].a"))?;
            known(&l.b, format!("link[{i}].b"))?;
            if l.a.get_ref() == l.b.get_ref() {
                return Err(err(
                    Some(l.b.span()),
                    format!("link[{i}].b"),
                    "a link needs two different nodes".into(),
                ));
            }
            check_link(&l.params()).map_err(|m| err(Some(l.a.span()), format!("link[{i}]"), m))?;
        }
        for (i, f) in self.flow.iter().enumerate() {
            known(&f.from, format!("flow[{i}].from"))?;
            known(&f.to, format!("flow[{i}].to"))?;
            if TcpConfig::preset(f.tcp.get_ref()).is_none() {
                return Err(err(
                    Some(f.tcp.span()),
                    format!("flow[{i}].tcp"),
                    format!(
                        "unknown preset \"{}\"; expected one of {}",
                        f.tcp.get_ref(),
                        TcpConfig::PRESETS.join(", ")
                    ),
                ));
            }
            let mut c = TcpConfig::preset(f.tcp.get_ref()).expect("checked");
            f.tcp_overrides.apply(&mut c).map_err(|m| {
                err(
                    Some(key_in_table(text, f.from.span(), "tcp_overrides")),
                    format!("flow[{i}].tcp_overrides"),
                    m.to_string(),
                )
            })?;
            f.receiver_overrides.apply(&mut c).map_err(|m| {
                err(
                    Some(key_in_table(text, f.from.span(), "receiver_overrides")),
                    format!("flow[{i}].receiver_overrides"),
                    m.to_string(),
                )
            })?;
            if f.start_s < 0.0 {
                return Err(err(
                    Some(f.from.span()),
                    format!("flow[{i}].start_s"),
                    "must not be negative".into(),
                ));
            }
        }
        for (i, c) in self.cross.iter().enumerate() {
            known(&c.from, format!("cross[{i}].from"))?;
            known(&c.to, format!("cross[{i}].to"))?;
            if c.kind == CrossKindName::OnOff && (c.mean_on_ms.is_none() || c.mean_off_ms.is_none())
            {
                return Err(err(
                    Some(c.from.span()),
                    format!("cross[{i}]"),
                    "kind = \"on_off\" needs mean_on_ms and mean_off_ms".into(),
                ));
            }
            if c.rate_bps.is_nan() || c.rate_bps <= 0.0 {
                return Err(err(
                    Some(c.from.span()),
                    format!("cross[{i}].rate_bps"),
                    format!("{} is not a positive rate", c.rate_bps),
                ));
            }
            if c.packet_bytes < 28 || c.packet_bytes > 65535 {
                return Err(err(
                    Some(c.from.span()),
                    format!("cross[{i}].packet_bytes"),
                    format!("{} is outside 28..=65535", c.packet_bytes),
                ));
            }
        }
        if let Some(Topology::Dumbbell { pairs, .. }) = &self.topology {
            if *pairs == 0 {
                return Err(err(
                    None,
                    "topology.pairs".into(),
                    "must be at least 1".into(),
                ));
            }
        }
        Ok(())
    }

    /// Names of every node, generated ones included.
    pub fn node_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.node.iter().map(|n| n.name.get_ref().clone()).collect();
        match &self.topology {
            Some(Topology::Dumbbell { pairs, .. }) => {
                v.push("gw_left".into());
                v.push("gw_right".into());
                for i in 1..=*pairs {
                    v.push(format!("left{i}"));
                    v.push(format!("right{i}"));
                }
            }
            Some(Topology::Chain { routers, .. }) => {
                v.push("src".into());
                v.push("dst".into());
                for i in 1..=*routers {
                    v.push(format!("r{i}"));
                }
            }
            Some(Topology::ParkingLot { hops, .. }) => {
                v.push("long_src".into());
                v.push("long_dst".into());
                for i in 0..=*hops {
                    v.push(format!("r{i}"));
                }
                for i in 0..*hops {
                    v.push(format!("cross{i}_src"));
                    v.push(format!("cross{i}_dst"));
                }
            }
            None => {}
        }
        v
    }
}

fn check_link(p: &LinkParams) -> Result<(), String> {
    if !(p.rate_bps > 0.0 && p.rate_bps.is_finite()) {
        return Err(format!(
            "rate_bps = {} must be a positive number of bits per second",
            p.rate_bps
        ));
    }
    if p.delay_ms < 0.0 || !p.delay_ms.is_finite() {
        return Err(format!(
            "delay_ms = {} must be a non-negative number of milliseconds",
            p.delay_ms
        ));
    }
    if p.mtu_bytes < 68 {
        return Err(format!(
            "mtu_bytes = {} is below IPv4's minimum of 68",
            p.mtu_bytes
        ));
    }
    Ok(())
}
