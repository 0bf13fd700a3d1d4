//! The discrete-event network: nodes (hosts running the ackclock TCP endpoint, and routers),
//! ports (one direction of a link: a queue discipline, a serializer and a propagation delay),
//! and the event queue ordered by (time, insertion sequence), so the same scenario and seed
//! always produce the same run.

use crate::packet::{PacketPool, SimPacket};
use ackclock_apps::{App, Ctx};
use ackclock_gateway::{DropReason, Impairments, Link, LinkConfig, Qdisc, Verdict};
use ackclock_tcp::{Endpoint, TraceEvent};
use ackclock_wire::pcap::PcapWriter;
use ackclock_wire::{Duration, Instant};
use core::net::Ipv4Addr;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::io::Write;

/// A node's index in [`Network::nodes`], in the order the nodes were added.
pub type NodeId = usize;
/// A port's (one link direction's) index in [`Network::ports`] and [`Network::drops`], in
/// the order the ports were added.
pub type PortId = usize;

/// Host processing costs (seed 000, Jul 1988: the per-packet budget of copy, checksum and
/// fixed protocol/interrupt costs), served by the host's one CPU, one job at a time: arriving
/// packets in arrival order; the packets that processing a job makes TCP send run right after
/// it, before further queued input (tcp_input calls tcp_output inline, so an ACK or the data
/// an ACK releases leaves before the next queued packet is taken in); application writes
/// (process context) queue behind everything already waiting.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuModel {
    /// Fixed time to take in one packet (interrupt and protocol input).
    pub rx_per_packet: Duration,
    /// Time per IP byte of a packet taken in, in nanoseconds.
    pub rx_per_byte_ns: f64,
    /// Fixed time to send one packet.
    pub tx_per_packet: Duration,
    /// Time per IP byte of a packet sent, in nanoseconds.
    pub tx_per_byte_ns: f64,
    /// Fixed cost of one application write call (system call, sosend, the call into TCP).
    pub write_per_call: Duration,
    /// Cost of copying one byte from the application into the socket (copyin).
    pub write_per_byte_ns: f64,
}

impl CpuModel {
    fn rx_cost(&self, len: usize) -> Duration {
        self.rx_per_packet + Duration::from_nanos((self.rx_per_byte_ns * len as f64) as u64)
    }
    fn tx_cost(&self, len: usize) -> Duration {
        self.tx_per_packet + Duration::from_nanos((self.tx_per_byte_ns * len as f64) as u64)
    }
    fn write_cost(&self, len: usize) -> Duration {
        self.write_per_call + Duration::from_nanos((self.write_per_byte_ns * len as f64) as u64)
    }
    /// Whether application writes cost CPU time: then each write is a CPU job of its own,
    /// and TCP sees the data only when the copy is done.
    pub fn charges_writes(&self) -> bool {
        self.write_per_call > Duration::ZERO || self.write_per_byte_ns > 0.0
    }
}

enum CpuJob {
    /// An arriving packet: protocol input runs when the job completes.
    Rx(SimPacket),
    /// A packet built by TCP output: handed to the interface when the job completes.
    Tx(SimPacket),
    /// An application's write call copying `bytes` into the socket (seed 000, Jul 1988, on
    /// sosend): the data reaches TCP, and TCP output for it runs, when the copy completes.
    AppWrite { app: usize, bytes: usize },
}

/// What makes a node a host: its TCP, its UDP, its applications and its CPU.
pub struct Host {
    /// The host's TCP: the engine's endpoint, with the node's address ([`crate::build()`]
    /// derives its ISN key from the run's seed and the host's name).
    pub ep: Endpoint,
    /// The host's UDP, for datagram applications (RPC, DNS-like queries, streams).
    pub udp: ackclock_dgram::UdpStack,
    /// The applications running here, polled in this order; an index into it is an app id
    /// ([`Network::add_app`]).
    pub apps: Vec<Box<dyn App>>,
    wake_at: Option<Instant>,
    cpu: Option<CpuModel>,
    cpu_queue: VecDeque<CpuJob>,
    /// The job the CPU is working on.
    cpu_running: Option<CpuJob>,
    /// Total CPU time spent, for service-demand figures.
    pub cpu_busy_ns: u64,
    /// Packets that reached this host but were not TCP (cross traffic sinks here; UDP
    /// also goes to [`udp`](Self::udp) when an application bound a socket).
    pub non_tcp_in: u64,
    /// IP bytes of the packets counted in `non_tcp_in`.
    pub non_tcp_bytes_in: u64,
    /// Indices into `Network::traced` of this host's traced connections, so draining
    /// traces after each host event costs the host's flows, not every flow's.
    traced: Vec<usize>,
}

impl Host {
    /// The host's processing-cost model, if it has one.
    pub fn cpu(&self) -> Option<&CpuModel> {
        self.cpu.as_ref()
    }
}

