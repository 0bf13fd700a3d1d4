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
use ackclock_tcp::{HyStart, LossDetection, Pacing, RecoveryAlgorithm, WindowReduction};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// A problem in a scenario file, located. Displayed as `file:line: field `path`: message`
/// (line and field when known), the form docs/SCENARIOS.md shows.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    /// The file read, or the name given to [`Scenario::from_str_named`]; every message
    /// starts with it.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The field path, e.g. `link[2].b`.
    pub field: Option<String>,
    /// What is wrong, and what is accepted, as a sentence for the user.
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

/// A whole scenario file (docs/SCENARIOS.md), as parsed: [`Scenario::from_str_named`] and
/// [`Scenario::load`] read and check one, [`crate::build()`] turns it into a network. Unknown
/// fields are errors.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A name for reports: `summary.json`'s `scenario` (optional).
    #[serde(default)]
    pub name: Option<String>,
    /// Free text about the scenario (optional); nothing in the run or its outputs uses it.
    #[serde(default)]
    pub description: Option<String>,
    /// The run's seed (default 1): every random choice derives from it through
    /// [`component_seed`](crate::component_seed) (the hosts' ISN keys, queues, impairments,
    /// applications, cross traffic), so a scenario and a seed give the same run.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// How long the run lasts, in simulated seconds (default 60; above 0, at most 10^7).
    #[serde(default = "default_duration")]
    pub duration_s: f64,
    /// A generated topology (dumbbell, parking lot, chain) in addition to explicit nodes.
    #[serde(default)]
    pub topology: Option<Topology>,
    /// The `[[node]]` entries: hosts and routers (none by default). They come before the
    /// topology's nodes, so they get their addresses first.
    #[serde(default)]
    pub node: Vec<NodeSpec>,
    /// The `[[link]]` entries (none by default).
    #[serde(default)]
    pub link: Vec<LinkSpec>,
    /// The `[[flow]]` entries: TCP or datagram applications between two hosts (none by
    /// default; a scenario needs at least one flow, pair flow or cross-traffic source).
    #[serde(default)]
    pub flow: Vec<FlowSpec>,
    /// The `[[cross]]` entries: raw-IP cross-traffic sources (none by default).
    #[serde(default)]
    pub cross: Vec<CrossSpec>,
    /// What the run records (`[output]`; every field has a default).
    #[serde(default)]
    pub output: OutputSpec,
}

/// What a node is: a node's `kind`, `"host"` (the default) or `"router"`.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// Runs a TCP endpoint, a UDP stack and its flows' applications; it takes in the packets
    /// addressed to it and forwards none.
    #[default]
    Host,
    /// Forwards packets along static shortest paths (decrementing the TTL); runs no
    /// applications and cannot be a flow's end.
    Router,
}

/// A `[[node]]` entry.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// The node's name, unique among all nodes (the topology's included). It becomes part of
    /// capture file names, so it holds ASCII letters, digits, `-`, `_` and `.` only, does
    /// not start with `.` and is at most 64 bytes long.
    pub name: String,
    /// Host (the default) or router.
    #[serde(default)]
    pub kind: NodeKind,
    /// IPv4 address; assigned from 198.18.0.0/15 when absent.
    #[serde(default)]
    pub addr: Option<String>,
    /// Host processing costs (seed Jul 1988's budget), optional: without them, a host
    /// takes no time to process anything.
    #[serde(default)]
    pub cpu: Option<CpuSpec>,
    /// Capture every interface of this node, both directions, one pcap file per interface
    /// (`<node>-<neighbour>.pcap`), as ns-3's per-device pcaps do (default false; files are
    /// written only when the run has an output directory).
    #[serde(default)]
    pub pcap: bool,
}

