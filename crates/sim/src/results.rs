//! What a run produced: per-flow and per-link summaries (the summary table and
//! `summary.json`), and the time series behind the plots and CSV files.

use crate::build::Simulation;
use crate::net::NodeId;
pub use ackclock_apps::{DatagramSummary, RpcSummary, StreamSummary};
use ackclock_tcp::{Stats, TraceEvent, TraceKind};
use ackclock_wire::{Duration, Instant};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// Static facts about a flow, known when the network is built.
#[derive(Clone, Debug)]
pub struct FlowInfo {
    /// The flow's name: as given, `flow<i>` or `pair<i>`.
    pub name: String,
    /// The host the flow starts at: its sender or client.
    pub from: NodeId,
    /// The host it goes to: its receiver or server.
    pub to: NodeId,
    /// The index of the sender or client in `from`'s [`Host::apps`](crate::net::Host::apps).
    pub send_app: usize,
    /// The index of the receiver or server in `to`'s [`Host::apps`](crate::net::Host::apps).
    pub recv_app: usize,
    /// The index of the sender's trace in [`Network::traced`](crate::net::Network::traced);
    /// `None` when the scenario's `output.trace` is off.
    pub trace: Option<usize>,
    /// When the flow starts.
    pub start: Instant,
    /// The sending end's configured MSS, in bytes.
    pub mss: u16,
    /// Left empty: [`build()`](crate::build()) does not fill it in.
    pub preset: String,
    /// Whether the client counts what the flow delivered (the responses it read: RPC,
    /// request/response, echo) rather than the receiver (a bulk transfer's sink, a
    /// datagram stream's receiver).
    pub client_counts: bool,
}

/// One flow's results: an entry of `summary.json`'s `flows` and a row of the summary table.
/// The TCP figures are those of the flow's `from` end (the sender, or the client of a
/// request-response or echo flow), with the receiving end's where a field says so.
#[derive(Clone, Debug, Serialize)]
pub struct FlowSummary {
    /// The flow's name: as given, `flow<i>` or `pair<i>`.
    pub name: String,
    /// The name of the host the flow starts at (sender or client).
    pub from: String,
    /// The name of the host it goes to (receiver or server).
    pub to: String,
    /// When the flow started, in seconds from the start of the run.
    pub start_s: f64,
    /// When the application that counts the flow's bytes finished (the receiver saw the end
    /// of the stream; a client read its last response), in seconds from the start of the
    /// run; `None` if it had not by the end of the run.
    pub completed_s: Option<f64>,
    /// Application bytes delivered: what the receiver read, or for request-response, echo,
    /// RPC and DNS flows what the client read (the responses).
    pub bytes_delivered: u64,
    /// Delivered bytes over the flow's active time (start to completion or end of run), in
    /// bits per second; 0 when that time is zero.
    pub goodput_bps: f64,
    /// Segments with data sent, retransmissions and zero-window probes included.
    pub segments_sent: u64,
    /// Segments with data sent again (by timeout, fast retransmit or recovery).
    pub retransmitted_segments: u64,
    /// Retransmissions found needless afterwards (timestamps showed the original arrived).
    pub spurious_retransmits: u64,
    /// Retransmission timer expirations, in the handshake too.
    pub timeouts: u64,
    /// Fast retransmits: times the duplicate-ACK threshold was reached (RFC 5681 §3.2).
    pub fast_retransmits: u64,
    /// ACKs the sender received carrying a D-SACK block (RFC 2883): the receiver got some
    /// data twice. RACK grows its reordering window on them (RFC 8985 §6.2 step 4).
    pub dsacks_in: u64,
    /// Tail loss probes sent (RFC 8985 §7.3); 0 unless `loss_detection = "rack-tlp"`.
    pub tlp_probes: u64,
    /// Probes that repaired a loss (RFC 8985 §7.4): a tail loss the RTO would otherwise
    /// have found.
    pub tlp_recoveries: u64,
    /// Expirations of RACK's reordering timer (RFC 8985 §6.2 step 5): losses RACK found
    /// by time, when no later ACK came to reveal them.
    pub rack_reorder_timeouts: u64,
    /// Timeouts found spurious: the first ACK after one echoed a timestamp older than the
    /// retransmission (Eifel detection, RFC 3522; counted whenever timestamps are on), F-RTO
    /// found it (RFC 5682 §2.1, with `frto = true`) or D-SACKs showed every resent segment
    /// received twice (RFC 3708, with `undo = true`).
    pub spurious_rtos: u64,
    /// Fast recoveries whose every retransmission a D-SACK showed received twice (RFC 3708
    /// §3); counted with `undo = true`.
    pub spurious_recoveries: u64,
    /// Window reductions undone as needless (RFC 3708 for a recovery, RFC 4015's response
    /// for a timeout); 0 unless `undo` or `frto` is on.
    pub undos: u64,
    /// Mean of the RTT samples in the sender's trace, in milliseconds; `None` without a
    /// sample, and always when `output.trace` is off.
    pub rtt_mean_ms: Option<f64>,
    /// 99th percentile of the same RTT samples (the sorted sample at index
    /// round(0.99 (n - 1))), in milliseconds.
    pub rtt_p99_ms: Option<f64>,
    /// The congestion window at the end of the run, in bytes, without fast-recovery
    /// inflation (`u32::MAX` without congestion control; 0 without a TCP connection).
    pub final_cwnd_bytes: u32,
    /// Segments header prediction took on a fast path (pure ACKs for new data, in-order
    /// data), at both ends.
    pub hp_hits: u64,
    /// Segments that took the general input path while header prediction was enabled, at
    /// both ends.
    pub hp_misses: u64,
    /// Both ends agreed on ECN (RFC 3168).
    pub ecn: bool,
    /// Window reductions the sender made for the receiver's ECE (marks echoed).
    pub ecn_reductions: u64,
    /// Data segments the receiver got marked CE.
    pub ce_marks_received: u64,
    /// A datagram flow's figures (RPC, DNS-like queries, streams); the TCP fields above
    /// are zero for such flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub datagram: Option<DatagramSummary>,
}

