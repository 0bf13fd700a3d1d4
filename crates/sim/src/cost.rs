//! What a valid scenario will cost before it runs: memory and events, predicted from the
//! resolved topology, so a run that would exhaust the machine or run for hours is refused
//! at once, naming the field that drives the cost and the figure, instead of aborting on a
//! failed allocation or running without visible end.
//!
//! The prediction follows the packets. Each flow sends at most what its application asks
//! and what the slowest link of its path can carry; flows that share a link share its
//! capacity; every packet costs a few events per hop. Memory is what grows with those
//! packets and with time: trace records, queue-length samples, socket buffers, queued
//! packets, routing tables. It is an estimate meant to be within a small factor and on the
//! high side: `tests/cost.rs` compares it with the events and trace records of real runs.

use crate::resolve::{FlowDef, Graph, Invalid, Resolved};
use crate::scenario::{
    AppSpec, CrossKindName, CrossSpec, NodeKind, RateControlName, RpcSpec, Scenario, StreamSpec,
    TimerName,
};
use ackclock_gateway::QdiscConfig;
use std::borrow::Cow;

/// The most a run may use. `ackclock sim` and `sweep` check it before they start.
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    /// The most memory a run may need, in bytes.
    pub max_memory_bytes: u64,
    /// The most events a run may take.
    pub max_events: u64,
    /// Where the memory limit comes from, for the message ("half of this machine's 23.4
    /// GiB" or "--max-memory").
    pub memory_source: Cow<'static, str>,
}

/// Ten billion events: about ten minutes of simulation on one core of a 2020s machine.
pub const DEFAULT_MAX_EVENTS: u64 = 10_000_000_000;

impl Budget {
    /// Half of this machine's memory (from /proc/meminfo; 8 GiB where that cannot be read)
    /// and [`DEFAULT_MAX_EVENTS`].
    pub fn for_this_machine() -> Budget {
        Budget {
            max_memory_bytes: machine_memory().map_or(8 << 30, |m| m / 2),
            max_events: DEFAULT_MAX_EVENTS,
            memory_source: Cow::Borrowed("half of this machine's memory"),
        }
    }

    /// No limit: for callers that vouch for their scenarios (the reproduction suite).
    pub fn unlimited() -> Budget {
        Budget {
            max_memory_bytes: u64::MAX,
            max_events: u64::MAX,
            memory_source: Cow::Borrowed("unlimited"),
        }
    }
}

/// Total memory from /proc/meminfo.
fn machine_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// One contribution to the cost: the field that drives it, what it is, how much.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// The field of the scenario that drives it (`output.trace`, `cross[0].rate_bps`).
    pub field: String,
    /// What it is, for the message ("socket buffers").
    pub what: String,
    /// Bytes (a memory item) or events (an event item).
    pub amount: f64,
}

/// The predicted cost of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cost {
    /// What the run keeps in memory, in bytes.
    pub memory: Vec<Item>,
    /// What the run's events are spent on.
    pub events: Vec<Item>,
    /// Predicted trace records per flow (in flow order), for the test against real runs.
    pub trace_records: Vec<f64>,
}

impl Cost {
    /// The predicted memory, in bytes: the sum of the memory items.
    pub fn memory_bytes(&self) -> f64 {
        self.memory.iter().map(|i| i.amount).sum()
    }

    /// The predicted events: the sum of the event items.
    pub fn event_count(&self) -> f64 {
        self.events.iter().map(|i| i.amount).sum()
    }

    /// `Ok` within `b`; else the error names the largest contribution's field.
    pub fn check(&self, b: &Budget) -> Result<(), Invalid> {
        let mem = self.memory_bytes();
        if mem > b.max_memory_bytes as f64 {
            let top = largest(&self.memory);
            return Err(Invalid::new(
                top.field.clone(),
                format!(
                    "the run would need about {} of memory, most of it for {} ({}), more than the limit of {} ({}); change this field or duration_s, or raise the limit with --max-memory",
                    bytes(mem),
                    top.what,
                    bytes(top.amount),
                    bytes(b.max_memory_bytes as f64),
                    b.memory_source
                ),
            ));
        }
        let ev = self.event_count();
        if ev > b.max_events as f64 {
            let top = largest(&self.events);
            return Err(Invalid::new(
                top.field.clone(),
                format!(
                    "the run would take about {} events, most of them for {} ({}), more than the limit of {}; change this field or duration_s, or raise the limit with --max-events",
                    count(ev),
                    top.what,
                    count(top.amount),
                    count(b.max_events as f64)
                ),
            ));
        }
        Ok(())
    }
}