/// A host's processing costs, a node's `cpu` table (seed 000, Jul 1988: the per-packet
/// budget of copy, checksum and fixed protocol and interrupt costs). The host's one CPU
/// serves every packet in and out, and with `write_call_us` or `write_byte_ns` every
/// application write, one job at a time ([`crate::net::CpuModel`]). Every field defaults
/// to 0; `*_us` fields accept 0 to 10^9 us, `*_ns` fields 0 to 10^9 ns.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CpuSpec {
    /// Fixed cost of taking in one packet (interrupt and protocol input), in microseconds.
    #[serde(default)]
    pub rx_packet_us: f64,
    /// Cost per IP byte of a packet taken in (copy and checksum), in nanoseconds.
    #[serde(default)]
    pub rx_byte_ns: f64,
    /// Fixed cost of sending one packet (protocol output and the driver), in microseconds.
    #[serde(default)]
    pub tx_packet_us: f64,
    /// Cost per IP byte of a packet sent, in nanoseconds.
    #[serde(default)]
    pub tx_byte_ns: f64,
    /// Fixed cost of an application write call, in microseconds; with `write_byte_ns`,
    /// writes are charged as CPU jobs (the copy runs before TCP sees the data). Both 0:
    /// writes are free.
    #[serde(default)]
    pub write_call_us: f64,
    /// Copy cost per byte written by the application (copyin), in nanoseconds.
    #[serde(default)]
    pub write_byte_ns: f64,
}

/// Link parameters shared by explicit links and generated ones: a `[[link]]` without its
/// ends, and the `access`, `hop` and `bottleneck` tables of a `[topology]`. Each direction
/// of a link is a port: a queue discipline, impairments, a serializer at `rate_bps` and a
/// propagation delay ([`ackclock_gateway::Link`]).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkParams {
    /// Serialization rate, in bits per second (required; 1 to 10^13), in each direction; a
    /// fraction of a bit per second is dropped.
    pub rate_bps: f64,
    /// One-way propagation delay, in milliseconds (default 0; at most 10^10).
    #[serde(default)]
    pub delay_ms: f64,
    /// Largest IP packet the link carries, in bytes (default 1500; 68 to 65535). Longer
    /// packets are dropped at the port and counted (`mtu_drops`): the simulator does not
    /// fragment.
    #[serde(default = "default_mtu")]
    pub mtu_bytes: usize,
    /// Per-packet bytes on the wire beyond the IP packet (38 for Ethernet with preamble and
    /// inter-frame gap: the seed's 1538-byte frames). Default 0.
    #[serde(default)]
    pub framing_bytes: usize,
    /// Smallest frame on the wire, framing included (84 byte-times for Ethernet: a 64-byte
    /// minimum frame plus preamble and gap; IEEE 802.3). Default 0.
    #[serde(default)]
    pub min_wire_bytes: usize,
    /// Queue discipline in both directions (drop-tail of 100 packets when absent).
    #[serde(default)]
    pub queue: Option<QdiscConfig>,
    /// Queue discipline of the a-to-b direction only, in place of `queue`.
    #[serde(default)]
    pub queue_ab: Option<QdiscConfig>,
    /// Queue discipline of the b-to-a direction only, in place of `queue`.
    #[serde(default)]
    pub queue_ba: Option<QdiscConfig>,
    /// Impairments in both directions (loss, bit errors, Gilbert-Elliott, reordering,
    /// duplication, scripted drops); none when absent.
    #[serde(default)]
    pub impair: Option<ImpairmentConfig>,
    /// Impairments of the a-to-b direction only, in place of `impair`.
    #[serde(default)]
    pub impair_ab: Option<ImpairmentConfig>,
    /// Impairments of the b-to-a direction only, in place of `impair`.
    #[serde(default)]
    pub impair_ba: Option<ImpairmentConfig>,
    /// Data and ACKs take turns on one wire (shared half-duplex medium). Default false:
    /// the two directions are independent.
    #[serde(default)]
    pub half_duplex: bool,
    /// Capture the interfaces at both ends of this link, each file with both directions
    /// (`<a>-<b>.pcap` is a's interface, `<b>-<a>.pcap` b's). Default false; files are
    /// written only when the run has an output directory.
    #[serde(default)]
    pub pcap: bool,
}