/// One link direction's results: an entry of `summary.json`'s `links` and, when it sent a
/// packet or dropped one as too long, a row of the summary's link table.
#[derive(Clone, Debug, Serialize)]
pub struct LinkSummary {
    /// `<from>-<to>`: the names of the nodes it joins, in its direction.
    pub name: String,
    /// Its serialization rate, in bits per second.
    pub rate_bps: u64,
    /// The fraction of the run its serializer was busy (framing included), at most 1.
    pub utilization: f64,
    /// Packets whose transmission started (those lost on the wire included).
    pub packets: u64,
    /// IP bytes of those packets.
    pub bytes: u64,
    /// Packets its queue discipline dropped, for any reason (the sum of the next two).
    pub queue_drops: u64,
    /// Drops at a full queue: a packet or byte limit reached, and the random-drop gateway's
    /// victims.
    pub queue_drops_overflow: u64,
    /// Drops the discipline chose before its limit: RED's early and forced drops, Early
    /// Random Drop's, CoDel's.
    pub queue_drops_early: u64,
    /// Packets marked CE instead of dropped (RFC 3168).
    pub queue_marks: u64,
    /// Packets the impairments lost on the wire.
    pub lost_on_wire: u64,
    /// Packets delivered with a bit flipped by the impairments.
    pub corrupted: u64,
    /// Packets longer than the link's `mtu_bytes`, dropped (the simulator does not fragment).
    pub mtu_drops: u64,
    /// Mean time a packet waited in the queue, in milliseconds; `None` when no packet left
    /// the queue.
    pub queue_delay_mean_ms: Option<f64>,
    /// 99th percentile of the queueing delay (within about 3 %), in milliseconds.
    pub queue_delay_p99_ms: Option<f64>,
    /// Most packets ever queued at once.
    pub max_queue_pkts: u64,
}

/// CPU time of a host with a processing-cost model (seed 000, Jul 1988), for utilization and
/// service-demand figures.
#[derive(Clone, Debug, Serialize)]
pub struct HostSummary {
    /// The host's name.
    pub name: String,
    /// CPU time spent on packets and application writes.
    pub cpu_busy_s: f64,
    /// cpu_busy_s over the run's duration.
    pub cpu_utilization: f64,
}