/// A node of the network: a host or a router.
pub struct Node {
    /// The node's name, from the scenario.
    pub name: String,
    /// Its IPv4 address: the scenario's, or one handed out from 198.18.0.1 upward.
    pub addr: Ipv4Addr,
    /// The host's stack and applications; `None` for a router.
    pub host: Option<Host>,
    /// Destination address -> output port.
    pub routes: HashMap<Ipv4Addr, PortId>,
    /// A host with one link sends everything through it: no table (a dumbbell of 10,000
    /// pairs would otherwise hold 10^8 entries).
    pub default_port: Option<PortId>,
    /// Packets this router forwarded (always 0 on a host).
    pub forwarded: u64,
    /// Packets dropped here: no route to their destination, a TTL that ran out at a router,
    /// or a packet that reached a host it was not addressed to (hosts do not forward).
    pub no_route: u64,
}

/// Counters of one port (one direction of a link) beyond the serializer's own
/// ([`Port::link`]'s [`ackclock_gateway::LinkStats`]: packets, bytes, busy time).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PortStats {
    /// Packets the impairments lost on the wire (after their transmission time was spent).
    pub lost_on_wire: u64,
    /// Packets delivered with one bit flipped by the impairments (the receiver's checksum
    /// rejects them).
    pub corrupted: u64,
    /// Packets the impairments delivered twice (the copy is not counted by the serializer).
    pub duplicated: u64,
    /// Packets longer than the link's MTU, dropped before the queue (the simulator does not
    /// fragment, and no ICMP "fragmentation needed" goes back: RFC 1191's black hole).
    pub mtu_drops: u64,
}

/// One direction of a link: packets from `from` wait in `qdisc` for the serializer, go
/// through `impair`, and arrive at `to` after the propagation delay.
pub struct Port {
    /// `<from>-<to>` with the nodes' names: the direction's name in summaries and file names.
    pub name: String,
    /// The node that sends on this port.
    pub from: NodeId,
    /// The node at its far end.
    pub to: NodeId,
    /// The serializer and propagation delay: the same model the live emulator and the
    /// gateway tests use, so a link means one thing everywhere.
    pub link: Link,
    /// The queue discipline packets wait in while the serializer (or the shared medium) is
    /// busy.
    pub qdisc: Box<dyn Qdisc<SimPacket>>,
    /// The impairments applied to each packet as its transmission starts; `None` on a
    /// clean link.
    pub impair: Option<Impairments>,
    busy: bool,
    /// Half-duplex medium shared with the reverse port.
    medium: Option<usize>,
    /// Losses, corruptions, duplicates and MTU drops on this port.
    pub stats: PortStats,
    /// The capture of the sending node's interface ([`Network::captures`]): written when
    /// the serializer starts, as ns-3's point-to-point device traces transmissions.
    pub tx_capture: Option<usize>,
    /// The capture of the receiving node's interface: written when the last bit arrives.
    pub rx_capture: Option<usize>,
    /// Samples of the queue and the running totals ([`PortSample`]) when recording.
    pub queue_series: Option<Vec<PortSample>>,
}

/// One node's interface on one link, captured in both directions into one pcap file, like
/// an ns-3 device's pcap: what the node sends is stamped when its serializer starts, what it
/// receives when the last bit arrives. Inside one file the stamps never go backwards, since
/// each packet is written by the event at its own time. Captured from the interface, a
/// sender's file shows round-trip times as the sender saw them (tcptrace's RTT), which two
/// per-direction captures stamped at each sender could not.
pub struct InterfaceCapture {
    /// The file's name (in the run's output directory).
    pub file: String,
    /// The open capture file.
    pub writer: PcapWriter<std::io::BufWriter<std::fs::File>>,
}

/// One sample of a link direction: its queue at `at`, and the running totals the
/// per-link throughput series is cut from (differences of consecutive samples).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortSample {
    /// When the sample was taken.
    pub at: Instant,
    /// Packets in the queue (waiting, not counting the one on the wire).
    pub queue_pkts: u32,
    /// IP bytes of the packets in the queue.
    pub queue_bytes: u32,
    /// IP bytes the serializer started sending since the run began.
    pub sent_bytes: u64,
    /// Packets dropped by the queue, lost or refused as too long since the run began.
    pub dropped: u64,
}

struct Medium {
    busy: bool,
    /// The port that transmitted last, so the other goes first when both wait.
    last: Option<PortId>,
}

/// A raw-IP cross-traffic source: Poisson, on/off or constant-rate packets.
/// Its packets are UDP-shaped datagrams to the discard port (9), sent from `from` toward `to`.
pub struct CrossSource {
    /// The sending host, where the packets enter the network.
    pub from: NodeId,
    /// The destination address.
    pub to: Ipv4Addr,
    /// The source address (the sending host's).
    pub src: Ipv4Addr,
    /// Size of every packet, in IP bytes (at least 28: IP and UDP headers).
    pub packet_bytes: usize,
    /// How the packets are spaced.
    pub kind: CrossKind,
    /// When the first packet is sent.
    pub start: Instant,
    /// When the source stops; `None`: it sends until the run ends.
    pub stop: Option<Instant>,
    /// The source's own random draws (gaps, on and off periods), seeded from the run's seed
    /// and the source's index.
    pub rng: rand_chacha::ChaCha8Rng,
    /// Packets sent so far.
    pub sent: u64,
    /// The end of an on/off source's current on period; `None` outside one.
    pub on_until: Option<Instant>,
}

