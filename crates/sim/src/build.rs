//! Turns a [`Scenario`] into a [`Network`] ready to run, and runs it.

use crate::net::{CpuModel, CrossKind, CrossSource, Network, NodeId};
use crate::resolve::{FlowDef, LinkDef, Resolved};
use crate::results::{FlowInfo, RunResult};
use crate::scenario::{CpuSpec, CrossKindName, CrossSpec, NodeKind, Scenario};
use ackclock_apps::spec::FlowPlace;
use ackclock_gateway::{QdiscConfig, DEFAULT_DROP_TAIL};
use ackclock_tcp::{Endpoint, EndpointConfig};
use ackclock_wire::pcap::PcapWriter;
use ackclock_wire::{Duration, Instant};
use core::net::{Ipv4Addr, SocketAddrV4};
use rand::SeedableRng;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Derives an independent seed for one component from the run seed and a label, so that
/// adding a flow or a link never changes another component's random draws.
pub fn component_seed(seed: u64, label: &str) -> u64 {
    // FNV-1a over the label, mixed with the seed by SplitMix64.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut z = seed ^ h;
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn cpu_model(c: &CpuSpec) -> CpuModel {
    CpuModel {
        rx_per_packet: Duration::from_secs_f64(c.rx_packet_us / 1e6),
        rx_per_byte_ns: c.rx_byte_ns,
        tx_per_packet: Duration::from_secs_f64(c.tx_packet_us / 1e6),
        tx_per_byte_ns: c.tx_byte_ns,
        write_per_call: Duration::from_secs_f64(c.write_call_us / 1e6),
        write_per_byte_ns: c.write_byte_ns,
    }
}

/// A built simulation: the network plus what the results need to know. [`Simulation::run`]
/// runs it once.
pub struct Simulation {
    /// The network, ready to run: nodes, ports, applications, cross traffic and the first
    /// events.
    pub net: Network,
    /// A copy of the scenario it was built from (the summary reports its name and seed).
    pub scenario: Scenario,
    /// Every flow's static facts, in the order of the resolved flows (a dumbbell's pair flows
    /// first, then the `[[flow]]` entries): the order of the summary's flows.
    pub flows: Vec<FlowInfo>,
    /// How long the run lasts: the scenario's `duration_s`.
    pub duration: Duration,
    /// The output directory [`build()`] was given, where the captures are written; `None`
    /// without one (and then nothing is captured).
    pub out_dir: Option<PathBuf>,
}

/// Builds the network of `s`, after the same checks a scenario file gets
/// ([`Scenario::resolve`]). With `out_dir`, pcap files are created there.
pub fn build(s: &Scenario, out_dir: Option<&Path>) -> Result<Simulation, String> {
    let r = s.resolve().map_err(|e| e.to_string())?;
    let mut b = Builder {
        s,
        r: &r,
        net: Network::new(),
        ids: HashMap::new(),
        node_index: HashMap::new(),
    };
    b.add_nodes();
    for (li, l) in r.links.iter().enumerate() {
        b.add_link(li, l, out_dir)?;
    }
    b.net.compute_routes();
    let mut infos = Vec::new();
    for (fi, f) in r.flows.iter().enumerate() {
        infos.push(b.add_flow(fi, f)?);
    }
    for (ci, c) in s.cross.iter().enumerate() {
        b.add_cross(ci, c);
    }
    let mut net = b.net;
    if s.output.queues {
        net.sample_queues(Duration::from_secs_f64(s.output.sample_ms / 1000.0));
    }
    Ok(Simulation {
        net,
        scenario: s.clone(),
        flows: infos,
        duration: Duration::from_secs_f64(s.duration_s),
        out_dir: out_dir.map(Path::to_path_buf),
    })
}

/// A network being built from a resolved scenario, in the order that fixes every address,
/// port and random seed: nodes, links (with their captures), routes, flows, cross traffic.
struct Builder<'a> {
    s: &'a Scenario,
    r: &'a Resolved,
    net: Network,
    ids: HashMap<String, NodeId>,
    /// The network's node id -> its definition (for per-node capture requests).
    node_index: HashMap<NodeId, usize>,
}