/// Everything deterministic about a run: what `summary.json` holds, and the summary table.
#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    /// The scenario's `name`, if it has one.
    pub scenario: Option<String>,
    /// The run's seed.
    pub seed: u64,
    /// The simulated seconds the run covered: the scenario's `duration_s`.
    pub duration_s: f64,
    /// Every flow, in the order of the resolved flows (a dumbbell's pair flows first, then
    /// the `[[flow]]` entries).
    pub flows: Vec<FlowSummary>,
    /// Every link direction, in port order: each link's a-to-b direction, then its b-to-a.
    pub links: Vec<LinkSummary>,
    /// Jain's fairness index over the flows' goodputs (1 = equal shares); `None` without
    /// flows or when every goodput is 0.
    pub jain_fairness: Option<f64>,
    /// Events the run handled.
    pub events: u64,
    /// Hosts with a CPU model (none unless the scenario gives a node `cpu`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostSummary>,
}

/// Samples of one link direction, in time order ([`crate::net::PortSample`]).
pub type QueueSeries = Vec<crate::net::PortSample>;

/// The summary plus the series for plots and CSV.
pub struct RunResult {
    /// Everything deterministic about the run (written to summary.json).
    pub summary: RunSummary,
    /// Wall-clock time the run took (not in summary.json, which must be reproducible).
    pub wall_s: f64,
    /// Sender-side trace events per flow (empty when tracing is off).
    pub traces: Vec<Vec<TraceEvent>>,
    /// (port name, its samples: queue length and running totals, [`crate::net::PortSample`]).
    pub queues: Vec<(String, QueueSeries)>,
    /// The pcap files written, one per captured interface (file names in the output
    /// directory).
    pub captures: Vec<String>,
}

/// Jain's index: (sum x)^2 / (n * sum x^2), from 1/n (one gets all) to 1 (equal shares);
/// `None` for no values or when every value is 0.
pub fn jain(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        return None;
    }
    Some(s * s / (xs.len() as f64 * s2))
}

fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    Some(sorted[i.min(sorted.len() - 1)])
}

/// Every port's summary, and the queue-length series of those that sampled one.
fn link_summaries(
    net: &mut crate::net::Network,
    dur: f64,
) -> (Vec<LinkSummary>, Vec<(String, QueueSeries)>) {
    let mut links = Vec::new();
    let mut queues = Vec::new();
    for (i, p) in net.ports.iter_mut().enumerate() {
        let q = p.qdisc.stats();
        let d = net.drops[i];
        links.push(LinkSummary {
            name: p.name.clone(),
            rate_bps: p.link.config().rate_bps,
            utilization: (p.link.stats().busy_ns as f64 / dur).min(1.0),
            packets: p.link.stats().packets,
            bytes: p.link.stats().ip_bytes,
            queue_drops: d.iter().sum(),
            queue_drops_overflow: d[0] + d[1],
            queue_drops_early: d[2] + d[3],
            queue_marks: q.marked,
            lost_on_wire: p.stats.lost_on_wire,
            corrupted: p.stats.corrupted,
            mtu_drops: p.stats.mtu_drops,
            queue_delay_mean_ms: q.mean_delay().map(|d| d.as_secs_f64() * 1000.0),
            queue_delay_p99_ms: q.p99_delay().map(|d| d.as_secs_f64() * 1000.0),
            max_queue_pkts: q.max_len_pkts as u64,
        });
        if let Some(s) = p.queue_series.take() {
            queues.push((p.name.clone(), s));
        }
    }
    (links, queues)
}

/// A run with at most this many links used lists them all in [`RunResult::table`].
pub const FEW_LINKS: usize = 6;