/// How a [`CrossSource`] spaces its packets; rates are in bits per second of IP packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CrossKind {
    /// Exponential gaps with the mean that gives `rate_bps`.
    Poisson {
        /// The mean rate.
        rate_bps: f64,
    },
    /// Constant bit rate.
    Cbr {
        /// The rate.
        rate_bps: f64,
    },
    /// Exponentially distributed on and off periods, CBR while on.
    OnOff {
        /// The rate while on.
        rate_bps: f64,
        /// The mean on period.
        mean_on: Duration,
        /// The mean off period.
        mean_off: Duration,
    },
}

enum Event {
    /// A packet reaches the far end of `port` (its `to` node); the port, not the node, so
    /// the receiving interface's capture is found without a larger event.
    Arrive {
        port: PortId,
        pkt: SimPacket,
    },
    PortIdle {
        port: PortId,
    },
    HostWake {
        node: NodeId,
    },
    CpuDone {
        node: NodeId,
    },
    Cross {
        src: usize,
    },
    Sample,
}

struct Scheduled {
    at: Instant,
    seq: u64,
    ev: Event,
}

impl PartialEq for Scheduled {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at && self.seq == o.seq
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Scheduled {
    // BinaryHeap is a max-heap: reverse, so the earliest (time, sequence) pops first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.at.cmp(&self.at).then(o.seq.cmp(&self.seq))
    }
}

/// An application whose connection's sender-side TCP trace is recorded
/// ([`Network::trace_app`]), and the events recorded so far.
pub struct TracedConn {
    /// The host the application runs on.
    pub node: NodeId,
    /// The application's index in that host's [`Host::apps`].
    pub app: usize,
    /// The trace events drained from the connection so far, in time order.
    pub events: Vec<TraceEvent>,
    /// Set once the app's connection exists and tracing is switched on.
    pub attached: Option<ackclock_tcp::ConnId>,
}

/// The simulated network and its event queue: built by [`crate::build()`], run by
/// [`Network::run`].
pub struct Network {
    /// The simulated time reached: that of the event being handled, or the end of the last
    /// [`Network::run`].
    pub now: Instant,
    /// Every node, indexed by [`NodeId`].
    pub nodes: Vec<Node>,
    /// Every link direction, indexed by [`PortId`]. [`crate::build()`] adds link i's a-to-b
    /// direction as port 2i and its b-to-a direction as port 2i + 1.
    pub ports: Vec<Port>,
    /// Per-interface packet captures (see [`Network::capture_interface`]).
    pub captures: Vec<InterfaceCapture>,
    mediums: Vec<Medium>,
    /// The cross-traffic sources, in the order they were added.
    pub cross: Vec<CrossSource>,
    queue: BinaryHeap<Scheduled>,
    seq: u64,
    pool: PacketPool,
    scratch: Vec<u8>,
    /// Events handled so far: the summary's `events`.
    pub events_processed: u64,
    /// The traced connections, indexed by what [`Network::trace_app`] returned.
    pub traced: Vec<TracedConn>,
    sample_every: Option<Duration>,
    /// Packets dropped by queues, per port and reason, for the queue statistics: overflow,
    /// the random-drop gateway's victims, RED's early and forced drops, CoDel's drops.
    pub drops: Vec<[u64; 4]>,
}

fn reason_index(r: DropReason) -> usize {
    match r {
        DropReason::Overflow => 0,
        DropReason::RandomDrop => 1,
        DropReason::Early | DropReason::Forced => 2,
        DropReason::Codel => 3,
    }
}

impl Network {
    /// An empty network at time zero.
    pub fn new() -> Self {
        Network {
            now: Instant::ZERO,
            nodes: Vec::new(),
            ports: Vec::new(),
            captures: Vec::new(),
            mediums: Vec::new(),
            cross: Vec::new(),
            queue: BinaryHeap::new(),
            seq: 0,
            pool: PacketPool::default(),
            scratch: vec![0u8; 65536],
            events_processed: 0,
            traced: Vec::new(),
            sample_every: None,
            drops: Vec::new(),
        }
    }

    fn schedule(&mut self, at: Instant, ev: Event) {
        self.seq += 1;
        self.queue.push(Scheduled {
            at,
            seq: self.seq,
            ev,
        });
    }

    /// Adds a router named `name` with the address `addr`; returns its id.
    pub fn add_router(&mut self, name: &str, addr: Ipv4Addr) -> NodeId {
        self.nodes.push(Node {
            name: name.to_string(),
            addr,
            host: None,
            routes: HashMap::new(),
            default_port: None,
            forwarded: 0,
            no_route: 0,
        });
        self.nodes.len() - 1
    }

    /// Adds a host named `name` running `ep` (whose address becomes the node's), with a
    /// processing-cost model if `cpu` is given; returns its id. The host is first woken at
    /// time zero.
    pub fn add_host(&mut self, name: &str, ep: Endpoint, cpu: Option<CpuModel>) -> NodeId {
        let addr = ep.addr();
        self.nodes.push(Node {
            name: name.to_string(),
            addr,
            host: Some(Host {
                udp: ackclock_dgram::UdpStack::new(ackclock_dgram::UdpConfig::new(addr)),
                ep,
                apps: Vec::new(),
                wake_at: None,
                cpu,
                cpu_queue: VecDeque::new(),
                cpu_running: None,
                cpu_busy_ns: 0,
                non_tcp_in: 0,
                non_tcp_bytes_in: 0,
                traced: Vec::new(),
            }),
            routes: HashMap::new(),
            default_port: None,
            forwarded: 0,
            no_route: 0,
        });
        let id = self.nodes.len() - 1;
        // Apps may start at time zero.
        self.schedule(Instant::ZERO, Event::HostWake { node: id });
        id
    }