fn largest(items: &[Item]) -> &Item {
    items
        .iter()
        .max_by(|a, b| a.amount.total_cmp(&b.amount))
        .expect("a cost has items")
}

/// Bytes in binary units, three significant digits.
pub fn bytes(v: f64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = v;
    let mut u = 0;
    while v >= 1024.0 && u < units.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} bytes")
    } else if v >= 100.0 || !v.is_finite() {
        format!("{v:.0} {}", units[u])
    } else {
        format!("{v:.1} {}", units[u])
    }
}

fn count(v: f64) -> String {
    if v < 1e4 {
        format!("{v:.0}")
    } else {
        format!("{v:.1e}")
    }
}

/// Bytes a packet of the pool holds (buffer capacity plus bookkeeping).
const PACKET_MEMORY: f64 = 1_700.0;
/// A slot of a queue's preallocated ring.
const QUEUE_SLOT: f64 = 64.0;
/// A node and its endpoint, without connections.
const NODE: f64 = 2_000.0;
/// A link direction: its queue's delay histogram (10 KB) and the port itself.
const PORT: f64 = 16_000.0;
/// A routing-table entry (address and port in a hash map, with its load factor).
const ROUTE_ENTRY: f64 = 40.0;
/// A queue-length sample: time, packets and bytes (16 bytes), kept until the run ends and
/// written out; growth of the vector doubles it at worst.
const SAMPLE: f64 = 32.0;
/// Trace records per data segment: its send, an ACK or RTT sample, and under loss the
/// duplicate ACKs and recovery events (measured runs show 0.9 to 2 records per segment).
const RECORDS_PER_SEGMENT: f64 = 3.0;
/// Events per packet and hop: arrival, end of transmission; plus the host's input.
const EVENTS_PER_HOP: f64 = 2.0;
/// Host events per data segment beyond its hops: application wakeups and timers (delayed
/// ACK, retransmission).
const HOST_EVENTS_PER_SEGMENT: f64 = 2.0;

impl Scenario {
    /// The predicted memory and events of a run of this (resolved) scenario. Each flow is
    /// first bounded on its own (by the kind of its application), then flows that share a link share its
    /// capacity; then come the cross-traffic sources, the queue-length samples, the queues,
    /// the routing tables and the link directions.
    pub fn predict_cost(&self, r: &Resolved) -> Cost {
        let mut cost = Cost::default();
        let t_run = self.duration_s;
        let graph = Graph::new(r);
        // Pass 1: what each flow could send on its own, on the ports of its path.
        let bounds: Vec<FlowBound> = r
            .flows
            .iter()
            .map(|f| flow_bound(r, &graph, f, t_run))
            .collect();
        // Per link direction (2 li for a->b, 2 li + 1 for b->a): data bytes offered, and
        // the bytes it can carry over the run.
        let n_ports = r.links.len() * 2;
        let mut offered = vec![0.0f64; n_ports];
        for b in &bounds {
            for &port in &b.ports {
                offered[port] += b.alone * b.packet_bytes;
            }
        }
        let capacity: Vec<f64> = (0..n_ports)
            .map(|p| r.links[p / 2].params.rate_bps * t_run / 8.0)
            .collect();
        // Pass 2: flows that share a link share its capacity.
        let carried: Vec<f64> = bounds
            .iter()
            .map(|b| b.carried(&offered, &capacity))
            .collect();
        self.flow_items(r, &bounds, &carried, &mut cost);
        let mut cross_packets = 0.0;
        for (ci, c) in self.cross.iter().enumerate() {
            let (packets, events) = cross_events(r, &graph, &capacity, t_run, ci, c);
            cross_packets += packets;
            cost.events.push(events);
        }
        if self.output.queues {
            self.sample_items(n_ports, &mut cost);
        }
        cost.memory.push(queue_memory(r, cross_packets));
        cost.memory.push(routing_memory(r, topology_field(self)));
        cost.memory.push(Item {
            field: "link".into(),
            what: "link directions (queue statistics, serializers)".into(),
            amount: n_ports as f64 * PORT,
        });
        cost
    }