/// A `[[link]]` entry: two different nodes joined in both directions. Its other fields are
/// those of [`LinkParams`] ([`LinkSpec::params`]), with the same meanings and defaults.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// The node at one end; the `_ab` direction starts here.
    pub a: String,
    /// The node at the other end; the `_ba` direction starts here.
    pub b: String,
    /// Serialization rate, in bits per second (required; see [`LinkParams::rate_bps`]).
    pub rate_bps: f64,
    /// One-way propagation delay, in milliseconds (default 0).
    #[serde(default)]
    pub delay_ms: f64,
    /// Largest IP packet the link carries, in bytes (default 1500; see
    /// [`LinkParams::mtu_bytes`]).
    #[serde(default = "default_mtu")]
    pub mtu_bytes: usize,
    /// Per-packet bytes on the wire beyond the IP packet (default 0; Ethernet: 38).
    #[serde(default)]
    pub framing_bytes: usize,
    /// Smallest frame on the wire, framing included, in bytes (default 0; Ethernet: 84).
    #[serde(default)]
    pub min_wire_bytes: usize,
    /// Queue discipline in both directions (drop-tail of 100 packets when absent).
    #[serde(default)]
    pub queue: Option<QdiscConfig>,
    /// Queue discipline of the a-to-b direction only, in place of `queue`.
    #[serde(default)]
    pub queue_ab: Option<QdiscConfig>,
    /// Queue discipline of the b-to-a direction only, in place of `queue`.
    #[serde(default)]
    pub queue_ba: Option<QdiscConfig>,
    /// Impairments in both directions; none when absent.
    #[serde(default)]
    pub impair: Option<ImpairmentConfig>,
    /// Impairments of the a-to-b direction only, in place of `impair`.
    #[serde(default)]
    pub impair_ab: Option<ImpairmentConfig>,
    /// Impairments of the b-to-a direction only, in place of `impair`.
    #[serde(default)]
    pub impair_ba: Option<ImpairmentConfig>,
    /// Data and ACKs take turns on one wire (default false).
    #[serde(default)]
    pub half_duplex: bool,
    /// Capture the interfaces at both ends of this link (default false; see
    /// [`LinkParams::pcap`]).
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
    /// `kind = "dumbbell"`: routers `gw_left` and `gw_right` joined by `bottleneck`, hosts
    /// `left1..leftN` on access links to `gw_left` and `right1..rightN` on access links
    /// from `gw_right`.
    Dumbbell {
        /// Host pairs N (1 to 10,000).
        pairs: usize,
        /// The link of every host to its router (`left{i}`-`gw_left`, `gw_right`-`right{i}`).
        access: LinkParams,
        /// The link `gw_left`-`gw_right`, which every pair's traffic crosses.
        bottleneck: LinkParams,
        /// A flow from each left host to its right partner (`pair{i}` from `left{i}` to
        /// `right{i}`); none when absent.
        #[serde(default)]
        flows: Option<PairFlows>,
    },
    /// `kind = "chain"`: routers `r1..rN` in a line, host `src` linked to `r1` and host
    /// `dst` to `rN`.
    Chain {
        /// Routers N (1 to 10,000); they are joined by N - 1 hops.
        routers: usize,
        /// The links `src`-`r1` and `rN`-`dst`.
        access: LinkParams,
        /// The router-to-router links: hop i (0-based) joins `r{i+1}` and `r{i+2}`.
        hop: LinkParams,
        /// Index of a router-to-router hop (0-based) that uses `bottleneck` instead; given
        /// with `bottleneck` or not at all.
        #[serde(default)]
        bottleneck_hop: Option<usize>,
        /// The parameters of hop `bottleneck_hop`; given with it or not at all.
        #[serde(default)]
        bottleneck: Option<LinkParams>,
    },
    /// `kind = "parking_lot"`: routers `r0..rN` in a line, hosts `long_src` and `long_dst`
    /// at its ends, and across each hop i hosts `cross{i}_src` (on `r{i}`) and
    /// `cross{i}_dst` (on `r{i+1}`).
    ParkingLot {
        /// Router-to-router hops N (1 to 10,000), so N + 1 routers.
        hops: usize,
        /// Every host's link to its router.
        access: LinkParams,
        /// The router-to-router links `r{i}`-`r{i+1}`.
        hop: LinkParams,
    },
}