    /// Adds one direction of a link, from `from` to `to`, named `name`; returns its id.
    /// Fails when `link` is not a valid link configuration.
    pub fn add_port(
        &mut self,
        name: &str,
        from: NodeId,
        to: NodeId,
        link: &LinkConfig,
        qdisc: Box<dyn Qdisc<SimPacket>>,
        impair: Option<Impairments>,
    ) -> Result<PortId, ackclock_gateway::ConfigError> {
        self.ports.push(Port {
            name: name.to_string(),
            from,
            to,
            link: Link::new(link)?,
            qdisc,
            impair,
            busy: false,
            medium: None,
            stats: PortStats::default(),
            tx_capture: None,
            rx_capture: None,
            queue_series: None,
        });
        self.drops.push([0; 4]);
        Ok(self.ports.len() - 1)
    }

    /// Captures the interface of `tx_port`'s sending node on that link: what it sends on
    /// `tx_port` and what it receives on `rx_port` (the reverse direction).
    pub fn capture_interface(
        &mut self,
        tx_port: PortId,
        rx_port: PortId,
        file: String,
        writer: PcapWriter<std::io::BufWriter<std::fs::File>>,
    ) {
        let c = self.captures.len();
        self.captures.push(InterfaceCapture { file, writer });
        self.ports[tx_port].tx_capture = Some(c);
        self.ports[rx_port].rx_capture = Some(c);
    }

    /// Makes two ports share one half-duplex medium: only one transmits at a time (data
    /// and ACKs take turns on one wire, as on the seeds' 10 Mb/s Ethernet).
    pub fn share_medium(&mut self, a: PortId, b: PortId) {
        let m = self.mediums.len();
        self.mediums.push(Medium {
            busy: false,
            last: None,
        });
        self.ports[a].medium = Some(m);
        self.ports[b].medium = Some(m);
    }

    /// Runs `app` on host `node`; returns its index in the host's [`Host::apps`]. Panics
    /// when `node` is a router.
    pub fn add_app(&mut self, node: NodeId, app: Box<dyn App>) -> usize {
        let h = self.nodes[node].host.as_mut().expect("apps run on hosts");
        h.apps.push(app);
        h.apps.len() - 1
    }

    /// Records the sender-side TCP trace of the connection of app `app` on host `node`,
    /// once it exists; returns the index of its [`TracedConn`] in [`Network::traced`].
    pub fn trace_app(&mut self, node: NodeId, app: usize) -> usize {
        self.traced.push(TracedConn {
            node,
            app,
            events: Vec::new(),
            attached: None,
        });
        let idx = self.traced.len() - 1;
        self.nodes[node]
            .host
            .as_mut()
            .expect("traced apps run on hosts")
            .traced
            .push(idx);
        idx
    }

    /// Adds a cross-traffic source; its first packet goes out at its `start`.
    pub fn add_cross(&mut self, src: CrossSource) {
        let start = src.start;
        self.cross.push(src);
        let idx = self.cross.len() - 1;
        self.schedule(start, Event::Cross { src: idx });
    }

    /// Samples queue lengths every `every` into each port's series.
    pub fn sample_queues(&mut self, every: Duration) {
        for p in &mut self.ports {
            p.queue_series = Some(Vec::new());
        }
        self.sample_every = Some(every);
        self.schedule(Instant::ZERO, Event::Sample);
    }

    /// Static routes by shortest path (hop count, ties broken by port order), from every
    /// node to every host. Paths cross routers only: a host does not forward. A host with
    /// a single link gets it as its default port instead of a table.
    pub fn compute_routes(&mut self) {
        let n = self.nodes.len();
        let mut out_ports: Vec<Vec<PortId>> = vec![Vec::new(); n];
        for (pid, p) in self.ports.iter().enumerate() {
            out_ports[p.from].push(pid);
        }
        for (u, ports) in out_ports.iter().enumerate() {
            if self.nodes[u].host.is_some() && ports.len() == 1 {
                self.nodes[u].default_port = Some(ports[0]);
            }
        }
        // Reversed edges from the nodes that need a table: for each node, the ports that
        // lead into it and where they start. (Single-link hosts are left out: they need no
        // entries and forward nothing, and a dumbbell router has thousands of them.)
        let mut radj: Vec<Vec<(PortId, NodeId)>> = vec![Vec::new(); n];
        for (pid, p) in self.ports.iter().enumerate() {
            if self.nodes[p.from].default_port.is_none() {
                radj[p.to].push((pid, p.from));
            }
        }
        let mut dist = vec![usize::MAX; n];
        let mut q = VecDeque::new();
        for dst in 0..n {
            if self.nodes[dst].host.is_none() {
                continue;
            }
            let addr = self.nodes[dst].addr;
            // BFS backwards from dst over reversed edges gives each node its next hop.
            dist.iter_mut().for_each(|d| *d = usize::MAX);
            dist[dst] = 0;
            q.clear();
            q.push_back(dst);
            while let Some(v) = q.pop_front() {
                if v != dst && self.nodes[v].host.is_some() {
                    // A host is reached (it gets a route) but passes nothing on.
                    continue;
                }
                for &(pid, u) in &radj[v] {
                    if dist[u] == usize::MAX {
                        dist[u] = dist[v] + 1;
                        self.nodes[u].routes.insert(addr, pid);
                        q.push_back(u);
                    }
                }
            }
        }
    }