    /// What the flows cost, given the packets each one carries after sharing: their
    /// segments' and ACKs' events, trace records, socket buffers and request latencies.
    fn flow_items(&self, r: &Resolved, bounds: &[FlowBound], carried: &[f64], cost: &mut Cost) {
        let mut data_total = 0.0;
        let mut data_hops = 0.0;
        for (b, &p) in bounds.iter().zip(carried) {
            data_total += p;
            // Data one way, at most as many ACKs the other: each crosses every hop.
            data_hops += 2.0 * p * (b.ports.len() as f64 + 1.0)
                + p * HOST_EVENTS_PER_SEGMENT / EVENTS_PER_HOP;
            let records = if self.output.trace && b.clocking == Clocking::Tcp {
                p * RECORDS_PER_SEGMENT
            } else {
                0.0
            };
            cost.trace_records.push(records);
        }
        if r.flows.is_empty() {
            return;
        }
        cost.events.push(Item {
            field: flows_field(r),
            what: "TCP segments and ACKs".into(),
            amount: data_hops * EVENTS_PER_HOP,
        });
        if self.output.trace {
            cost.memory.push(Item {
                field: "output.trace".into(),
                what: "the sender trace records of every flow".into(),
                amount: cost.trace_records.iter().sum::<f64>()
                    * std::mem::size_of::<ackclock_tcp::TraceEvent>() as f64
                    * 2.0,
            });
        }
        cost.memory.push(socket_buffer_memory(r));
        if let Some(latencies) = latency_memory(r, data_total) {
            cost.memory.push(latencies);
        }
    }

    /// Queue-length samples: every link direction, for the whole run.
    fn sample_items(&self, n_ports: usize, cost: &mut Cost) {
        let samples = self.duration_s / (self.output.sample_ms / 1000.0) + 1.0;
        cost.events.push(Item {
            field: "output.sample_ms".into(),
            what: "queue-length samples".into(),
            amount: samples,
        });
        cost.memory.push(Item {
            field: "output.sample_ms".into(),
            what: format!("queue-length samples of {n_ports} link directions"),
            amount: samples * n_ports as f64 * SAMPLE,
        });
    }
}

/// The socket buffers of both ends of every flow (there is at least one), at the field of
/// the flow with the largest window.
fn socket_buffer_memory(r: &Resolved) -> Item {
    let buffers: f64 = r
        .flows
        .iter()
        .map(|f| {
            (f.sender.send_buffer_bytes
                + f.sender.recv_buffer_bytes
                + f.receiver.send_buffer_bytes
                + f.receiver.recv_buffer_bytes) as f64
        })
        .sum();
    let biggest = r
        .flows
        .iter()
        .max_by_key(|f| f.sender.send_buffer_bytes + f.receiver.recv_buffer_bytes)
        .expect("flows");
    Item {
        field: format!("{}.tcp_overrides", biggest.field),
        what: "socket buffers".into(),
        amount: buffers,
    }
}

/// The latency kept per request of the request-response flows (no more requests than the
/// `data_total` packets of all flows), if there are any.
fn latency_memory(r: &Resolved, data_total: f64) -> Option<Item> {
    let latencies: f64 = r
        .flows
        .iter()
        .map(|f| match f.app {
            AppSpec::RequestResponse { count, .. } => f64::from(count).min(data_total),
            _ => 0.0,
        })
        .sum();
    (latencies > 0.0).then(|| Item {
        field: flows_field(r),
        what: "request latencies".into(),
        amount: latencies * 16.0,
    })
}