impl Builder<'_> {
    /// Hosts (each with an engine endpoint whose ISN key derives from the seed) and
    /// routers. Addresses: explicit ones first, then 198.18.0.1 upward (RFC 2544
    /// benchmarking range).
    fn add_nodes(&mut self) {
        let (s, nodes) = (self.s, &self.r.nodes);
        let used: Vec<Ipv4Addr> = nodes.iter().filter_map(|n| n.addr).collect();
        let mut next = u32::from(Ipv4Addr::new(198, 18, 0, 1));
        for n in nodes {
            let addr = match n.addr {
                Some(a) => a,
                None => loop {
                    let a = Ipv4Addr::from(next);
                    next += 1;
                    if !used.contains(&a) {
                        break a;
                    }
                },
            };
            let id = match n.kind {
                NodeKind::Router => self.net.add_router(&n.name, addr),
                NodeKind::Host => {
                    let k = component_seed(s.seed, &format!("isn/{}", n.name));
                    let mut key = [0u8; 16];
                    key[..8].copy_from_slice(&k.to_le_bytes());
                    key[8..].copy_from_slice(&component_seed(k, "2").to_le_bytes());
                    let ep = Endpoint::new(EndpointConfig::new(addr, key));
                    self.net
                        .add_host(&n.name, ep, n.cpu.as_ref().map(cpu_model))
                }
            };
            self.ids.insert(n.name.clone(), id);
            self.node_index.insert(id, self.node_index.len());
        }
    }

    /// A link's two ports (queue, impairments, serializer each way), its captures, and a
    /// shared medium when half duplex.
    fn add_link(&mut self, li: usize, l: &LinkDef, out_dir: Option<&Path>) -> Result<(), String> {
        let (a, b) = (self.ids[&l.a], self.ids[&l.b]);
        let p = &l.params;
        let mut port_ids = [0usize; 2];
        for (dir, (from, to, qd, imp)) in [
            (a, b, p.queue_ab.as_ref(), p.impair_ab.as_ref()),
            (b, a, p.queue_ba.as_ref(), p.impair_ba.as_ref()),
        ]
        .into_iter()
        .enumerate()
        {
            let name = format!("{}-{}", self.net.nodes[from].name, self.net.nodes[to].name);
            let mut qcfg = qd
                .or(p.queue.as_ref())
                .cloned()
                .unwrap_or(DEFAULT_DROP_TAIL);
            // RED's idle-time decay needs the link's rate.
            qcfg.set_link_rate_if_unset(p.rate_bps as u64);
            let qdisc = qcfg
                .build(component_seed(self.s.seed, &format!("queue/{li}/{dir}")))
                .map_err(|e| format!("link {} queue: {e}", name))?;
            let impair = match imp.or(p.impair.as_ref()) {
                Some(i) => Some(
                    i.build(component_seed(self.s.seed, &format!("impair/{li}/{dir}")))
                        .map_err(|e| format!("link {} impairments: {e}", name))?,
                ),
                None => None,
            };
            let id = self
                .net
                .add_port(&name, from, to, &p.link_config(), qdisc, impair)
                .map_err(|e| format!("link {name}: {e}"))?;
            port_ids[dir] = id;
        }
        if let Some(dir) = out_dir {
            self.add_captures(l, [a, b], port_ids, dir)?;
        }
        if p.half_duplex {
            self.net.share_medium(port_ids[0], port_ids[1]);
        }
        Ok(())
    }

    /// One capture per interface of the link that asked (its link, its node, or every
    /// host's with --pcap), named after the node and the neighbour it faces.
    fn add_captures(
        &mut self,
        l: &LinkDef,
        [a, b]: [NodeId; 2],
        port_ids: [usize; 2],
        dir: &Path,
    ) -> Result<(), String> {
        let (s, nodes) = (self.s, &self.r.nodes);
        let wants = |n: usize| {
            let node = &nodes[self.node_index[&n]];
            l.params.pcap || node.pcap || (s.output.pcap_all && node.kind == NodeKind::Host)
        };
        for (end, other, tx, rx) in [
            (a, b, port_ids[0], port_ids[1]),
            (b, a, port_ids[1], port_ids[0]),
        ] {
            if !wants(end) {
                continue;
            }
            let name = format!(
                "{}-{}",
                self.net.nodes[end].name, self.net.nodes[other].name
            );
            let file = format!("{name}.pcap");
            // Names are checked (`resolve::check_name`), and a capture is still only ever
            // a plain file name directly under `out_dir`.
            if !is_plain_file_name(&file) {
                return Err(format!(
                    "capture file name {file:?} would leave the output directory"
                ));
            }
            let path = dir.join(&file);
            let f = std::fs::File::create(&path)
                .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            let w = PcapWriter::new(std::io::BufWriter::new(f))
                .map_err(|e| format!("{}: {e}", path.display()))?;
            self.net.capture_interface(tx, rx, file, w);
        }
        Ok(())
    }

    /// A flow's two applications ([`AppSpec::build`](ackclock_apps::spec::AppSpec::build)),
    /// the server first, and its trace.
    fn add_flow(&mut self, fi: usize, f: &FlowDef) -> Result<FlowInfo, String> {
        let (from, to) = (self.ids[&f.from], self.ids[&f.to]);
        let port = f.port;
        let dst = SocketAddrV4::new(self.net.nodes[to].addr, port);
        let start = Instant::ZERO + Duration::from_secs_f64(f.start_s);
        let host_to = self.net.nodes[to].host.as_mut();
        let ep_to = &mut host_to.ok_or("flows end at hosts")?.ep;
        let apps = f
            .app
            .build(FlowPlace {
                server_ep: ep_to,
                dst,
                start,
                sender: f.sender.clone(),
                receiver: f.receiver.clone(),
                seed: component_seed(self.s.seed, &format!("flow/{fi}")),
            })
            .map_err(|e| format!("flow {}: port {port}: {e}", f.name))?;
        let recv_app = self.net.add_app(to, apps.server);
        let send_app = self.net.add_app(from, apps.client);
        let trace = self
            .s
            .output
            .trace
            .then(|| self.net.trace_app(from, send_app));
        Ok(FlowInfo {
            name: f.name.clone(),
            from,
            to,
            send_app,
            recv_app,
            trace,
            start,
            mss: f.sender.mss,
            preset: String::new(),
            client_counts: apps.client_counts,
        })
    }

    /// A source of cross traffic, its random draws from its own seed.
    fn add_cross(&mut self, ci: usize, c: &CrossSpec) {
        let from = self.ids[&c.from];
        let to = self.ids[&c.to];
        let rate_bps = c.rate_bps;
        let kind = match c.kind {
            CrossKindName::Poisson => CrossKind::Poisson { rate_bps },
            CrossKindName::Cbr => CrossKind::Cbr { rate_bps },
            CrossKindName::OnOff => CrossKind::OnOff {
                rate_bps,
                mean_on: Duration::from_secs_f64(c.mean_on_ms.unwrap_or(100.0) / 1000.0),
                mean_off: Duration::from_secs_f64(c.mean_off_ms.unwrap_or(100.0) / 1000.0),
            },
        };
        let rng = rand_chacha::ChaCha8Rng::seed_from_u64(component_seed(
            self.s.seed,
            &format!("cross/{ci}"),
        ));
        let (to_addr, src) = (self.net.nodes[to].addr, self.net.nodes[from].addr);
        self.net.add_cross(CrossSource {
            from,
            to: to_addr,
            src,
            packet_bytes: c.packet_bytes,
            kind,
            start: Instant::ZERO + Duration::from_secs_f64(c.start_s),
            stop: c.stop_s.map(|t| Instant::ZERO + Duration::from_secs_f64(t)),
            rng,
            sent: 0,
            on_until: None,
        });
    }
}

impl Simulation {
    /// Runs to the scenario's end and gathers the results.
    pub fn run(mut self, on_progress: impl FnMut(Instant)) -> RunResult {
        let until = Instant::ZERO + self.duration;
        let wall = std::time::Instant::now();
        self.net.run(until, on_progress);
        RunResult::collect(&mut self, wall.elapsed())
    }
}

/// The queue a link direction gets when its scenario names none: drop-tail of 100 packets
/// ([`DEFAULT_DROP_TAIL`]).
pub fn default_queue() -> QdiscConfig {
    DEFAULT_DROP_TAIL
}

/// Whether `name` is one normal path component: no separator, no `..`, not absolute.
fn is_plain_file_name(name: &str) -> bool {
    let mut parts = std::path::Path::new(name).components();
    matches!(
        (parts.next(), parts.next()),
        (Some(std::path::Component::Normal(_)), None)
    ) && !name.contains('/')
        && !name.contains('\\')
}