    /// Whether events are still queued (a run stopped at its end leaves the later ones).
    pub fn events_pending(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Runs until `until` (or until nothing is left to happen), then drains the traces and
    /// flushes the captures. `on_progress` is called with the simulated time reached every
    /// 65,536 events and once at the end.
    pub fn run(&mut self, until: Instant, mut on_progress: impl FnMut(Instant)) {
        let mut tick = 0u32;
        while let Some(top) = self.queue.peek() {
            if top.at > until {
                break;
            }
            let Scheduled { at, ev, .. } = self.queue.pop().expect("peeked");
            self.now = self.now.max(at);
            self.events_processed += 1;
            match ev {
                Event::Arrive { port, pkt } => self.arrive(port, pkt),
                Event::PortIdle { port } => self.port_idle(port),
                Event::HostWake { node } => {
                    if let Some(h) = self.nodes[node].host.as_mut() {
                        if h.wake_at.is_some_and(|t| t <= self.now) {
                            h.wake_at = None;
                        }
                        h.ep.handle_timeout(self.now);
                    }
                    self.host_run(node);
                }
                Event::CpuDone { node } => self.cpu_done(node),
                Event::Cross { src } => self.cross_fire(src),
                Event::Sample => self.sample(),
            }
            tick = tick.wrapping_add(1);
            if tick % 65536 == 0 {
                on_progress(self.now);
            }
        }
        self.now = self.now.max(until);
        on_progress(self.now);
        self.collect_traces();
    }

    fn sample(&mut self) {
        let now = self.now;
        for (p, d) in self.ports.iter_mut().zip(&self.drops) {
            if let Some(s) = p.queue_series.as_mut() {
                s.push(PortSample {
                    at: now,
                    queue_pkts: p.qdisc.len_pkts() as u32,
                    queue_bytes: p.qdisc.len_bytes() as u32,
                    sent_bytes: p.link.stats().ip_bytes,
                    dropped: d.iter().sum::<u64>() + p.stats.lost_on_wire + p.stats.mtu_drops,
                });
            }
        }
        if let Some(e) = self.sample_every {
            self.schedule(now + e, Event::Sample);
        }
    }

    /// A packet reaches `node`: a host takes it in (through its CPU if modelled), a router
    /// forwards it.
    fn arrive(&mut self, port: PortId, pkt: SimPacket) {
        let node = self.ports[port].to;
        if let Some(c) = self.ports[port].rx_capture {
            let _ = self.captures[c].writer.write_packet(self.now, &pkt.buf);
        }
        let dst = dst_addr(&pkt.buf);
        let n = &mut self.nodes[node];
        if let Some(h) = n.host.as_mut() {
            if dst != Some(n.addr) {
                // Hosts do not forward.
                n.no_route += 1;
                self.pool.recycle(pkt);
                return;
            }
            if h.cpu.is_some() {
                h.cpu_queue.push_back(CpuJob::Rx(pkt));
                self.cpu_kick(node);
            } else {
                self.host_input(node, pkt);
            }
            return;
        }
        // Router: decrement TTL (the checksum patched incrementally, RFC 1624), forward.
        let mut pkt = pkt;
        if let Some(mut h) = ackclock_wire::Ipv4HeaderMut::new(&mut pkt.buf) {
            if !h.decrement_ttl() {
                n.no_route += 1;
                self.pool.recycle(pkt);
                return;
            }
        }
        n.forwarded += 1;
        self.forward(node, pkt);
    }

    fn forward(&mut self, node: NodeId, pkt: SimPacket) {
        let Some(dst) = dst_addr(&pkt.buf) else {
            self.pool.recycle(pkt);
            return;
        };
        let n = &self.nodes[node];
        let Some(port) = n.default_port.or_else(|| n.routes.get(&dst).copied()) else {
            self.nodes[node].no_route += 1;
            self.pool.recycle(pkt);
            return;
        };
        self.enqueue(port, pkt);
    }

    fn enqueue(&mut self, port: PortId, pkt: SimPacket) {
        let now = self.now;
        if !self.ports[port].link.fits_mtu(pkt.buf.len()) {
            self.ports[port].stats.mtu_drops += 1;
            self.pool.recycle(pkt);
            return;
        }
        if let Some((p, r)) = self.ports[port].qdisc.enqueue(now, pkt).into_dropped() {
            self.drops[port][reason_index(r)] += 1;
            self.pool.recycle(p);
        }
        self.try_start(port);
    }

    /// Starts the next transmission on `port` if its serializer (and medium) is free.
    fn try_start(&mut self, port: PortId) {
        let now = self.now;
        if self.ports[port].busy {
            return;
        }
        if let Some(m) = self.ports[port].medium {
            if self.mediums[m].busy {
                return;
            }
        }
        let mut dropped: Vec<(SimPacket, DropReason)> = Vec::new();
        let next = {
            let p = &mut self.ports[port];
            p.qdisc.dequeue(now, &mut |pkt, r| dropped.push((pkt, r)))
        };
        for (pkt, r) in dropped {
            self.drops[port][reason_index(r)] += 1;
            self.pool.recycle(pkt);
        }
        let Some(mut pkt) = next else {
            return;
        };
        let p = &mut self.ports[port];
        // The port is idle here, so the serializer starts now.
        let (done, mut arrival) = p.link.transmit(now, pkt.buf.len());
        p.busy = true;
        if let Some(m) = p.medium {
            self.mediums[m].busy = true;
            self.mediums[m].last = Some(port);
        }
        if let Some(c) = self.ports[port].tx_capture {
            let _ = self.captures[c].writer.write_packet(now, &pkt.buf);
        }
        let p = &mut self.ports[port];
        let mut duplicate = false;
        if let Some(imp) = p.impair.as_mut() {
            match imp.apply(now, &mut pkt) {
                Verdict::Drop(_) | Verdict::Corrupt { bit: None } => {
                    p.stats.lost_on_wire += 1;
                    self.pool.recycle(pkt);
                    self.schedule(done, Event::PortIdle { port });
                    return;
                }
                Verdict::Deliver {
                    extra_delay,
                    duplicate: dup,
                } => {
                    arrival += extra_delay;
                    duplicate = dup;
                }
                Verdict::Corrupt { bit: Some(_) } => {
                    p.stats.corrupted += 1;
                }
            }
        }
        if duplicate {
            self.ports[port].stats.duplicated += 1;
            let copy = self.pool.make(pkt.born, &pkt.buf);
            self.schedule(arrival, Event::Arrive { port, pkt: copy });
        }
        self.schedule(done, Event::PortIdle { port });
        self.schedule(arrival, Event::Arrive { port, pkt });
    }

    fn port_idle(&mut self, port: PortId) {
        self.ports[port].busy = false;
        if let Some(m) = self.ports[port].medium {
            self.mediums[m].busy = false;
            // Let the other direction go first if it has something waiting.
            if let Some(other) = self
                .ports
                .iter()
                .enumerate()
                .find(|(i, p)| *i != port && p.medium == Some(m))
                .map(|(i, _)| i)
            {
                self.try_start(other);
            }
        }
        self.try_start(port);
    }

    /// Protocol input on a host (after CPU time, if modelled).
    fn host_input(&mut self, node: NodeId, pkt: SimPacket) {
        let now = self.now;
        let h = self.nodes[node].host.as_mut().expect("host");
        let proto = pkt.buf.get(9).copied();
        if proto == Some(ackclock_wire::IPPROTO_TCP) {
            h.ep.handle_packet(now, &pkt.buf);
        } else {
            if proto == Some(ackclock_wire::IPPROTO_UDP) && h.udp.has_sockets() {
                // Malformed datagrams are counted in the UDP stack's statistics.
                let _ = h.udp.handle_packet(&pkt.buf);
            }
            h.non_tcp_in += 1;
            h.non_tcp_bytes_in += pkt.buf.len() as u64;
        }
        self.pool.recycle(pkt);
        self.host_run(node);
    }

    /// Runs the host's applications and sends whatever its TCP wants to send; re-arms its
    /// wake-up for the earliest timer.
    fn host_run(&mut self, node: NodeId) {
        let now = self.now;
        let mut out: Vec<SimPacket> = Vec::new();
        let mut writes: Vec<CpuJob> = Vec::new();
        let cpu;
        let next_wake;
        {
            let h = self.nodes[node].host.as_mut().expect("host");
            let mut app_wake: Option<Instant> = None;
            let charged_writes = h.cpu.is_some_and(|m| m.charges_writes());
            // Apps, then output, until quiet: an app's write may let TCP send, and TCP's
            // progress may let an app write more.
            for _round in 0..4 {
                for (i, app) in h.apps.iter_mut().enumerate() {
                    let mut ctx = Ctx::new(now, &mut h.ep, &mut h.udp);
                    if charged_writes {
                        ctx = ctx.with_charged_writes();
                    }
                    if let Some(t) = app.poll(&mut ctx) {
                        app_wake = Some(app_wake.map_or(t, |w: Instant| w.min(t)));
                    }
                    if let Some(bytes) = ctx.cpu.and_then(|c| c.requested) {
                        writes.push(CpuJob::AppWrite { app: i, bytes });
                    }
                }
                let mut sent = false;
                while let Some(t) = h.ep.poll_transmit(now, &mut self.scratch) {
                    out.push(self.pool.make(now, &self.scratch[..t.len]));
                    sent = true;
                }
                while let Some(len) = h.udp.poll_transmit(&mut self.scratch) {
                    out.push(self.pool.make(now, &self.scratch[..len]));
                    sent = true;
                }
                if !sent {
                    break;
                }
            }
            cpu = h.cpu.is_some();
            let tcp_wake = h.ep.poll_timeout();
            next_wake = [app_wake, tcp_wake].into_iter().flatten().min();
        }
        if cpu {
            // Output runs next, in order, ahead of input still waiting.
            let h = self.nodes[node].host.as_mut().expect("host");
            for pkt in out.into_iter().rev() {
                h.cpu_queue.push_front(CpuJob::Tx(pkt));
            }
        } else {
            for pkt in out {
                self.forward(node, pkt);
            }
        }
        // An application's next write queues behind the output of what it already wrote
        // (sosend returns from the protocol's send routine before the next copy).
        if !writes.is_empty() {
            let h = self.nodes[node].host.as_mut().expect("host");
            h.cpu_queue.extend(writes);
        }
        if cpu {
            self.cpu_kick(node);
        }
        if let Some(t) = next_wake {
            let t = t.max(now);
            let h = self.nodes[node].host.as_mut().expect("host");
            if h.wake_at.is_none_or(|w| t < w) {
                h.wake_at = Some(t);
                self.schedule(t, Event::HostWake { node });
            }
        }
        self.attach_traces(node);
    }

    fn cpu_kick(&mut self, node: NodeId) {
        let now = self.now;
        let h = self.nodes[node].host.as_mut().expect("host");
        if h.cpu_running.is_some() {
            return;
        }
        let Some(job) = h.cpu_queue.pop_front() else {
            return;
        };
        let model = h.cpu.expect("cpu model");
        let cost = match &job {
            CpuJob::Rx(p) => model.rx_cost(p.buf.len()),
            CpuJob::Tx(p) => model.tx_cost(p.buf.len()),
            CpuJob::AppWrite { bytes, .. } => model.write_cost(*bytes),
        };
        h.cpu_running = Some(job);
        h.cpu_busy_ns += cost.as_nanos();
        self.schedule(now + cost, Event::CpuDone { node });
    }

    fn cpu_done(&mut self, node: NodeId) {
        let h = self.nodes[node].host.as_mut().expect("host");
        match h.cpu_running.take() {
            Some(CpuJob::Rx(p)) => self.host_input(node, p),
            Some(CpuJob::Tx(p)) => self.forward(node, p),
            Some(CpuJob::AppWrite { app, bytes }) => {
                let now = self.now;
                let mut ctx = Ctx::new(now, &mut h.ep, &mut h.udp).with_charged_writes();
                h.apps[app].write_done(&mut ctx, bytes);
                // TCP output for the copied data, then the application carries on.
                self.host_run(node);
            }
            None => {}
        }
        self.cpu_kick(node);
    }

    fn cross_fire(&mut self, idx: usize) {
        use rand::Rng;
        let now = self.now;
        let src = &mut self.cross[idx];
        if src.stop.is_some_and(|s| now >= s) {
            return;
        }
        let bits = (src.packet_bytes * 8) as f64;
        let (send, next) = match src.kind {
            CrossKind::Cbr { rate_bps } => (true, bits / rate_bps.max(1.0)),
            CrossKind::Poisson { rate_bps } => {
                let mean = bits / rate_bps.max(1.0);
                let u: f64 = src.rng.random::<f64>();
                (true, -mean * (1.0 - u).ln())
            }
            CrossKind::OnOff {
                rate_bps,
                mean_on,
                mean_off,
            } => {
                // While on, CBR; at the end of an on period, an exponential off period.
                match src.on_until {
                    Some(t) if now < t => (true, bits / rate_bps.max(1.0)),
                    Some(_) => {
                        src.on_until = None;
                        let u: f64 = src.rng.random::<f64>();
                        (false, -mean_off.as_secs_f64() * (1.0 - u).ln())
                    }
                    None => {
                        let u: f64 = src.rng.random::<f64>();
                        let on = -mean_on.as_secs_f64() * (1.0 - u).ln();
                        src.on_until = Some(now + Duration::from_secs_f64(on));
                        (true, bits / rate_bps.max(1.0))
                    }
                }
            }
        };
        let next_at = now + Duration::from_secs_f64(next);
        if send {
            src.sent += 1;
            let len = src.packet_bytes.max(28);
            let (from, s_addr, d_addr) = (src.from, src.src, src.to);
            // A UDP-shaped datagram to the discard port (protocol 17), so it is not TCP.
            let mut b = [0u8; 65535];
            let ip = ackclock_wire::Ipv4Header::new(s_addr, d_addr, 17);
            if ip.emit(&mut b, len - 20).is_ok() {
                b[20..22].copy_from_slice(&9u16.to_be_bytes());
                b[22..24].copy_from_slice(&9u16.to_be_bytes());
                b[24..26].copy_from_slice(&((len - 20) as u16).to_be_bytes());
                let pkt = self.pool.make(now, &b[..len]);
                self.forward(from, pkt);
            }
        }
        self.schedule(next_at, Event::Cross { src: idx });
    }

    /// Turns tracing on for traced apps whose connection now exists, and drains events.
    fn attach_traces(&mut self, node: NodeId) {
        let h = self.nodes[node].host.as_mut().expect("host");
        for &ti in &h.traced {
            let t = &mut self.traced[ti];
            if t.attached.is_none() {
                if let Some(id) = h.apps[t.app].conn() {
                    if let Some(c) = h.ep.conn_mut(id) {
                        c.set_tracing(true);
                        t.attached = Some(id);
                    }
                }
            }
            if let Some(id) = t.attached {
                if let Some(c) = h.ep.conn_mut(id) {
                    c.take_trace(&mut t.events);
                }
            }
        }
    }

    fn collect_traces(&mut self) {
        for n in 0..self.nodes.len() {
            if self.nodes[n].host.is_some() {
                self.attach_traces(n);
            }
        }
        for c in &mut self.captures {
            let _ = c.writer.flush();
        }
    }
}

impl Default for Network {
    fn default() -> Self {
        Self::new()
    }
}

fn dst_addr(buf: &[u8]) -> Option<Ipv4Addr> {
    let b = buf.get(16..20)?;
    Some(Ipv4Addr::new(b[0], b[1], b[2], b[3]))
}

/// Flushes a pcap writer, ignoring a write error (as the captures do throughout the run).
pub fn flush_pcap<W: Write>(w: &mut PcapWriter<W>) {
    let _ = w.flush();
}

#[cfg(test)]
mod tests {
    use crate::{build, RunResult, Scenario};
    use ackclock_tcp::TraceKind;
    use ackclock_wire::Instant;
    use std::path::Path;