/// The fraction of the time a cross-traffic source of this kind sends.
fn on_fraction(c: &CrossSpec) -> f64 {
    match c.kind {
        CrossKindName::OnOff => {
            let (a, b) = (c.mean_on_ms.unwrap_or(1.0), c.mean_off_ms.unwrap_or(1.0));
            a / (a + b)
        }
        CrossKindName::Poisson | CrossKindName::Cbr => 1.0,
    }
}

/// Cross-traffic source `ci`: the packets it generates, and their events, each crossing its
/// path (or dropped at the first queue that cannot keep up).
fn cross_events(
    r: &Resolved,
    graph: &Graph,
    capacity: &[f64],
    t_run: f64,
    ci: usize,
    c: &CrossSpec,
) -> (f64, Item) {
    let stop = c.stop_s.unwrap_or(t_run).min(t_run);
    let n =
        c.rate_bps * on_fraction(c) * (stop - c.start_s).max(0.0) / (8.0 * c.packet_bytes as f64);
    let ports = directed_path(r, graph, &c.from, &c.to);
    let carried = ports
        .first()
        .map_or(0.0, |&p| n.min(capacity[p] / c.packet_bytes as f64));
    let events = Item {
        field: format!("cross[{ci}].rate_bps"),
        what: format!("cross[{ci}]'s packets"),
        amount: 2.0 * n + carried * ports.len() as f64 * EVENTS_PER_HOP,
    };
    (n, events)
}

/// Queues: preallocated rings, and the packets they can hold (no more than exist: the
/// flows' windows both ways and the `cross_packets`).
fn queue_memory(r: &Resolved, cross_packets: f64) -> Item {
    let mut slots = 0.0;
    let mut room = 0.0;
    for l in &r.links {
        for q in [&l.params.queue_ab, &l.params.queue_ba] {
            let limit = queue_limit(q.as_ref().or(l.params.queue.as_ref()));
            slots += limit.min((1u64 << 20) as f64);
            room += limit;
        }
    }
    let in_flight: f64 = r
        .flows
        .iter()
        .map(|f| 2.0 * (f.sender.send_buffer_bytes as f64 / f64::from(f.sender.mss) + 4.0))
        .sum::<f64>()
        + cross_packets;
    Item {
        field: "link".into(),
        what: "queued packets and queue rings".into(),
        amount: room.min(in_flight) * PACKET_MEMORY + slots * QUEUE_SLOT,
    }
}

/// Routes: every node with more than one link keeps one entry per host; and the nodes
/// themselves. `field` is where the nodes are written.
fn routing_memory(r: &Resolved, field: String) -> Item {
    let hosts = r.nodes.iter().filter(|n| n.kind == NodeKind::Host).count() as f64;
    let mut degree = vec![0usize; r.nodes.len()];
    for l in &r.links {
        for name in [&l.a, &l.b] {
            if let Some(i) = r.index_of(name) {
                degree[i] += 1;
            }
        }
    }
    let branching = degree.iter().filter(|&&d| d > 1).count() as f64;
    Item {
        field,
        what: "routing tables".into(),
        amount: branching * hosts * ROUTE_ENTRY + r.nodes.len() as f64 * NODE,
    }
}

/// The ports (2 x link + direction) of the path from `from` to `to`.
fn directed_path(r: &Resolved, graph: &Graph, from: &str, to: &str) -> Vec<usize> {
    let (Some(a), Some(b)) = (r.index_of(from), r.index_of(to)) else {
        return Vec::new();
    };
    let Some(links) = graph.path(a, b) else {
        return Vec::new();
    };
    let mut at = from;
    links
        .into_iter()
        .map(|li| {
            let l = &r.links[li];
            if l.a == at {
                at = &l.b;
                2 * li
            } else {
                at = &l.a;
                2 * li + 1
            }
        })
        .collect()
}

/// The rate of the slowest link of `ports` (infinite for an empty path).
fn path_rate(r: &Resolved, ports: &[usize]) -> f64 {
    ports
        .iter()
        .map(|&p| r.links[p / 2].params.rate_bps)
        .fold(f64::INFINITY, f64::min)
}