impl RunResult {
    pub(crate) fn collect(sim: &mut Simulation, wall: std::time::Duration) -> RunResult {
        let net = &mut sim.net;
        let end = net.now;
        // Statistics of connections the endpoints already removed.
        let mut reaped: Vec<(NodeId, ackclock_tcp::ConnId, Stats)> = Vec::new();
        for (i, n) in net.nodes.iter_mut().enumerate() {
            if let Some(h) = n.host.as_mut() {
                for (id, s) in h.ep.take_reaped() {
                    reaped.push((i, id, s));
                }
            }
        }
        let conn_stats = |net: &crate::net::Network, node: NodeId, app: usize| -> Option<Stats> {
            let h = net.nodes[node].host.as_ref()?;
            let id = h.apps[app].conn()?;
            h.ep.conn(id).map(|c| c.stats()).or_else(|| {
                reaped
                    .iter()
                    .find(|(n, i, _)| *n == node && *i == id)
                    .map(|(_, _, s)| s.clone())
            })
        };
        let mut flows = Vec::new();
        let mut traces = Vec::new();
        for f in &sim.flows {
            let h_to = net.nodes[f.to].host.as_ref().expect("host");
            let h_from = net.nodes[f.from].host.as_ref().expect("host");
            let datagram = h_from.apps[f.send_app]
                .datagram()
                .map(|d| d.merge(h_to.apps[f.recv_app].datagram()));
            // A request/response flow's delivered bytes are the responses its client read
            // (its server counts nothing: the requests are not the flow's product).
            let (delivered, completed) = if f.client_counts {
                let a = &h_from.apps[f.send_app];
                (a.bytes(), a.finished_at())
            } else {
                let a = &h_to.apps[f.recv_app];
                (a.bytes(), a.finished_at())
            };
            let active = completed.unwrap_or(end).saturating_since(f.start);
            let s = conn_stats(net, f.from, f.send_app).unwrap_or_default();
            let r = conn_stats(net, f.to, f.recv_app).unwrap_or_default();
            let events = f
                .trace
                .map(|t| std::mem::take(&mut net.traced[t].events))
                .unwrap_or_default();
            let mut rtts: Vec<f64> = events
                .iter()
                .filter_map(|e| match e.kind {
                    TraceKind::RttSample { rtt } => Some(rtt.as_secs_f64() * 1000.0),
                    _ => None,
                })
                .collect();
            rtts.sort_by(|a, b| a.total_cmp(b));
            let mean = (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64);
            flows.push(FlowSummary {
                name: f.name.clone(),
                from: net.nodes[f.from].name.clone(),
                to: net.nodes[f.to].name.clone(),
                start_s: f.start.as_nanos() as f64 / 1e9,
                completed_s: completed.map(|t| t.as_nanos() as f64 / 1e9),
                bytes_delivered: delivered,
                goodput_bps: if active > Duration::ZERO {
                    delivered as f64 * 8.0 / active.as_secs_f64()
                } else {
                    0.0
                },
                segments_sent: s.data_segs_out,
                retransmitted_segments: s.retransmitted_segs,
                spurious_retransmits: s.spurious_retransmits,
                timeouts: s.timeouts,
                fast_retransmits: s.fast_retransmits,
                dsacks_in: s.dsacks_in,
                tlp_probes: s.tlp_probes,
                tlp_recoveries: s.tlp_recoveries,
                rack_reorder_timeouts: s.rack_reorder_timeouts,
                spurious_rtos: s.spurious_rtos,
                spurious_recoveries: s.spurious_recoveries,
                undos: s.undos,
                rtt_mean_ms: mean,
                rtt_p99_ms: quantile(&rtts, 0.99),
                final_cwnd_bytes: s.cwnd_bytes,
                hp_hits: s.hp_ack_hits + s.hp_data_hits + r.hp_ack_hits + r.hp_data_hits,
                hp_misses: s.hp_misses + r.hp_misses,
                ecn: s.ecn_enabled,
                ecn_reductions: s.ecn_reductions,
                ce_marks_received: r.ce_segs_in,
                datagram,
            });
            traces.push(events);
        }
        let dur = end.saturating_since(Instant::ZERO).as_nanos().max(1) as f64;
        let (links, queues) = link_summaries(net, dur);
        let hosts = net
            .nodes
            .iter()
            .filter_map(|n| {
                let h = n.host.as_ref()?;
                h.cpu()?;
                Some(HostSummary {
                    name: n.name.clone(),
                    cpu_busy_s: h.cpu_busy_ns as f64 / 1e9,
                    cpu_utilization: (h.cpu_busy_ns as f64 / dur).min(1.0),
                })
            })
            .collect();
        let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_bps).collect();
        RunResult {
            summary: RunSummary {
                scenario: sim.scenario.name.clone(),
                seed: sim.scenario.seed,
                duration_s: dur / 1e9,
                jain_fairness: jain(&goodputs),
                flows,
                links,
                events: net.events_processed,
                hosts,
            },
            wall_s: wall.as_secs_f64(),
            traces,
            queues,
            captures: net.captures.iter().map(|c| c.file.clone()).collect(),
        }
    }

    /// What a user should not miss in a run that otherwise succeeded: flows that moved
    /// nothing (a timer below the path's round trip, a path that loses everything, a start
    /// too late). A run with RTO min, initial and max all at 1 us once moved 0 bytes and
    /// said nothing.
    pub fn warnings(&self) -> Vec<String> {
        let s = &self.summary;
        let mut w = Vec::new();
        for f in &s.flows {
            let idle = match &f.datagram {
                None => f.bytes_delivered == 0,
                Some(d) => {
                    d.rpc.as_ref().is_some_and(|r| r.completed == 0)
                        || d.stream.as_ref().is_some_and(|t| t.packets_received == 0)
                }
            };
            if !idle {
                continue;
            }
            let why = if f.datagram.is_some() {
                String::new()
            } else if f.timeouts > 0 && f.segments_sent == 0 {
                // No data segment ever left: the handshake itself timed out (the RTT figures
                // come from a trace, which may be off, so they say nothing here).
                format!(
                    ": {} retransmission timeouts and no data sent, the handshake never \
                     completed (is rto_initial_ms or rto_max_ms below the path's round trip?)",
                    f.timeouts
                )
            } else if f.timeouts > 0 {
                format!(": {} retransmission timeouts", f.timeouts)
            } else {
                String::new()
            };
            w.push(format!(
                "flow {} ({} -> {}) delivered nothing in {} s{why}",
                f.name, f.from, f.to, s.duration_s
            ));
        }
        w
    }

    /// The summary as an aligned text table: every flow, and the links that matter (see
    /// [`RunResult::table_with`]).
    pub fn table(&self) -> String {
        self.table_with(false)
    }

    /// The summary as an aligned text table: every flow; every link with `all_links` or
    /// when there are at most [`FEW_LINKS`], else the bottleneck (the busiest link, and any
    /// within 90% of its utilization) and every link that dropped a packet, with a line
    /// that counts the others and says how busy the busiest of them was.
    pub fn table_with(&self, all_links: bool) -> String {
        let s = &self.summary;
        let mut t = String::new();
        let _ = writeln!(
            t,
            "{:<12} {:>12} {:>10} {:>8} {:>6} {:>6} {:>9} {:>9}",
            "flow", "goodput", "bytes", "rexmt", "rto", "fr", "rtt ms", "rtt p99"
        );
        for f in s.flows.iter().filter(|f| f.datagram.is_none()) {
            let _ = writeln!(
                t,
                "{:<12} {:>12} {:>10} {:>8} {:>6} {:>6} {:>9} {:>9}",
                f.name,
                human_bps(f.goodput_bps),
                f.bytes_delivered,
                f.retransmitted_segments,
                f.timeouts,
                f.fast_retransmits,
                f.rtt_mean_ms.map_or("-".into(), |v| format!("{v:.1}")),
                f.rtt_p99_ms.map_or("-".into(), |v| format!("{v:.1}")),
            );
        }
        self.datagram_rows(&mut t);
        let _ = writeln!(
            t,
            "\n{:<20} {:>6} {:>10} {:>8} {:>10} {:>10}",
            "link", "util", "packets", "drops", "qdelay ms", "q p99 ms"
        );
        let used: Vec<&LinkSummary> = s
            .links
            .iter()
            .filter(|l| l.packets > 0 || l.mtu_drops > 0)
            .collect();
        let busiest = used.iter().map(|l| l.utilization).fold(0.0, f64::max);
        let drops = |l: &LinkSummary| l.queue_drops + l.lost_on_wire + l.mtu_drops;
        let is_bottleneck = |l: &LinkSummary| busiest > 0.0 && l.utilization >= 0.9 * busiest;
        let shown = |l: &LinkSummary| {
            all_links || used.len() <= FEW_LINKS || is_bottleneck(l) || drops(l) > 0
        };
        for l in used.iter().copied().filter(|l| shown(l)) {
            let _ = writeln!(
                t,
                "{:<20} {:>5.1}% {:>10} {:>8} {:>10} {:>10}{}",
                l.name,
                l.utilization * 100.0,
                l.packets,
                l.queue_drops + l.lost_on_wire + l.mtu_drops,
                l.queue_delay_mean_ms
                    .map_or("-".into(), |v| format!("{v:.2}")),
                l.queue_delay_p99_ms
                    .map_or("-".into(), |v| format!("{v:.2}")),
                if is_bottleneck(l) && used.len() > FEW_LINKS {
                    "  bottleneck"
                } else {
                    ""
                },
            );
        }
        let hidden: Vec<&&LinkSummary> = used.iter().filter(|l| !shown(l)).collect();
        if !hidden.is_empty() {
            let most = hidden.iter().map(|l| l.utilization).fold(0.0, f64::max);
            let _ = writeln!(
                t,
                "({} more links, none dropping, the busiest {:.1}% used; --all-links lists them)",
                hidden.len(),
                most * 100.0
            );
        }
        for l in s.links.iter().filter(|l| l.mtu_drops > 0) {
            let _ = writeln!(
                t,
                "\nwarning: link {} dropped {} packets longer than its mtu_bytes (the simulator \
                 does not fragment); give the hosts a smaller mss or the link a larger mtu_bytes",
                l.name, l.mtu_drops
            );
        }
        if let Some(j) = s.jain_fairness {
            let _ = writeln!(t, "\nJain's fairness index over flows: {j:.3}");
        }
        t
    }

    /// The datagram flows' rows: requests or packets instead of segments.
    fn datagram_rows(&self, t: &mut String) {
        let s = &self.summary;
        let rpcs: Vec<_> = s
            .flows
            .iter()
            .filter_map(|f| Some((f, f.datagram.as_ref()?.rpc.as_ref()?)))
            .collect();
        if !rpcs.is_empty() {
            let _ = writeln!(
                *t,
                "\n{:<12} {:>12} {:>9} {:>9} {:>7} {:>8} {:>6} {:>9} {:>9}",
                "rpc flow",
                "goodput",
                "issued",
                "done",
                "failed",
                "sent",
                "dup",
                "lat p50",
                "lat p99"
            );
            for (f, r) in rpcs {
                let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
                let _ = writeln!(
                    *t,
                    "{:<12} {:>12} {:>9} {:>9} {:>7} {:>8} {:>6} {:>9} {:>9}",
                    f.name,
                    human_bps(f.goodput_bps),
                    r.issued,
                    r.completed,
                    r.failed,
                    r.transmissions,
                    r.duplicate_responses,
                    ms(r.latency_p50_ms),
                    ms(r.latency_p99_ms),
                );
            }
        }
        let streams: Vec<_> = s
            .flows
            .iter()
            .filter_map(|f| {
                Some((
                    f,
                    f.datagram.as_ref()?,
                    f.datagram.as_ref()?.stream.as_ref()?,
                ))
            })
            .collect();
        if !streams.is_empty() {
            let _ = writeln!(
                *t,
                "\n{:<12} {:>12} {:>6} {:>9} {:>9} {:>7} {:>9} {:>12}",
                "stream", "goodput", "ctl", "sent", "received", "lost", "p", "final rate"
            );
            for (f, d, st) in streams {
                let _ = writeln!(
                    *t,
                    "{:<12} {:>12} {:>6} {:>9} {:>9} {:>7} {:>9.5} {:>12}",
                    f.name,
                    human_bps(f.goodput_bps),
                    d.rate_control,
                    st.packets_sent,
                    st.packets_received,
                    st.packets_lost,
                    st.loss_event_rate,
                    human_bps(st.final_rate_bps),
                );
            }
        }
    }

    /// Writes summary.json, one CSV per flow and two per link direction (its queue and its
    /// throughput) into `dir`; returns the CSV files' names.
    pub fn write_files(&self, dir: &Path) -> std::io::Result<Vec<String>> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(
            dir.join("summary.json"),
            serde_json::to_string_pretty(&self.summary).map_err(std::io::Error::other)?,
        )?;
        let mut written = Vec::new();
        let mut write = |name: String, text: String| -> std::io::Result<()> {
            std::fs::write(dir.join(&name), text)?;
            written.push(name);
            Ok(())
        };
        for (f, events) in self.summary.flows.iter().zip(&self.traces) {
            write(format!("flow-{}.csv", f.name), flow_csv(events))?;
            write(
                format!("throughput-{}.csv", f.name),
                throughput_csv(events, THROUGHPUT_BIN_S),
            )?;
        }
        for (name, series) in &self.queues {
            let mut out = String::from("time_s,queue_pkts,queue_bytes\n");
            for x in series {
                let _ = writeln!(
                    out,
                    "{:.6},{},{}",
                    x.at.as_nanos() as f64 / 1e9,
                    x.queue_pkts,
                    x.queue_bytes
                );
            }
            write(format!("queue-{name}.csv"), out)?;
            write(
                format!("link-{name}.csv"),
                link_csv(series, THROUGHPUT_BIN_S),
            )?;
        }
        Ok(written)
    }
}