    /// 10000 bytes in `chunk`-byte write calls from a to b over a fast, short link, with CPU
    /// models `cpu_a` and `cpu_b` (node-table lines, or empty); every segment is ACKed.
    fn run(cpu_a: &str, cpu_b: &str, chunk: usize) -> RunResult {
        let text = format!(
            r#"
duration_s = 1
[[node]]
name = "a"
{cpu_a}
[[node]]
name = "b"
{cpu_b}
[[link]]
a = "a"
b = "b"
rate_bps = 1e9
delay_ms = 0.01
[[flow]]
from = "a"
to = "b"
tcp = "newreno"
tcp_overrides = {{ initial_window_segments = 10, nagle = false, ack_every = 1 }}
app = {{ kind = "bulk", bytes = 10000, chunk_bytes = {chunk} }}
"#
        );
        let s = Scenario::from_str_named(&text, Path::new("t.toml")).unwrap();
        let r = build(&s, None).unwrap().run(|_| {});
        assert_eq!(r.summary.flows[0].bytes_delivered, 10000);
        r
    }

    /// The sender's data segments: (time, offset from the first).
    fn sends(r: &RunResult) -> Vec<(Instant, u32)> {
        let mut isn = None;
        r.traces[0]
            .iter()
            .filter_map(|e| match e.kind {
                TraceKind::Send { seq, len, .. } if len > 0 => {
                    let base = *isn.get_or_insert(seq);
                    Some((e.time, seq.since(base)))
                }
                _ => None,
            })
            .collect()
    }