/// How sharing its path bounds a flow's packets, by the kind of its application.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Clocking {
    /// TCP is clocked by what gets through: its share of the path scales its whole bound.
    Tcp,
    /// A datagram stream is not: a storm's copies cost their events up to the queue that
    /// drops them, so it keeps its whole bound.
    Datagram,
    /// An RPC or DNS client: at most `max_tx` transmissions per response its share carries,
    /// plus `given_up`, the transmissions of requests given up.
    Rpc { max_tx: f64, given_up: f64 },
}

impl Clocking {
    /// The packets of a flow that could send `alone` on its own and gets `share` of the
    /// capacity of its path.
    fn packets(self, alone: f64, share: f64) -> f64 {
        match self {
            Clocking::Tcp => alone * share,
            Clocking::Datagram => alone,
            Clocking::Rpc { max_tx, given_up } => alone.min(max_tx * alone * share + given_up),
        }
    }
}

/// A flow on its own: the ports its larger packets cross (an RPC's responses come back from
/// `to`), their size in IP bytes, how many packets it could send, and how sharing bounds it.
struct FlowBound {
    ports: Vec<usize>,
    packet_bytes: f64,
    alone: f64,
    clocking: Clocking,
}

impl FlowBound {
    /// The packets of this flow once it shares the links of its path: its share is the
    /// least, over its ports, of the capacity over the bytes `offered` there.
    fn carried(&self, offered: &[f64], capacity: &[f64]) -> f64 {
        let share = self
            .ports
            .iter()
            .map(|&p| (capacity[p] / offered[p].max(1.0)).min(1.0))
            .fold(1.0f64, f64::min);
        self.clocking.packets(self.alone, share)
    }
}

/// A flow's bound on its own, by the kind of its application.
fn flow_bound(r: &Resolved, graph: &Graph, f: &FlowDef, t_run: f64) -> FlowBound {
    let active = (t_run - f.start_s).max(0.0);
    match &f.app {
        AppSpec::Rpc(spec) => rpc_bound(r, graph, f, spec, &RpcDefaults::of(false), active),
        AppSpec::Dns(spec) => rpc_bound(r, graph, f, spec, &RpcDefaults::of(true), active),
        AppSpec::DatagramStream(st) => stream_bound(r, graph, f, st, active),
        AppSpec::Bulk { .. } | AppSpec::RequestResponse { .. } | AppSpec::Echo { .. } => {
            tcp_bound(r, graph, f, active)
        }
    }
}

/// A TCP flow, `active` seconds of the run: what its application asks, what the slowest
/// link of its path carries, a window per round trip, and what the CPU models of its hosts
/// let through; plus the handshake and the close.
fn tcp_bound(r: &Resolved, graph: &Graph, f: &FlowDef, active: f64) -> FlowBound {
    let ports = directed_path(r, graph, &f.from, &f.to);
    let seg = f64::from(f.sender.mss) + 40.0;
    let by_rate = path_rate(r, &ports) * active / (8.0 * seg);
    // A window's worth per round trip: the round trip is at least the propagation delay
    // both ways and a segment's and an ACK's transmission on every hop.
    let rtt: f64 = ports
        .iter()
        .map(|&p| {
            let l = &r.links[p / 2].params;
            2.0 * l.delay_ms / 1000.0 + 8.0 * (seg + 40.0) / l.rate_bps
        })
        .sum();
    let window = f.sender.send_buffer_bytes.min(f.receiver.recv_buffer_bytes) as f64;
    let by_window = (window / seg).ceil().max(1.0) * active / rtt;
    // A host with a processing-cost model handles one packet at a time.
    let cpu = cpu_per_packet(r, &f.from, seg, true).max(cpu_per_packet(r, &f.to, seg, false));
    let by_cpu = if cpu > 0.0 {
        active / cpu
    } else {
        f64::INFINITY
    };
    FlowBound {
        ports,
        packet_bytes: seg,
        alone: app_segments(f).min(by_rate).min(by_window).min(by_cpu) + 3.0,
        clocking: Clocking::Tcp,
    }
}