/// The flows a dumbbell creates for its pairs (`[topology.flows]`): one flow `pair{i}` from
/// `left{i}` to `right{i}` for every pair, all alike but for their start.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PairFlows {
    /// The TCP preset of every pair flow (default `newreno`; see [`FlowSpec::tcp`]).
    #[serde(default = "default_tcp")]
    pub tcp: String,
    /// Changes to the preset, at both ends of every pair flow (default none).
    #[serde(default)]
    pub tcp_overrides: Overrides,
    /// The application of every pair flow (required).
    pub app: AppSpec,
    /// When the first pair flow starts, in seconds from the start of the run (default 0).
    #[serde(default)]
    pub start_s: f64,
    /// Seconds between consecutive pair flows' starts (default 0): flow i (0-based, so
    /// `pair{i+1}`) starts at start_s + i * stagger_s.
    #[serde(default)]
    pub stagger_s: f64,
}

fn default_tcp() -> String {
    "newreno".into()
}

/// A `[[flow]]` entry: an application between two hosts joined by a path through routers,
/// over TCP or, for the datagram applications, over UDP.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// The flow's name in reports and output files (`flow-<name>.csv`); default `flow<i>`,
    /// i its index among the `[[flow]]` entries. The same characters as a node's name.
    #[serde(default)]
    pub name: Option<String>,
    /// The sending host: a bulk transfer's or a datagram stream's sender, the client of a
    /// request-response, echo, RPC or DNS application.
    pub from: String,
    /// The receiving host: the sink or server, listening on `port`.
    pub to: String,
    /// Destination port (5001 + flow index when absent, the index counted over all flows,
    /// a dumbbell's pair flows first); two flows to one host need different ports.
    #[serde(default)]
    pub port: Option<u16>,
    /// When the application starts, in seconds from the start of the run (default 0;
    /// before `duration_s`).
    #[serde(default)]
    pub start_s: f64,
    /// A preset: vanilla_4_3bsd, tahoe, reno, newreno, sack, cubic, modern, linux,
    /// linux_bbr (default newreno). Both ends start from it.
    #[serde(default = "default_tcp")]
    pub tcp: String,
    /// Overrides for both ends (default none; docs/SCENARIOS.md, "TCP overrides").
    #[serde(default)]
    pub tcp_overrides: Overrides,
    /// Overrides for the receiving end only (e.g. its receive buffer or ACK policy),
    /// applied after `tcp_overrides` (default none).
    #[serde(default)]
    pub receiver_overrides: Overrides,
    /// What the application does (required): bulk, request-response, echo, or a datagram
    /// application (rpc, dns, datagram_stream).
    pub app: AppSpec,
}

pub use ackclock_apps::spec::{AppSpec, RateControlName, RpcSpec, StreamSpec, TimerName};

