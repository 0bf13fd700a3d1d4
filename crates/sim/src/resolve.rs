//! One validation path for every way of writing a scenario. The shortcuts (`[topology]`
//! dumbbell, chain, parking lot, and a dumbbell's `flows`) are first expanded into the
//! nodes, links and flows they stand for; then every node, link and flow, explicit or
//! generated, goes through the same checks. An error names the field as the user wrote
//! it (`topology.access.delay_ms`, `topology.flows.tcp`, `link[2].queue.limit_pkts`), and
//! [`crate::locate`] finds its line.
//!
//! `build` runs the same resolution, so a scenario made in code (the reproduction suite
//! edits parsed scenarios) is checked exactly as one read from a file.

use crate::limits::{self, Range};
use crate::scenario::{
    AppSpec, CpuSpec, CrossKindName, CrossSpec, FlowSpec, LinkParams, NodeKind, NodeSpec,
    PairFlows, Scenario, Topology,
};
use ackclock_gateway::ConfigError;
use ackclock_tcp::config::Overrides;
use ackclock_tcp::TcpConfig;
use core::net::Ipv4Addr;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

/// A scenario that cannot run: the field (a path into the file) and what is wrong with it.
#[derive(Clone, Debug, PartialEq)]
pub struct Invalid {
    /// The path of the field in the file (`link[2].queue.limit_pkts`).
    pub field: String,
    /// What is wrong with it, as a sentence for the user.
    pub message: String,
}

impl Invalid {
    /// The error `message` at `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Invalid {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "field `{}`: {}", self.field, self.message)
    }
}

/// A node, explicit or generated.
#[derive(Clone, Debug)]
pub struct NodeDef {
    /// Its name, unique among the nodes.
    pub name: String,
    /// Host or router.
    pub kind: NodeKind,
    /// The address given in the file; absent, one is handed out when the network is built.
    pub addr: Option<Ipv4Addr>,
    /// The host's processing-cost model, if it has one.
    pub cpu: Option<CpuSpec>,
    /// Capture every interface of this node.
    pub pcap: bool,
    /// Where it was written: `node[3]`, or the shortcut that generated it.
    pub field: String,
}

/// A link (both directions), explicit or generated.
#[derive(Clone, Debug)]
pub struct LinkDef {
    /// The node at one end (the `_ab` direction starts here).
    pub a: String,
    /// The node at the other end.
    pub b: String,
    /// Rate, delay, queues, impairments.
    pub params: LinkParams,
    /// `link[2]`, or `topology.access`, `topology.hop`, `topology.bottleneck`.
    pub field: String,
}

/// A TCP flow with both ends' configurations worked out.
#[derive(Clone, Debug)]
pub struct FlowDef {
    /// Its name: as given, `flow<i>` for explicit flow i, or `pair<i>`.
    pub name: String,
    /// The sending host (the client of a request-response or datagram application).
    pub from: String,
    /// The receiving host (the server).
    pub to: String,
    /// The destination port on `to`: as given, else 5001 + the flow's index among all flows.
    pub port: u16,
    /// When it starts, in seconds from the start of the run.
    pub start_s: f64,
    /// The TCP configuration of the sending end (`from`).
    pub sender: TcpConfig,
    /// The TCP configuration of the receiving end (`to`): the sender's, with the receiver's
    /// overrides.
    pub receiver: TcpConfig,
    /// What the application at its ends does.
    pub app: AppSpec,
    /// `flow[0]`, or `topology.flows` for a dumbbell's pair flows.
    pub field: String,
}

/// Everything a scenario describes, shortcuts expanded, every value checked.
#[derive(Clone, Debug, Default)]
pub struct Resolved {
    /// The nodes: explicit ones first, then those of the topology.
    pub nodes: Vec<NodeDef>,
    /// The links: explicit ones first, then those of the topology.
    pub links: Vec<LinkDef>,
    /// The flows: a dumbbell's pair flows first, then the explicit ones.
    pub flows: Vec<FlowDef>,
    /// Node name -> index in `nodes`.
    index: HashMap<String, usize>,
}

impl Resolved {
    /// The node named `name`, if there is one.
    pub fn node(&self, name: &str) -> Option<&NodeDef> {
        self.index_of(name).map(|i| &self.nodes[i])
    }

    /// The index in `nodes` of the node named `name`, if there is one.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }
}

fn range(field: impl Into<String>, r: Range, v: f64) -> Result<(), Invalid> {
    r.check(v).map_err(|m| Invalid::new(field, m))
}