/// Seconds the processing-cost model of host `name` takes to send (`tx`) or receive a
/// packet of `seg` bytes; 0 without a model.
fn cpu_per_packet(r: &Resolved, name: &str, seg: f64, tx: bool) -> f64 {
    r.node(name).and_then(|n| n.cpu).map_or(0.0, |c| {
        if tx {
            c.tx_packet_us * 1e-6 + seg * c.tx_byte_ns * 1e-9
        } else {
            c.rx_packet_us * 1e-6 + seg * c.rx_byte_ns * 1e-9
        }
    })
}

/// The defaults of an RPC or DNS client's fields (as [`RpcSpec`] documents them).
struct RpcDefaults {
    request_bytes: f64,
    response_bytes: f64,
    outstanding: f64,
    fixed_timer: bool,
    max_transmissions: f64,
}

impl RpcDefaults {
    /// The defaults of `kind = "rpc"` (NFS-like: four requests outstanding, a fixed timer)
    /// or `"dns"` (one query outstanding, an adaptive timer): read from the client's own
    /// configuration presets, which the scenario's application is built from, so that the
    /// prediction and the run never disagree on them.
    fn of(dns: bool) -> RpcDefaults {
        use ackclock_dgram::rpc::{RpcClientConfig, Timer};
        let nowhere = std::net::SocketAddrV4::new(std::net::Ipv4Addr::UNSPECIFIED, 0);
        let c = if dns {
            RpcClientConfig::dns(nowhere)
        } else {
            RpcClientConfig::nfs(nowhere)
        };
        RpcDefaults {
            request_bytes: c.request_bytes as f64,
            response_bytes: c.response_bytes as f64,
            outstanding: c.outstanding as f64,
            fixed_timer: matches!(c.timer, Timer::Fixed(_)),
            max_transmissions: f64::from(c.max_transmissions),
        }
    }
}

/// An RPC or DNS client, `active` seconds of the run; its bound is on its responses, which
/// come back from `to`. A slot transmits at most once per round trip or per timeout,
/// whichever is shorter (a response frees it for the next request, an expiry sends the
/// request again), no faster than the forward path carries requests, and no more than its
/// requests' transmissions.
fn rpc_bound(
    r: &Resolved,
    graph: &Graph,
    f: &FlowDef,
    spec: &RpcSpec,
    d: &RpcDefaults,
    active: f64,
) -> FlowBound {
    let req = spec.request_bytes.unwrap_or(d.request_bytes) + 28.0;
    let resp = spec.response_bytes.unwrap_or(d.response_bytes) + 28.0;
    let outstanding = spec.outstanding.unwrap_or(d.outstanding);
    let fixed = spec.timer.map_or(d.fixed_timer, |t| t == TimerName::Fixed);
    // The adaptive timer's floor is 200 ms (ackclock_dgram::rpc::rpc_rtt_config).
    let timeout = if fixed {
        spec.timeout_ms.unwrap_or(700.0) / 1000.0
    } else {
        0.2
    };
    let forward = directed_path(r, graph, &f.from, &f.to);
    let back = directed_path(r, graph, &f.to, &f.from);
    let rtt: f64 = forward
        .iter()
        .map(|&p| {
            let l = &r.links[p / 2].params;
            l.delay_ms / 1000.0 + 8.0 * req / l.rate_bps
        })
        .chain(back.iter().map(|&p| {
            let l = &r.links[p / 2].params;
            l.delay_ms / 1000.0 + 8.0 * resp / l.rate_bps
        }))
        .sum();
    let gap = rtt.min(timeout).max(1e-9);
    let by_slots = outstanding * active / gap;
    let by_rate = path_rate(r, &forward) * active / (8.0 * req);
    let max_tx = spec.max_transmissions.unwrap_or(d.max_transmissions);
    let by_count = spec.requests.map_or(f64::INFINITY, |n| n * max_tx);
    // With the capacity share of pass 2: each response that gets through was asked for at
    // most `max_tx` times, and each slot can also spend its time on requests that are given
    // up, one transmission per timeout.
    let given_up = outstanding * active / timeout.max(1e-9);
    FlowBound {
        ports: back,
        packet_bytes: resp,
        alone: by_slots.min(by_rate).min(by_count) + 3.0,
        clocking: Clocking::Rpc { max_tx, given_up },
    }
}