/// A `[[cross]]` entry: a raw-IP cross-traffic source. It sends UDP-shaped datagrams to
/// the discard port (9) that no application reads: load on the links and queues of its
/// path, counted at the receiving host as non-TCP input.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CrossSpec {
    /// The sending host.
    pub from: String,
    /// The receiving host, joined to `from` by a path through routers.
    pub to: String,
    /// "poisson", "cbr" or "on_off".
    pub kind: CrossKindName,
    /// Sending rate, in bits per second of IP packets (1 to 10^13, and at most one packet
    /// per nanosecond: `packet_bytes * 8e9`); the mean rate of a Poisson source, the rate
    /// while on of an on/off source.
    pub rate_bps: f64,
    /// Mean on period of an "on_off" source, in milliseconds (exponentially distributed);
    /// required for "on_off", refused for the other kinds.
    #[serde(default)]
    pub mean_on_ms: Option<f64>,
    /// Mean off period of an "on_off" source, in milliseconds (exponentially distributed);
    /// required for "on_off", refused for the other kinds.
    #[serde(default)]
    pub mean_off_ms: Option<f64>,
    /// Size of every packet, in IP bytes, headers included (default 576; 28 to 65535).
    #[serde(default = "default_cross_size")]
    pub packet_bytes: usize,
    /// When the first packet is sent, in seconds from the start of the run (default 0;
    /// before `duration_s`).
    #[serde(default)]
    pub start_s: f64,
    /// When the source stops, in seconds, after `start_s`; absent: it sends until the run
    /// ends.
    #[serde(default)]
    pub stop_s: Option<f64>,
}

fn default_cross_size() -> usize {
    576
}

/// How a cross-traffic source spaces its packets: its `kind`.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CrossKindName {
    /// `"poisson"`: exponentially distributed gaps whose mean gives `rate_bps`.
    Poisson,
    /// `"cbr"`: constant bit rate, one packet every `packet_bytes * 8 / rate_bps` seconds.
    Cbr,
    /// `"on_off"`: exponentially distributed on and off periods (`mean_on_ms`,
    /// `mean_off_ms`), constant bit rate while on.
    OnOff,
}

/// What a run records and draws (`[output]`); the table and each of its fields are
/// optional.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Queue-length sampling period, in milliseconds (default 10; 0.001 to 10^10). The
    /// per-link throughput CSVs are cut from the same samples.
    #[serde(default = "default_sample")]
    pub sample_ms: f64,
    /// Record queue-length samples of every link direction (for the queue plots and CSVs;
    /// default true). Off, a long run of many links keeps no per-sample memory.
    #[serde(default = "yes")]
    pub queues: bool,
    /// Capture every interface of every host (as `ackclock sim --pcap`); routers' interfaces
    /// are captured when their node or link asks with `pcap = true`. Default false.
    #[serde(default)]
    pub pcap_all: bool,
    /// Record every sender TCP event (for time-sequence and cwnd plots, the per-flow CSVs
    /// and the RTT figures of the summary; default true).
    #[serde(default = "yes")]
    pub trace: bool,
    /// Draw SVG plots (default true; `ackclock sim` draws them, and its `--no-plots` turns
    /// them off too).
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
        "window_reduction" => (WindowReduction::NAMES, WindowReduction::ALIASES),
        "loss_detection" => (LossDetection::NAMES, LossDetection::ALIASES),
        "hystart" => (HyStart::NAMES, HyStart::ALIASES),
        "pacing" => (Pacing::NAMES, Pacing::ALIASES),
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
        check(
            "window_reduction",
            WindowReduction::NAMES,
            WindowReduction::ALIASES,
            |o| o.window_reduction,
        );
        check(
            "loss_detection",
            LossDetection::NAMES,
            LossDetection::ALIASES,
            |o| o.loss_detection,
        );
        check("hystart", HyStart::NAMES, HyStart::ALIASES, |o| o.hystart);
        check("pacing", Pacing::NAMES, Pacing::ALIASES, |o| o.pacing);
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
            "x.toml:15: field `flow[0].receiver_overrides.cc`: cc = \"cubbic\": expected one of none, fixed, aimd (alias reno), cubic, dctcp, dec_bit, bbr, bbr3 (did you mean \"cubic\"?)"
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