/// A queue or impairment error of the gateway crate, at `prefix` (`link[0].queue`).
fn config_error(prefix: &str, e: ConfigError) -> Invalid {
    // "impairments.gilbert" -> ".gilbert": the table inside `impair`; a queue's component
    // is its kind, which is not part of the path.
    let inner = e.component.strip_prefix("impairments").unwrap_or("");
    Invalid::new(format!("{prefix}{inner}.{}", e.field), e.problem)
}

/// The closest of `candidates` to a misspelt `word` (by edit distance), if one is close
/// enough to be meant (at most 2 edits, or a third of the word's length), as text to append to a message: ` (did you mean "newreno"?)`; empty
/// when none is, or when `word` is itself a candidate.
pub fn suggestion<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let best = candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .min_by_key(|(d, _)| *d);
    match best {
        Some((d, c)) if d > 0 && d <= 2.max(word.len() / 3) => format!(" (did you mean \"{c}\"?)"),
        _ => String::new(),
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A preset with overrides for both ends, or the error at `field.tcp` /
/// `field.tcp_overrides.<key>`.
fn tcp_configs(
    field: &str,
    preset: &str,
    both: &Overrides,
    receiver_only: Option<&Overrides>,
) -> Result<(TcpConfig, TcpConfig), Invalid> {
    let Some(mut c) = TcpConfig::preset(preset) else {
        return Err(Invalid::new(
            format!("{field}.tcp"),
            format!(
                "unknown preset \"{preset}\"; expected one of {}{}",
                TcpConfig::PRESETS.join(", "),
                suggestion(preset, TcpConfig::PRESETS.iter().copied())
            ),
        ));
    };
    both.apply(&mut c)
        .map_err(|e| Invalid::new(format!("{field}.tcp_overrides.{}", e.field), e.message))?;
    let mut r = c.clone();
    if let Some(o) = receiver_only {
        o.apply(&mut r).map_err(|e| {
            Invalid::new(format!("{field}.receiver_overrides.{}", e.field), e.message)
        })?;
    }
    Ok((c, r))
}

fn check_app(field: &str, app: &AppSpec) -> Result<(), Invalid> {
    let f = |k: &str| format!("{field}.app.{k}");
    match app {
        AppSpec::Bulk {
            bytes,
            duration_s,
            chunk_bytes,
        } => {
            if bytes.is_some() && duration_s.is_some() {
                return Err(Invalid::new(
                    f("duration_s"),
                    "a bulk transfer ends after `bytes` or after `duration_s`: give one, not both",
                ));
            }
            if let Some(b) = bytes {
                range(f("bytes"), limits::BULK_BYTES, *b)?;
            }
            if let Some(d) = duration_s {
                range(f("duration_s"), limits::APP_DURATION_S, *d)?;
            }
            if let Some(c) = chunk_bytes {
                range(f("chunk_bytes"), limits::CHUNK_BYTES, *c as f64)?;
            }
        }
        AppSpec::RequestResponse {
            request_bytes,
            response_bytes,
            count,
            think_ms,
        } => {
            range(
                f("request_bytes"),
                limits::REQUEST_BYTES,
                *request_bytes as f64,
            )?;
            range(
                f("response_bytes"),
                limits::RESPONSE_BYTES,
                *response_bytes as f64,
            )?;
            range(f("count"), limits::REQUEST_COUNT, f64::from(*count))?;
            range(f("think_ms"), limits::THINK_MS, *think_ms)?;
        }
        AppSpec::Echo { bytes } => range(f("bytes"), limits::ECHO_BYTES, *bytes)?,
        AppSpec::Rpc(r) | AppSpec::Dns(r) => {
            let opt = |k: &str, lim: limits::Range, v: Option<f64>| match v {
                Some(v) => range(f(k), lim, v),
                None => Ok(()),
            };
            opt("request_bytes", limits::DATAGRAM_BYTES, r.request_bytes)?;
            opt("response_bytes", limits::DATAGRAM_BYTES, r.response_bytes)?;
            opt("outstanding", limits::OUTSTANDING, r.outstanding)?;
            opt("requests_per_s", limits::REQUESTS_PER_S, r.requests_per_s)?;
            opt("requests", limits::RPC_REQUESTS, r.requests)?;
            opt("duration_s", limits::APP_DURATION_S, r.duration_s)?;
            opt("timeout_ms", limits::TIMEOUT_MS, r.timeout_ms)?;
            opt(
                "max_transmissions",
                limits::MAX_TRANSMISSIONS,
                r.max_transmissions,
            )?;
            opt("service_ms", limits::SERVICE_MS, r.service_ms)?;
            opt("server_queue", limits::SERVER_QUEUE, r.server_queue)?;
            if r.timeout_ms.is_some() && r.timer == Some(crate::scenario::TimerName::Adaptive) {
                return Err(Invalid::new(
                    f("timeout_ms"),
                    "the adaptive timer computes its timeout: give `timeout_ms` with `timer = \"fixed\"` only",
                ));
            }
        }
        AppSpec::DatagramStream(st) => {
            let opt = |k: &str, lim: limits::Range, v: Option<f64>| match v {
                Some(v) => range(f(k), lim, v),
                None => Ok(()),
            };
            opt("packet_bytes", limits::DATAGRAM_BYTES, st.packet_bytes)?;
            opt("rate_bps", limits::RATE_BPS, st.rate_bps)?;
            opt("bytes", limits::STREAM_BYTES, st.bytes)?;
            opt("duration_s", limits::APP_DURATION_S, st.duration_s)?;
            let none = st.rate_control == Some(crate::scenario::RateControlName::None);
            if none && st.rate_bps.is_none() {
                return Err(Invalid::new(
                    f("rate_bps"),
                    "a stream without rate control sends at a fixed rate: give `rate_bps`",
                ));
            }
            if !none && st.rate_bps.is_some() {
                return Err(Invalid::new(
                    f("rate_bps"),
                    "`rate_bps` is the fixed rate of `rate_control = \"none\"`; TFRC and AIMD find their own",
                ));
            }
        }
    }
    Ok(())
}

fn check_link(field: &str, p: &LinkParams) -> Result<(), Invalid> {
    let f = |k: &str| format!("{field}.{k}");
    range(f("rate_bps"), limits::RATE_BPS, p.rate_bps)?;
    range(f("delay_ms"), limits::DELAY_MS, p.delay_ms)?;
    range(f("mtu_bytes"), limits::MTU_BYTES, p.mtu_bytes as f64)?;
    range(
        f("framing_bytes"),
        limits::FRAMING_BYTES,
        p.framing_bytes as f64,
    )?;
    range(
        f("min_wire_bytes"),
        limits::MIN_WIRE_BYTES,
        p.min_wire_bytes as f64,
    )?;
    for (key, q) in [
        ("queue", &p.queue),
        ("queue_ab", &p.queue_ab),
        ("queue_ba", &p.queue_ba),
    ] {
        if let Some(q) = q {
            q.validate().map_err(|e| config_error(&f(key), e))?;
        }
    }
    for (key, i) in [
        ("impair", &p.impair),
        ("impair_ab", &p.impair_ab),
        ("impair_ba", &p.impair_ba),
    ] {
        if let Some(i) = i {
            i.validate().map_err(|e| config_error(&f(key), e))?;
        }
    }
    Ok(())
}

fn check_cpu(field: &str, c: &CpuSpec) -> Result<(), Invalid> {
    for (k, v, r) in [
        ("rx_packet_us", c.rx_packet_us, limits::CPU_US),
        ("tx_packet_us", c.tx_packet_us, limits::CPU_US),
        ("write_call_us", c.write_call_us, limits::CPU_US),
        ("rx_byte_ns", c.rx_byte_ns, limits::CPU_NS),
        ("tx_byte_ns", c.tx_byte_ns, limits::CPU_NS),
        ("write_byte_ns", c.write_byte_ns, limits::CPU_NS),
    ] {
        range(format!("{field}.cpu.{k}"), r, v)?;
    }
    Ok(())
}

fn host(name: String, field: &str) -> NodeDef {
    NodeDef {
        name,
        kind: NodeKind::Host,
        addr: None,
        cpu: None,
        pcap: false,
        field: field.to_string(),
    }
}

fn router(name: String, field: &str) -> NodeDef {
    NodeDef {
        kind: NodeKind::Router,
        ..host(name, field)
    }
}

fn link(a: &str, b: &str, p: &LinkParams, field: &str) -> LinkDef {
    LinkDef {
        a: a.into(),
        b: b.into(),
        params: p.clone(),
        field: field.into(),
    }
}

/// Where the nodes a shortcut generates are written.
const T: &str = "topology";

/// The nodes, links and (for a dumbbell) flows a `[topology]` shortcut stands for.
fn expand_topology(t: &Topology, r: &mut Resolved) -> Result<(), Invalid> {
    match t {
        Topology::Dumbbell {
            pairs,
            access,
            bottleneck,
            flows,
        } => dumbbell(*pairs, access, bottleneck, flows.as_ref(), r),
        Topology::Chain {
            routers,
            access,
            hop,
            bottleneck_hop,
            bottleneck,
        } => chain(
            *routers,
            access,
            hop,
            *bottleneck_hop,
            bottleneck.as_ref(),
            r,
        ),
        Topology::ParkingLot { hops, access, hop } => parking_lot(*hops, access, hop, r),
    }
}

/// A dumbbell: routers `gw_left` and `gw_right` joined by the bottleneck, hosts `left{i}`
/// and `right{i}` on access links to them, and the pair flows if there are any.
fn dumbbell(
    pairs: usize,
    access: &LinkParams,
    bottleneck: &LinkParams,
    flows: Option<&PairFlows>,
    r: &mut Resolved,
) -> Result<(), Invalid> {
    range("topology.pairs", limits::GENERATED, pairs as f64)?;
    r.nodes.push(router("gw_left".into(), T));
    r.nodes.push(router("gw_right".into(), T));
    r.links.push(link(
        "gw_left",
        "gw_right",
        bottleneck,
        "topology.bottleneck",
    ));
    for i in 1..=pairs {
        r.nodes.push(host(format!("left{i}"), T));
        r.nodes.push(host(format!("right{i}"), T));
        r.links.push(link(
            &format!("left{i}"),
            "gw_left",
            access,
            "topology.access",
        ));
        r.links.push(link(
            "gw_right",
            &format!("right{i}"),
            access,
            "topology.access",
        ));
    }
    if let Some(pf) = flows {
        pair_flows(pf, pairs, r)?;
    }
    Ok(())
}

/// A chain: hosts `src` and `dst` on access links at its ends, routers `r1` to `r{routers}`
/// joined by `hop` links, one of which may be the `bottleneck` instead.
fn chain(
    routers: usize,
    access: &LinkParams,
    hop: &LinkParams,
    bottleneck_hop: Option<usize>,
    bottleneck: Option<&LinkParams>,
    r: &mut Resolved,
) -> Result<(), Invalid> {
    range("topology.routers", limits::GENERATED, routers as f64)?;
    check_chain_bottleneck(routers, bottleneck_hop, bottleneck)?;
    r.nodes.push(host("src".into(), T));
    r.nodes.push(host("dst".into(), T));
    for i in 1..=routers {
        r.nodes.push(router(format!("r{i}"), T));
    }
    r.links.push(link("src", "r1", access, "topology.access"));
    for i in 1..routers {
        let (p, field) = match (bottleneck_hop, bottleneck) {
            (Some(b), Some(bp)) if b == i - 1 => (bp, "topology.bottleneck"),
            _ => (hop, "topology.hop"),
        };
        r.links
            .push(link(&format!("r{i}"), &format!("r{}", i + 1), p, field));
    }
    r.links.push(link(
        &format!("r{routers}"),
        "dst",
        access,
        "topology.access",
    ));
    Ok(())
}

/// A chain's `bottleneck_hop` and `bottleneck` come together, and name one of its
/// router-to-router hops (there are `routers - 1`; `routers` is at least 1).
fn check_chain_bottleneck(
    routers: usize,
    bottleneck_hop: Option<usize>,
    bottleneck: Option<&LinkParams>,
) -> Result<(), Invalid> {
    let hops = routers - 1;
    match (bottleneck_hop, bottleneck) {
        (Some(_), None) => Err(Invalid::new(
            "topology.bottleneck_hop",
            "needs `bottleneck`, the link parameters of that hop",
        )),
        (None, Some(_)) => Err(Invalid::new(
            "topology.bottleneck",
            format!(
                "needs `bottleneck_hop`, the router-to-router hop it replaces (0 to {})",
                hops.saturating_sub(1)
            ),
        )),
        (Some(h), Some(_)) if h >= hops => Err(Invalid::new(
            "topology.bottleneck_hop",
            if hops == 0 {
                "a chain of 1 router has no router-to-router hop to replace".to_string()
            } else {
                format!(
                    "{h} is not a hop of this chain: {routers} routers have hops 0 to {}",
                    hops - 1
                )
            },
        )),
        _ => Ok(()),
    }
}

/// A parking lot: routers `r0` to `r{hops}` joined by `hop` links, hosts `long_src` and
/// `long_dst` at its ends, and across each hop i hosts `cross{i}_src` and `cross{i}_dst`.
fn parking_lot(
    hops: usize,
    access: &LinkParams,
    hop: &LinkParams,
    r: &mut Resolved,
) -> Result<(), Invalid> {
    range("topology.hops", limits::GENERATED, hops as f64)?;
    r.nodes.push(host("long_src".into(), T));
    r.nodes.push(host("long_dst".into(), T));
    for i in 0..=hops {
        r.nodes.push(router(format!("r{i}"), T));
    }
    r.links
        .push(link("long_src", "r0", access, "topology.access"));
    r.links.push(link(
        &format!("r{hops}"),
        "long_dst",
        access,
        "topology.access",
    ));
    for i in 0..hops {
        r.links.push(link(
            &format!("r{i}"),
            &format!("r{}", i + 1),
            hop,
            "topology.hop",
        ));
        r.nodes.push(host(format!("cross{i}_src"), T));
        r.nodes.push(host(format!("cross{i}_dst"), T));
        r.links.push(link(
            &format!("cross{i}_src"),
            &format!("r{i}"),
            access,
            "topology.access",
        ));
        r.links.push(link(
            &format!("r{}", i + 1),
            &format!("cross{i}_dst"),
            access,
            "topology.access",
        ));
    }
    Ok(())
}

/// A dumbbell's `flows`: one flow from each left host to its right partner.
fn pair_flows(pf: &PairFlows, pairs: usize, r: &mut Resolved) -> Result<(), Invalid> {
    const F: &str = "topology.flows";
    let (sender, receiver) = tcp_configs(F, &pf.tcp, &pf.tcp_overrides, None)?;
    check_app(F, &pf.app)?;
    range("topology.flows.start_s", limits::START_S, pf.start_s)?;
    range("topology.flows.stagger_s", limits::START_S, pf.stagger_s)?;
    let last = pf.start_s + pf.stagger_s * (pairs - 1) as f64;
    if !limits::START_S.contains(last) {
        return Err(Invalid::new(
            "topology.flows.stagger_s",
            format!(
                "the last of {pairs} flows would start at {} s: expected {}",
                limits::num(last),
                limits::START_S
            ),
        ));
    }
    for i in 1..=pairs {
        r.flows.push(FlowDef {
            name: format!("pair{i}"),
            from: format!("left{i}"),
            to: format!("right{i}"),
            port: 0,
            start_s: pf.start_s + pf.stagger_s * (i - 1) as f64,
            sender: sender.clone(),
            receiver: receiver.clone(),
            app: pf.app.clone(),
            field: F.into(),
        });
    }
    Ok(())
}

impl Scenario {
    /// Expands the shortcuts and checks every value: the one validation path (see the
    /// module doc). Errors name the field; [`Scenario::from_str_named`] adds file and line.
    pub fn resolve(&self) -> Result<Resolved, Invalid> {
        range("duration_s", limits::DURATION_S, self.duration_s)?;
        range("output.sample_ms", limits::SAMPLE_MS, self.output.sample_ms)?;
        let mut r = Resolved::default();
        // Order matters for reproducibility: addresses are handed out and ports numbered
        // in this order (explicit nodes and links first, a dumbbell's flows first).
        for (i, n) in self.node.iter().enumerate() {
            r.nodes.push(node_def(i, n)?);
        }
        for (i, l) in self.link.iter().enumerate() {
            r.links
                .push(link(&l.a, &l.b, &l.params(), &format!("link[{i}]")));
        }
        if let Some(t) = &self.topology {
            expand_topology(t, &mut r)?;
        }
        for (i, f) in self.flow.iter().enumerate() {
            r.flows.push(flow_def(i, f)?);
        }
        check_nodes(&mut r)?;
        check_links(&r)?;
        self.check_start_times(&r)?;
        let graph = Graph::new(&r);
        check_flow_paths_and_ports(&mut r, &graph)?;
        for (i, c) in self.cross.iter().enumerate() {
            check_cross(&r, &graph, &format!("cross[{i}]"), c)?;
        }
        if r.flows.is_empty() && self.cross.is_empty() {
            // An empty file, or one whose flows were lost to a typo in a table name, would
            // otherwise run and report nothing at all.
            return Err(Invalid::new(
                "flow",
                "nothing to simulate: the scenario has no [[flow]], no topology.flows and no [[cross]] traffic",
            ));
        }
        Ok(r)
    }

    /// A flow or source that starts when the run is over would never send: say so instead
    /// of reporting it idle. Flows first, then the cross-traffic sources.
    fn check_start_times(&self, r: &Resolved) -> Result<(), Invalid> {
        for f in &r.flows {
            if f.start_s >= self.duration_s {
                let field = if f.field == "topology.flows" && f.start_s > 0.0 {
                    if pair_start_is_staggered(self) {
                        "topology.flows.stagger_s".to_string()
                    } else {
                        "topology.flows.start_s".to_string()
                    }
                } else {
                    format!("{}.start_s", f.field)
                };
                return Err(Invalid::new(
                    field,
                    format!(
                        "{} would start at {} s, when the run is over (duration_s = {} s)",
                        f.name,
                        limits::num(f.start_s),
                        limits::num(self.duration_s)
                    ),
                ));
            }
        }
        for (i, c) in self.cross.iter().enumerate() {
            if c.start_s >= self.duration_s {
                return Err(Invalid::new(
                    format!("cross[{i}].start_s"),
                    format!(
                        "{} s is when the run is over (duration_s = {} s): the source would never send",
                        limits::num(c.start_s),
                        limits::num(self.duration_s)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Explicit node `i` (`node[i]`): its address parsed and its CPU model checked.
fn node_def(i: usize, n: &NodeSpec) -> Result<NodeDef, Invalid> {
    let field = format!("node[{i}]");
    let addr = match &n.addr {
        None => None,
        Some(a) => Some(a.parse::<Ipv4Addr>().map_err(|_| {
            Invalid::new(
                format!("{field}.addr"),
                format!("\"{a}\" is not an IPv4 address (e.g. \"198.18.0.7\")"),
            )
        })?),
    };
    if let Some(c) = &n.cpu {
        check_cpu(&field, c)?;
    }
    Ok(NodeDef {
        name: n.name.clone(),
        kind: n.kind,
        addr,
        cpu: n.cpu,
        pcap: n.pcap,
        field,
    })
}

/// Explicit flow `i` (`flow[i]`): both ends' TCP configurations, its application, name,
/// start and port checked. Port 0 stands for one not given.
fn flow_def(i: usize, f: &FlowSpec) -> Result<FlowDef, Invalid> {
    let field = format!("flow[{i}]");
    let (sender, receiver) = tcp_configs(
        &field,
        &f.tcp,
        &f.tcp_overrides,
        Some(&f.receiver_overrides),
    )?;
    check_app(&field, &f.app)?;
    if let Some(name) = &f.name {
        check_name(&format!("{field}.name"), name)?;
    }
    range(format!("{field}.start_s"), limits::START_S, f.start_s)?;
    if let Some(p) = f.port {
        range(format!("{field}.port"), limits::PORT, f64::from(p))?;
    }
    Ok(FlowDef {
        name: f.name.clone().unwrap_or_else(|| format!("flow{i}")),
        from: f.from.clone(),
        to: f.to.clone(),
        port: f.port.unwrap_or(0),
        start_s: f.start_s,
        sender,
        receiver,
        app: f.app.clone(),
        field,
    })
}

/// Every link, explicit or generated: its ends are known nodes, two different ones, and
/// its parameters are in range.
fn check_links(r: &Resolved) -> Result<(), Invalid> {
    for l in &r.links {
        for (end, name) in [("a", &l.a), ("b", &l.b)] {
            known(r, name, &format!("{}.{end}", l.field))?;
        }
        if l.a == l.b {
            return Err(Invalid::new(
                format!("{}.b", l.field),
                "a link needs two different nodes",
            ));
        }
        check_link(&l.field, &l.params)?;
    }
    Ok(())
}

/// Every flow, in order: its ends are two hosts joined by a path, and its port is free at
/// its receiver; a port not given becomes 5001 + the flow's index among all flows.
fn check_flow_paths_and_ports(r: &mut Resolved, graph: &Graph) -> Result<(), Invalid> {
    let mut ports: HashMap<(String, u16), usize> = HashMap::new();
    for fi in 0..r.flows.len() {
        let f = &r.flows[fi];
        let (from, to) = endpoints(r, &f.field, &f.from, &f.to, "flows")?;
        if !graph.connected(from, to) {
            return Err(no_path(&f.field, &f.from, &f.to));
        }
        // Ports: as given, else 5001 + the flow's index among all flows.
        let port = if f.port == 0 {
            u16::try_from(5001 + fi).map_err(|_| {
                Invalid::new(
                    format!("{}.port", f.field),
                    "too many flows for port numbers",
                )
            })?
        } else {
            f.port
        };
        if let Some(&other) = ports.get(&(f.to.clone(), port)) {
            return Err(Invalid::new(
                format!("{}.port", f.field),
                format!(
                    "port {port} on \"{}\" is already taken by {}; give one of them another `port`",
                    f.to, r.flows[other].field
                ),
            ));
        }
        ports.insert((f.to.clone(), port), fi);
        r.flows[fi].port = port;
    }
    Ok(())
}

fn pair_start_is_staggered(s: &Scenario) -> bool {
    matches!(&s.topology, Some(Topology::Dumbbell { flows: Some(pf), .. }) if pf.stagger_s > 0.0)
}

/// The longest node or flow name: it becomes part of file names (captures, per-flow CSV).
pub const MAX_NAME_LEN: usize = 64;

/// Node and flow names become parts of the names of files written under `--out`
/// (`<node>-<neighbour>.pcap`, `flow-<flow>.csv`), so they are held to a set that cannot
/// leave that directory or hide a file: ASCII letters, digits, `-`, `_` and `.`, not
/// starting with `.`, at most [`MAX_NAME_LEN`] bytes. A node named `../../x` once wrote its
/// capture outside `--out`.
fn check_name(field: &str, name: &str) -> Result<(), Invalid> {
    let why = if name.is_empty() {
        Some("is empty".to_string())
    } else if name.len() > MAX_NAME_LEN {
        Some(format!("is longer than {MAX_NAME_LEN} bytes"))
    } else if name.starts_with('.') {
        Some("starts with '.'".to_string())
    } else {
        name.chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
            .map(|c| format!("contains {c:?}"))
    };
    match why {
        None => Ok(()),
        Some(why) => Err(Invalid::new(
            field,
            format!(
                "{name:?} {why}; a name may hold ASCII letters, digits, '-', '_' and '.' \
                 (not first), at most {MAX_NAME_LEN} of them (it names output files)"
            ),
        )),
    }
}

fn check_nodes(r: &mut Resolved) -> Result<(), Invalid> {
    let mut seen: HashMap<&str, &str> = HashMap::new();
    let mut addrs: HashMap<Ipv4Addr, &str> = HashMap::new();
    for n in &r.nodes {
        check_name(&format!("{}.name", n.field), &n.name)?;
        if let Some(first) = seen.insert(&n.name, &n.field) {
            // Explicit nodes come first: a clash with a generated one names the explicit.
            let (field, why) = if n.field == "topology" {
                (
                    first.to_string(),
                    "is also a node the topology generates; give this one another name".to_string(),
                )
            } else {
                (
                    n.field.clone(),
                    format!("is defined more than once (first in {first})"),
                )
            };
            return Err(Invalid::new(
                format!("{field}.name"),
                format!("\"{}\" {why}", n.name),
            ));
        }
        if let Some(a) = n.addr {
            if let Some(other) = addrs.insert(a, &n.name) {
                return Err(Invalid::new(
                    format!("{}.addr", n.field),
                    format!("{a} is already the address of \"{other}\""),
                ));
            }
        }
    }
    r.index = r
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.clone(), i))
        .collect();
    Ok(())
}

fn known(r: &Resolved, name: &str, field: &str) -> Result<(), Invalid> {
    if r.node(name).is_some() {
        return Ok(());
    }
    let names: Vec<&str> = r.nodes.iter().map(|n| n.name.as_str()).collect();
    let list = if names.len() > 12 {
        format!("{}, ... ({} in all)", names[..12].join(", "), names.len())
    } else {
        names.join(", ")
    };
    Err(Invalid::new(
        field,
        format!(
            "no node named \"{name}\"{}; nodes are: {list}",
            suggestion(name, names.iter().copied())
        ),
    ))
}

/// Checks that `from` and `to` are two different hosts; returns their indices.
fn endpoints(
    r: &Resolved,
    field: &str,
    from: &str,
    to: &str,
    what: &str,
) -> Result<(usize, usize), Invalid> {
    known(r, from, &format!("{field}.from"))?;
    known(r, to, &format!("{field}.to"))?;
    for (end, name) in [("from", from), ("to", to)] {
        let n = r.node(name).expect("known");
        if n.kind != NodeKind::Host {
            return Err(Invalid::new(
                format!("{field}.{end}"),
                format!("\"{name}\" is a router; {what} start and end at hosts"),
            ));
        }
    }
    if from == to {
        return Err(Invalid::new(
            format!("{field}.to"),
            format!("\"{to}\" is also the sender; {what} need two different hosts"),
        ));
    }
    let idx = |n: &str| r.index_of(n).expect("known");
    Ok((idx(from), idx(to)))
}

fn no_path(field: &str, from: &str, to: &str) -> Invalid {
    Invalid::new(
        format!("{field}.to"),
        format!(
            "no path from \"{from}\" to \"{to}\": no chain of links joins them (hosts do not forward; only routers do)"
        ),
    )
}

fn check_cross(r: &Resolved, graph: &Graph, field: &str, c: &CrossSpec) -> Result<(), Invalid> {
    let (from, to) = endpoints(r, field, &c.from, &c.to, "cross-traffic sources")?;
    if !graph.connected(from, to) {
        return Err(no_path(field, &c.from, &c.to));
    }
    let f = |k: &str| format!("{field}.{k}");
    range(f("rate_bps"), limits::CROSS_RATE_BPS, c.rate_bps)?;
    range(
        f("packet_bytes"),
        limits::CROSS_PACKET_BYTES,
        c.packet_bytes as f64,
    )?;
    // The simulator's clock ticks in nanoseconds: a source that sends more than one packet
    // per tick would never let time advance.
    let max_rate = c.packet_bytes as f64 * 8.0 * 1e9;
    if c.rate_bps > max_rate {
        return Err(Invalid::new(
            f("rate_bps"),
            format!(
                "{} b/s of {}-byte packets is more than one packet per nanosecond (the simulator's clock tick): at most {} b/s",
                limits::num(c.rate_bps),
                c.packet_bytes,
                limits::num(max_rate)
            ),
        ));
    }
    range(f("start_s"), limits::START_S, c.start_s)?;
    if let Some(stop) = c.stop_s {
        range(f("stop_s"), limits::START_S, stop)?;
        if stop <= c.start_s {
            return Err(Invalid::new(
                f("stop_s"),
                format!(
                    "{} s is not after start_s = {} s",
                    limits::num(stop),
                    limits::num(c.start_s)
                ),
            ));
        }
    }
    let on_off = c.kind == CrossKindName::OnOff;
    for (k, v) in [("mean_on_ms", c.mean_on_ms), ("mean_off_ms", c.mean_off_ms)] {
        match (on_off, v) {
            (true, None) => {
                return Err(Invalid::new(
                    f(k),
                    "kind = \"on_off\" needs mean_on_ms and mean_off_ms",
                ))
            }
            (true, Some(v)) => range(f(k), limits::ON_OFF_MS, v)?,
            (false, Some(_)) => {
                return Err(Invalid::new(
                    f(k),
                    "applies to kind = \"on_off\" only; remove it or change the kind",
                ))
            }
            (false, None) => {}
        }
    }
    Ok(())
}

/// Which hosts can reach which, and over which links: packets cross routers, never hosts
/// (a host drops what is not addressed to it). Shortest paths by hop count are searched in
/// the graph of routers only, once per first router and cached, so a dumbbell of 10,000
/// pairs costs one search, not 10,000.
pub(crate) struct Graph {
    /// Per node: (neighbour, link index).
    adj: Vec<Vec<(usize, usize)>>,
    router: Vec<bool>,
    /// Per first router: the search from it.
    searched: std::cell::RefCell<HashMap<usize, Rc<Search>>>,
}

/// A breadth-first search over routers: per node, (hops, previous router, link to it).
type Search = Vec<(u32, usize, usize)>;

impl Graph {
    pub(crate) fn new(r: &Resolved) -> Graph {
        let mut adj = vec![Vec::new(); r.nodes.len()];
        for (li, l) in r.links.iter().enumerate() {
            if let (Some(a), Some(b)) = (r.index_of(&l.a), r.index_of(&l.b)) {
                adj[a].push((b, li));
                adj[b].push((a, li));
            }
        }
        Graph {
            adj,
            router: r.nodes.iter().map(|n| n.kind == NodeKind::Router).collect(),
            searched: Default::default(),
        }
    }

    fn search_from(&self, start: usize) -> Rc<Search> {
        if let Some(t) = self.searched.borrow().get(&start) {
            return t.clone();
        }
        let mut t = vec![(u32::MAX, usize::MAX, usize::MAX); self.adj.len()];
        t[start].0 = 0;
        let mut q = VecDeque::from([start]);
        while let Some(u) = q.pop_front() {
            for &(v, li) in &self.adj[u] {
                if self.router[v] && t[v].0 == u32::MAX {
                    t[v] = (t[u].0 + 1, u, li);
                    q.push_back(v);
                }
            }
        }
        let t = Rc::new(t);
        self.searched.borrow_mut().insert(start, t.clone());
        t
    }

    /// The links of a shortest path from host `from` to host `to`, if there is one.
    pub(crate) fn path(&self, from: usize, to: usize) -> Option<Vec<usize>> {
        if let Some(&(_, li)) = self.adj[from].iter().find(|(v, _)| *v == to) {
            return Some(vec![li]);
        }
        // (hops, first link, last router, last link, the search that found it)
        let mut best: Option<(u32, usize, usize, usize, Rc<Search>)> = None;
        for &(ra, first) in self.adj[from].iter().filter(|(v, _)| self.router[*v]) {
            let t = self.search_from(ra);
            for &(rb, last) in self.adj[to].iter().filter(|(v, _)| self.router[*v]) {
                let d = t[rb].0;
                if d != u32::MAX && best.as_ref().is_none_or(|b| d < b.0) {
                    best = Some((d, first, rb, last, t.clone()));
                }
            }
        }
        let (_, first, rb, last, t) = best?;
        let mut links = vec![last];
        let mut v = rb;
        while t[v].0 > 0 {
            links.push(t[v].2);
            v = t[v].1;
        }
        links.push(first);
        links.reverse();
        Some(links)
    }

    fn connected(&self, from: usize, to: usize) -> bool {
        self.path(from, to).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_for_near_misses_only() {
        let presets = TcpConfig::PRESETS.iter().copied();
        assert_eq!(
            suggestion("nwereno", presets.clone()),
            " (did you mean \"newreno\"?)"
        );
        assert_eq!(suggestion("bbr", presets.clone()), "");
        assert_eq!(suggestion("newreno", presets), "");
    }
}