/// A datagram stream, `active` seconds of the run: at most twice the path's rate (TFRC and
/// rate AIMD are limited to twice what their receiver saw) or its fixed rate, and no more
/// than its bytes.
fn stream_bound(
    r: &Resolved,
    graph: &Graph,
    f: &FlowDef,
    st: &StreamSpec,
    active: f64,
) -> FlowBound {
    let pkt = st.packet_bytes.unwrap_or(1000.0) + 28.0;
    let ports = directed_path(r, graph, &f.from, &f.to);
    let rate = match st.rate_control {
        Some(RateControlName::None) => st.rate_bps.unwrap_or(1e6),
        _ => 2.0 * path_rate(r, &ports),
    };
    let by_rate = rate * active / (8.0 * pkt);
    let by_bytes = st
        .bytes
        .map_or(f64::INFINITY, |b| (b / (pkt - 28.0)).ceil());
    FlowBound {
        ports,
        packet_bytes: pkt,
        alone: by_rate.min(by_bytes) + 3.0,
        clocking: Clocking::Datagram,
    }
}

/// Data segments the application asks for (unbounded: infinity).
fn app_segments(f: &FlowDef) -> f64 {
    let mss = f64::from(f.sender.mss);
    match &f.app {
        AppSpec::Bulk { bytes: Some(b), .. } => (b / mss).ceil(),
        AppSpec::Bulk { .. } => f64::INFINITY,
        AppSpec::RequestResponse {
            request_bytes,
            response_bytes,
            count,
            ..
        } => {
            f64::from(*count)
                * ((*request_bytes as f64 / mss).ceil() + (*response_bytes as f64 / mss).ceil())
        }
        AppSpec::Echo { bytes } => 2.0 * (bytes / mss).ceil(),
        // Datagram applications: one packet each way per request, or one per stream packet;
        // bounded by their count or bytes, otherwise by the run (the link rates bound it).
        AppSpec::Rpc(r) | AppSpec::Dns(r) => r.requests.map_or(f64::INFINITY, |n| 2.0 * n),
        AppSpec::DatagramStream(st) => st.bytes.map_or(f64::INFINITY, |b| {
            (b / st.packet_bytes.unwrap_or(1000.0)).ceil()
        }),
    }
}

fn queue_limit(q: Option<&QdiscConfig>) -> f64 {
    let (pkts, bytes) = match q {
        None => (Some(100), None),
        Some(q) => q.limits(),
    };
    let by_bytes = bytes.map_or(f64::INFINITY, |b| b as f64 / 40.0);
    pkts.map_or(f64::INFINITY, |p| p as f64).min(by_bytes)
}

/// Where the flows are written: a dumbbell's `flows`, or the `[[flow]]` entries.
fn flows_field(r: &Resolved) -> String {
    if r.flows.iter().any(|f| f.field == "topology.flows") {
        "topology.flows".into()
    } else {
        "flow".into()
    }
}

fn topology_field(s: &Scenario) -> String {
    use crate::scenario::Topology;
    match &s.topology {
        Some(Topology::Dumbbell { .. }) => "topology.pairs".into(),
        Some(Topology::Chain { .. }) => "topology.routers".into(),
        Some(Topology::ParkingLot { .. }) => "topology.hops".into(),
        None => "node".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_counts_read_as_a_person_writes_them() {
        assert_eq!(bytes(512.0), "512 bytes");
        assert_eq!(bytes(1536.0), "1.5 KiB");
        assert_eq!(bytes(37.3 * (1u64 << 30) as f64), "37.3 GiB");
        assert_eq!(count(1234.0), "1234");
        assert_eq!(count(1.3e11), "1.3e11");
    }
}