/// A rate in bits per second as the summary table shows it: `1.50 Gb/s`, `12.30 Mb/s`,
/// `12.5 kb/s`, `800 b/s`.
pub fn human_bps(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.2} Gb/s", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.2} Mb/s", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} kb/s", v / 1e3)
    } else {
        format!("{v:.0} b/s")
    }
}

/// The bin of the per-flow throughput series, in seconds.
pub const THROUGHPUT_BIN_S: f64 = 0.1;

/// Formats an ssthresh: "inf" for the "no threshold yet" values (pandas reads it as a
/// float infinity), else the bytes.
fn ssthresh_text(v: u32) -> String {
    if v >= u32::MAX - 1 {
        "inf".into()
    } else {
        v.to_string()
    }
}

/// A link direction's throughput over time: the samples' running totals differenced over
/// bins of `bin_s` (cut at the first sample at or after each boundary, so a bin is exact
/// when the sampling period divides it and `interval_s` says its true width otherwise).
pub fn link_csv(series: &[crate::net::PortSample], bin_s: f64) -> String {
    let mut out = String::from("time_s,interval_s,sent_bytes,throughput_mbps,dropped_pkts\n");
    let Some(first) = series.first() else {
        return out;
    };
    let secs = |t: Instant| t.as_nanos() as f64 / 1e9;
    let mut from = *first;
    let mut boundary = secs(first.at) + bin_s;
    for x in &series[1..] {
        // 1 ns of slack: sample times are integer nanoseconds, boundaries floats.
        if secs(x.at) + 1e-9 < boundary {
            continue;
        }
        let dt = secs(x.at) - secs(from.at);
        let bytes = x.sent_bytes - from.sent_bytes;
        let _ = writeln!(
            out,
            "{:.6},{:.6},{bytes},{:.6},{}",
            secs(from.at),
            dt,
            bytes as f64 * 8.0 / dt / 1e6,
            x.dropped - from.dropped
        );
        from = *x;
        while boundary <= secs(x.at) + 1e-9 {
            boundary += bin_s;
        }
    }
    out
}