    fn busy(r: &RunResult) -> f64 {
        r.summary.hosts.iter().map(|h| h.cpu_busy_s).sum()
    }

    fn ms(t: Instant) -> f64 {
        t.as_nanos() as f64 / 1e6
    }

    #[test]
    fn app_writes_cost_cpu_and_tcp_waits_for_the_copy() {
        // Free writes: the data leaves as soon as the handshake completes (well under 1 ms).
        let r = run("", "", 5000);
        assert!(ms(sends(&r)[0].0) < 0.5, "{:?}", sends(&r));
        assert!(r.summary.hosts.is_empty());

        // 1 ms per call + 100 ns per byte: each 5000-byte write takes 1.5 ms of CPU, during
        // which nothing else runs and TCP does not see its data.
        let cpu = "cpu = { write_call_us = 1000, write_byte_ns = 100 }";
        let r = run(cpu, "", 5000);
        let s = sends(&r);
        assert!((ms(s[0].0) - 1.5).abs() < 1e-6, "{s:?}");
        // Bytes of the second write go out only after the second copy (at 3 ms).
        for &(t, off) in &s {
            assert_eq!(off >= 5000, ms(t) >= 3.0 - 1e-6, "{s:?}");
        }
        assert!((busy(&r) - 3e-3).abs() < 1e-9, "{}", busy(&r));

        // One 10000-byte write: one fixed cost, so 2 ms in all, and nothing before then.
        let r = run(cpu, "", 10000);
        assert!((ms(sends(&r)[0].0) - 2.0).abs() < 1e-6, "{:?}", sends(&r));
        assert!((busy(&r) - 2e-3).abs() < 1e-9, "{}", busy(&r));
    }

    #[test]
    fn output_runs_before_queued_input() {
        // The receiver takes 1 ms per packet in and out. Seven data segments reach it almost
        // at once; the ACK of the first leaves right after the first is taken in (tcp_input
        // calls tcp_output), not behind the six still queued.
        let cpu = "cpu = { rx_packet_us = 1000, tx_packet_us = 1000 }";
        let r = run("", cpu, 10000);
        let s = sends(&r);
        assert_eq!(s.len(), 7, "{s:?}");
        let t0 = s[0].0;
        let first_ack = r.traces[0]
            .iter()
            .find(|e| e.time > t0 && matches!(e.kind, TraceKind::Ack { .. }))
            .unwrap()
            .time;
        // The first segment (which completes the handshake) in, 1 ms, its ACK out, 1 ms;
        // behind the queued input it would be 8 ms.
        let d = ms(first_ack) - ms(t0);
        assert!(
            (2.0..2.1).contains(&d),
            "first ACK {d} ms after the first segment"
        );
        // Seven segments and the handshake ACK in, a SYN-ACK, seven ACKs and a FIN-ACK out
        // (at least): every job is charged.
        assert!(busy(&r) >= 16e-3, "{}", busy(&r));
    }
}