/// One row per trace event of a flow's sender. Every row carries the connection's state
/// variables; the columns that belong to one kind of event (`seq` and `len` of sends,
/// `ack` of ACKs, `dupacks`, `rtt_ms` of samples, `state` of state changes) are empty on
/// the others. Sequence numbers come absolute and relative to the ISN (`_rel`: the SYN is
/// 0 and the first data byte 1, as Wireshark shows them). docs/OUTPUTS.md lists the
/// columns.
pub fn flow_csv(events: &[ackclock_tcp::TraceEvent]) -> String {
    let mut out = String::from(
        "time_s,event,seq,seq_rel,len,ack,ack_rel,window_bytes,dupacks,rtt_ms,state,cwnd_bytes,\
         ssthresh_bytes,srtt_ms,rttvar_ms,rto_ms,flight_bytes,snd_una,snd_una_rel,snd_nxt,\
         snd_nxt_rel\n",
    );
    // The first event comes before SND.UNA moves past the SYN (the handshake's RTT
    // sample, or the SYN's timeout): its SND.UNA is the ISN.
    let isn = events.first().map_or(0, |e| e.snd_una.get());
    let rel = |v: u32| v.wrapping_sub(isn);
    for e in events {
        let mut window = None;
        let (name, seq, len, ack, dupacks, rtt, state) = match e.kind {
            TraceKind::Send {
                seq,
                len,
                retransmit,
            } => (
                if retransmit { "retransmit" } else { "send" },
                Some(seq.get()),
                Some(len),
                None,
                None,
                None,
                None,
            ),
            TraceKind::Ack { ack, window: w } => {
                window = Some(w);
                ("ack", None, None, Some(ack.get()), None, None, None)
            }
            // A SACK block: its left edge and its length.
            TraceKind::Sack { left, right } => (
                "sack",
                Some(left.get()),
                Some(right.since(left)),
                None,
                None,
                None,
                None,
            ),
            TraceKind::DupAck { count } => ("dupack", None, None, None, Some(count), None, None),
            TraceKind::FastRetransmit => ("fast_retransmit", None, None, None, None, None, None),
            TraceKind::RecoveryEnter => ("recovery_enter", None, None, None, None, None, None),
            TraceKind::PartialAck => ("partial_ack", None, None, None, None, None, None),
            TraceKind::RecoveryExit => ("recovery_exit", None, None, None, None, None, None),
            TraceKind::Timeout => ("timeout", None, None, None, None, None, None),
            TraceKind::RttSample { rtt } => ("rtt_sample", None, None, None, None, Some(rtt), None),
            TraceKind::StateChange { to } => {
                ("state", None, None, None, None, None, Some(to.name()))
            }
            TraceKind::SpuriousRetransmit => ("spurious", None, None, None, None, None, None),
            TraceKind::IdleRestart => ("idle_restart", None, None, None, None, None, None),
            TraceKind::EcnReduction => ("ecn_reduction", None, None, None, None, None, None),
            TraceKind::TailLossProbe => ("tail_loss_probe", None, None, None, None, None, None),
            TraceKind::TlpRecovery => ("tlp_recovery", None, None, None, None, None, None),
            TraceKind::RackReorderTimeout => {
                ("rack_reorder_timeout", None, None, None, None, None, None)
            }
            TraceKind::Undo => ("undo", None, None, None, None, None, None),
        };
        let opt = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
        let _ = writeln!(
            out,
            "{:.9},{name},{},{},{},{},{},{},{},{},{},{},{},{:.3},{:.3},{:.3},{},{},{},{},{}",
            e.time.as_nanos() as f64 / 1e9,
            opt(seq),
            opt(seq.map(rel)),
            opt(len),
            opt(ack),
            opt(ack.map(rel)),
            opt(window),
            opt(dupacks),
            rtt.map(|r| format!("{:.3}", r.as_secs_f64() * 1000.0))
                .unwrap_or_default(),
            state.unwrap_or_default(),
            e.cwnd,
            ssthresh_text(e.ssthresh),
            e.srtt.as_secs_f64() * 1000.0,
            e.rttvar.as_secs_f64() * 1000.0,
            e.rto.as_secs_f64() * 1000.0,
            e.flight,
            e.snd_una.get(),
            rel(e.snd_una.get()),
            e.snd_nxt.get(),
            rel(e.snd_nxt.get()),
        );
    }
    out
}

/// A flow's goodput over time: the bytes its receiver acknowledged (SND.UNA's advance,
/// seen by the sender) in consecutive bins of `bin_s` seconds, from the first event to
/// the last. docs/OUTPUTS.md lists the columns.
pub fn throughput_csv(events: &[ackclock_tcp::TraceEvent], bin_s: f64) -> String {
    let mut out = String::from("time_s,interval_s,acked_bytes,goodput_mbps\n");
    let (Some(first), Some(last)) = (events.first(), events.last()) else {
        return out;
    };
    let t0 = first.time.as_nanos() as f64 / 1e9;
    let t1 = last.time.as_nanos() as f64 / 1e9;
    let bins = (((t1 - t0) / bin_s).floor() as usize + 1).min(10_000_000);
    let mut acked = vec![0u64; bins];
    // The first event's SND.UNA is the ISN (see `flow_csv`): the SYN is not data.
    let mut una = first.snd_una + 1u32;
    for e in events {
        if e.snd_una > una {
            let t = e.time.as_nanos() as f64 / 1e9;
            let b = (((t - t0) / bin_s) as usize).min(bins - 1);
            acked[b] += u64::from(e.snd_una.since(una));
            una = e.snd_una;
        }
    }
    for (i, a) in acked.iter().enumerate() {
        let _ = writeln!(
            out,
            "{:.6},{bin_s},{a},{:.6}",
            t0 + i as f64 * bin_s,
            *a as f64 * 8.0 / bin_s / 1e6
        );
    }
    out
}
