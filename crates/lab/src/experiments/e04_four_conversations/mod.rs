//! Experiment 4: four conversations on one 230.4 kb/s link, after Jacobson and Karels,
//! "Congestion Avoidance and Control" (1988), Figs 7-12. Without congestion avoidance
//! (vanilla 4.3BSD) a third of what is sent is retransmitted, the link carries less useful
//! data and the conversations get very unequal shares; with it (Tahoe) almost nothing is
//! retransmitted and the link is full after 30 s; and senders whose receivers ACK only every
//! 5-7 packets (the 4.3BSD receiver) lose more and get less. Vanilla, Tahoe and Tahoe with
//! mixed receivers at 20 ms of round trip, the first two again at 100 ms, several seeds each.

use crate::claims::{Judge, Ours};
use crate::plots;
use crate::stats::{mean, uniform};
use crate::suite::{files, Experiment, Figure, Files, Params, Rendered, Table, Verdict};
use crate::text::Text;
use ackclock_sim::scenario::Topology;
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::TraceKind;
use ackclock_wire::{Duration, Instant};
use anyhow::{anyhow, Result};
use std::path::Path;

pub struct FourConversations;

/// Flows whose receivers follow the 4.3BSD ACK policy in the two mixed runs. A flow's share
/// depends on when it starts (the first runs alone for 3 s and keeps its full window), so
/// each position has the old receiver in one run and the new in the other, and the
/// comparison averages over both.
const OLD_RECEIVERS: [[usize; 2]; 2] = [[1, 3], [0, 2]];
/// Data bytes per packet on the link and packet size with headers.
const SEG: f64 = 512.0;
const PKT: f64 = 552.0;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Vanilla,
    Tahoe,
    /// Tahoe with 4.3BSD receivers on the flows of `OLD_RECEIVERS[i]`.
    Mixed(usize),
    /// The same, the receivers' delayed ACKs on the ticks of a 200 ms clock (4.3BSD's
    /// tcp_fasttimo) rather than 200 ms after the first unacknowledged segment.
    MixedTick(usize),
}

/// The configurations in plan order (each runs once per seed): kind, propagation round trip
/// (ms) and the table's label.
const GROUPS: [(Kind, f64, &str); 8] = [
    (Kind::Vanilla, 20.0, "vanilla 4.3BSD, 20 ms"),
    (Kind::Tahoe, 20.0, "Tahoe, 20 ms"),
    (
        Kind::Mixed(0),
        20.0,
        "Tahoe, 4.3BSD receivers on flows 2 and 4, 20 ms",
    ),
    (Kind::Vanilla, 100.0, "vanilla 4.3BSD, 100 ms"),
    (Kind::Tahoe, 100.0, "Tahoe, 100 ms"),
    (
        Kind::Mixed(1),
        20.0,
        "Tahoe, 4.3BSD receivers on flows 1 and 3, 20 ms",
    ),
    (
        Kind::MixedTick(0),
        20.0,
        "Tahoe, 4.3BSD receivers (200 ms clock) on flows 2 and 4, 20 ms",
    ),
    (
        Kind::MixedTick(1),
        20.0,
        "Tahoe, 4.3BSD receivers (200 ms clock) on flows 1 and 3, 20 ms",
    ),
];
/// Indices in [`GROUPS`].
const VANILLA: usize = 0;
const TAHOE: usize = 1;
const VANILLA_100: usize = 3;
const TAHOE_100: usize = 4;
/// The mixed-receiver groups, each with its index in [`OLD_RECEIVERS`]: delayed ACKs timed
/// from the first unacknowledged segment, and on the ticks of a 200 ms clock.
const MIXED: [(usize, usize); 2] = [(2, 0), (5, 1)];
const MIXED_TICK: [(usize, usize); 2] = [(6, 0), (7, 1)];
/// The groups whose first seed's run is plotted: vanilla, Tahoe, the first mixed group.
const PLOTTED: [usize; 3] = [VANILLA, TAHOE, MIXED[0].0];

/// The line's data rate (b/s): 512 of every 552 bytes on the bottleneck.
fn data_bps(base: &Scenario) -> Result<f64> {
    match &base.topology {
        Some(Topology::Dumbbell { bottleneck, .. }) => Ok(bottleneck.rate_bps * SEG / PKT),
        _ => Err(anyhow!("four_conversations.toml must use a dumbbell")),
    }
}

fn variant(base: &Scenario, kind: Kind, seed: u64, rtt_ms: f64) -> Scenario {
    let mut s = base.clone();
    s.seed = seed + 1;
    if let Some(Topology::Dumbbell {
        access, bottleneck, ..
    }) = &mut s.topology
    {
        // Propagation round trip = 4 access delays + 2 line delays.
        bottleneck.delay_ms = (rtt_ms - 4.0 * access.delay_ms) / 2.0;
    }
    for (i, f) in s.flow.iter_mut().enumerate() {
        f.start_s = 3.0 * i as f64 + 0.1 * uniform(seed + 1, i as u64);
        let tcp = if kind == Kind::Vanilla {
            "vanilla_4_3bsd"
        } else {
            "tahoe"
        };
        f.tcp = tcp.to_string();
        let old_receiver = match kind {
            Kind::Mixed(a) | Kind::MixedTick(a) => OLD_RECEIVERS[a].contains(&i),
            _ => false,
        };
        if old_receiver {
            // 4.3BSD receivers ACK when 35% of the window is filled or 200 ms pass: every
            // 5-7 packets (JK88).
            f.receiver_overrides.ack_every = Some(6);
            f.receiver_overrides.delayed_ack_ms = Some(200.0);
            if matches!(kind, Kind::MixedTick(_)) {
                f.receiver_overrides.delayed_ack_clock = Some(true);
            }
        }
    }
    s
}

/// The numbers of one run.
#[derive(Clone, Debug, Default)]
struct Stats {
    rexmit: f64,
    /// Bytes delivered, and the time to the last completion (or the run's end if a transfer
    /// did not finish).
    delivered: f64,
    end: f64,
    /// Bytes acknowledged between 30 s and `end`.
    acked_after30: f64,
    /// Per-flow throughput, bytes/s, over the flow's life (1 MB / its duration).
    tput: Vec<f64>,
    /// The same while all four run: from 5 s after the last start (its slow start, "the
    /// first 5 s are low") to the first completion, the interval of the paper's per-
    /// conversation rates. A flow's life rate depends on its start position (the first
    /// runs alone for 3 s and finishes while others still share), the windowed one does not.
    tput_all: Vec<f64>,
    loss_all: Vec<f64>,
    completed: usize,
}

impl Stats {
    /// Delivered / (data rate x time to the last completion, or the run).
    fn goodput(&self, data_bps: f64) -> f64 {
        self.delivered * 8.0 / (data_bps * self.end.max(1e-9))
    }

    /// Data acknowledged between 30 s and the last completion / data rate x that time.
    fn after30(&self, data_bps: f64) -> f64 {
        self.acked_after30 * 8.0 / (data_bps * (self.end - 30.0).max(1e-9))
    }

    /// The best conversation's rate over the worst's while all four run.
    fn spread(&self) -> f64 {
        let max = self.tput_all.iter().copied().fold(0.0, f64::max);
        let min = self.tput_all.iter().copied().fold(f64::INFINITY, f64::min);
        if min > 0.0 {
            max / min
        } else {
            f64::INFINITY
        }
    }
}

fn stats(r: &RunResult) -> Stats {
    let f = &r.summary.flows;
    let sent: u64 = f.iter().map(|x| x.segments_sent).sum();
    let rx: u64 = f.iter().map(|x| x.retransmitted_segments).sum();
    let delivered: u64 = f.iter().map(|x| x.bytes_delivered).sum();
    let completed = f.iter().filter(|x| x.completed_s.is_some()).count();
    let end = if completed == f.len() {
        f.iter().filter_map(|x| x.completed_s).fold(0.0, f64::max)
    } else {
        r.summary.duration_s
    };
    let (tput_all, loss_all) = all_running(r);
    Stats {
        tput_all,
        loss_all,
        rexmit: rx as f64 / sent.max(1) as f64,
        delivered: delivered as f64,
        end,
        acked_after30: acked_between(r, 30.0, end),
        tput: f.iter().map(|x| x.goodput_bps / 8.0).collect(),
        completed,
    }
}

/// Bytes acknowledged to all senders after `from_s` up to `to_s`.
fn acked_between(r: &RunResult, from_s: f64, to_s: f64) -> f64 {
    let t0 = Instant::ZERO + Duration::from_secs_f64(from_s);
    let t1 = Instant::ZERO + Duration::from_secs_f64(to_s);
    let mut acked = 0.0;
    for tr in &r.traces {
        let mut last = None;
        for e in tr {
            if let TraceKind::Ack { ack, .. } = e.kind {
                if e.time > t0 && e.time <= t1 {
                    if let Some(l) = last {
                        acked += f64::from(ackclock_tcp::SeqNum::since(ack, l));
                    }
                }
                last = Some(ack);
            }
        }
    }
    acked
}

/// Per flow, throughput (bytes/s) and retransmitted / sent while all four run (see
/// [`Stats::tput_all`]).
fn all_running(r: &RunResult) -> (Vec<f64>, Vec<f64>) {
    let f = &r.summary.flows;
    let last_start = f.iter().map(|x| x.start_s).fold(0.0, f64::max) + 5.0;
    let first_done = f
        .iter()
        .map(|x| x.completed_s.unwrap_or(r.summary.duration_s))
        .fold(f64::INFINITY, f64::min);
    let (w0, w1) = (
        Instant::ZERO + Duration::from_secs_f64(last_start),
        Instant::ZERO + Duration::from_secs_f64(first_done.max(last_start)),
    );
    let span = (first_done - last_start).max(1e-9);
    let mut tput_all = Vec::new();
    let mut loss_all = Vec::new();
    for tr in &r.traces {
        let (mut bytes, mut sent, mut rx, mut last) = (0.0, 0u64, 0u64, None);
        for e in tr {
            let inside = e.time > w0 && e.time <= w1;
            match e.kind {
                TraceKind::Ack { ack, .. } => {
                    if let (true, Some(l)) = (inside, last) {
                        bytes += f64::from(ackclock_tcp::SeqNum::since(ack, l));
                    }
                    last = Some(ack);
                }
                TraceKind::Send {
                    len, retransmit, ..
                } if len > 0 && inside => {
                    sent += 1;
                    rx += u64::from(retransmit);
                }
                _ => {}
            }
        }
        tput_all.push(bytes / span);
        loss_all.push(rx as f64 / sent.max(1) as f64);
    }
    (tput_all, loss_all)
}

/// One run: its numbers, and the whole result if it is plotted.
pub struct Run {
    stats: Stats,
    plotted: Option<RunResult>,
}

pub struct Measured {
    data_bps: f64,
    /// Per group of [`GROUPS`], one per seed.
    groups: Vec<Vec<Stats>>,
    /// The first seed's run of each group of [`PLOTTED`], in that order.
    plotted: Vec<RunResult>,
}

/// Per run of mixed-receiver groups: retransmitted / sent and throughput while all four run,
/// averaged over the two 4.3BSD-receiver flows (old) and over the two others (new).
#[derive(Default)]
struct Mixed {
    loss_old: Vec<f64>,
    loss_new: Vec<f64>,
    tput_old: Vec<f64>,
    tput_new: Vec<f64>,
}

impl Measured {
    /// The mean over seeds of `f` in group `g`.
    fn avg(&self, g: usize, f: impl Fn(&Stats) -> f64) -> f64 {
        mean(&self.groups[g].iter().map(f).collect::<Vec<_>>())
    }

    fn goodput(&self, g: usize) -> f64 {
        self.avg(g, |r| r.goodput(self.data_bps))
    }

    fn after30(&self, g: usize) -> f64 {
        self.avg(g, |r| r.after30(self.data_bps))
    }

    /// Per flow, the mean over seeds of `f(run, flow)`.
    fn per_flow(&self, g: usize, f: fn(&Stats, usize) -> f64) -> Vec<f64> {
        (0..4).map(|i| self.avg(g, |r| f(r, i))).collect()
    }

    /// The mean over seeds of each run's max / min throughput while all four run.
    fn spread(&self, g: usize) -> f64 {
        self.avg(g, Stats::spread)
    }

    /// The old and new receivers' flows of `groups` (group, index in [`OLD_RECEIVERS`]).
    fn mixed(&self, groups: [(usize, usize); 2]) -> Mixed {
        let pair = |r: &Stats, idx: &[usize], f: fn(&Stats, usize) -> f64| -> f64 {
            mean(&idx.iter().map(|&i| f(r, i)).collect::<Vec<_>>())
        };
        let mut m = Mixed::default();
        for (g, a) in groups {
            let old = OLD_RECEIVERS[a];
            let new: Vec<usize> = (0..4).filter(|i| !old.contains(i)).collect();
            for r in &self.groups[g] {
                m.loss_old.push(pair(r, &old, |r, i| r.loss_all[i]));
                m.loss_new.push(pair(r, &new, |r, i| r.loss_all[i]));
                m.tput_old.push(pair(r, &old, |r, i| r.tput_all[i]));
                m.tput_new.push(pair(r, &new, |r, i| r.tput_all[i]));
            }
        }
        m
    }

    /// Transfers that did not finish within their run, over every run.
    fn incomplete(&self) -> usize {
        self.groups.iter().flatten().map(|r| 4 - r.completed).sum()
    }
}

/// Rates in KB/s, one decimal, joined with " / ".
fn kbps(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{:.1}", x / 1e3))
        .collect::<Vec<_>>()
        .join(" / ")
}

fn parse_base(files: &Files) -> Result<Scenario> {
    Scenario::from_str_named(
        files.scenario,
        Path::new(&format!("{}/scenario.toml", files.dir)),
    )
    .map_err(|e| anyhow!("{e}"))
}

impl Experiment for FourConversations {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "four_conversations"
    }

    fn files(&self) -> Files {
        files!("e04_four_conversations")
    }

    /// Every group of [`GROUPS`] once per seed, the seeds of a group together.
    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        data_bps(base)?;
        let mut scens = Vec::new();
        for &(k, rtt, _) in &GROUPS {
            for seed in 0..p.seeds {
                scens.push(variant(base, k, seed, rtt));
            }
        }
        Ok(scens)
    }

    fn reduce(&self, p: Params, index: usize, r: RunResult) -> Result<Run> {
        let n = p.seeds as usize;
        let plotted = index % n == 0 && PLOTTED.contains(&(index / n));
        Ok(Run {
            stats: stats(&r),
            plotted: plotted.then_some(r),
        })
    }

    fn measure(&self, p: Params, runs: Vec<Run>) -> Result<Measured> {
        let n = p.seeds as usize;
        let mut groups: Vec<Vec<Stats>> = GROUPS.iter().map(|_| Vec::new()).collect();
        let mut plotted = PLOTTED.map(|_| None);
        for (index, r) in runs.into_iter().enumerate() {
            let g = index / n;
            if let Some(k) = PLOTTED.iter().position(|&x| x == g) {
                if index % n == 0 {
                    plotted[k] = r.plotted;
                }
            }
            groups[g].push(r.stats);
        }
        Ok(Measured {
            data_bps: data_bps(&parse_base(&self.files())?)?,
            groups,
            plotted: plotted
                .into_iter()
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| anyhow!("a plotted run is missing"))?,
        })
    }

    fn judge(&self, _p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        judge_alone(m, text, j)?;
        judge_mixed(m, text, j)?;
        j.claim(
            "rtt_100",
            format!(
                "vanilla {:.2} / {:.2}; Tahoe {:.3} / {:.3}",
                m.avg(VANILLA_100, |r| r.rexmit),
                m.goodput(VANILLA_100),
                m.avg(TAHOE_100, |r| r.rexmit),
                m.after30(TAHOE_100)
            ),
            Verdict::Info,
            "",
        )
    }

    fn render(&self, p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let mut setup = text.fill("setup", &[("seeds", p.seeds.to_string())])?;
        let incomplete = m.incomplete();
        if incomplete > 0 {
            setup.push(' ');
            setup.push_str(&text.fill(
                "setup incomplete",
                &[("incomplete", incomplete.to_string())],
            )?);
        }
        Ok(Rendered {
            setup,
            tables: vec![table(m)],
            plots: plot(m, text, out)?,
            discussion: text.get("discussion")?,
        })
    }
}

/// The vanilla and Tahoe claims at 20 ms.
fn judge_alone(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let v_rx = m.avg(VANILLA, |r| r.rexmit);
    let v_gp = m.goodput(VANILLA);
    let v_sp = m.spread(VANILLA);
    let t_rx = m.avg(TAHOE, |r| r.rexmit);
    let t_30 = m.after30(TAHOE);
    j.claim(
        "van_rexmit",
        Ours::num(v_rx, format!("{v_rx:.2}")),
        Verdict::of(v_rx >= 0.25),
        "",
    )?;
    j.claim(
        "van_goodput",
        Ours::num(v_gp, format!("{v_gp:.2}")),
        Verdict::of(v_gp <= 0.85),
        "",
    )?;
    j.claim(
        "van_spread",
        Ours::num(
            v_sp,
            format!(
                "{v_sp:.1} (KBps per flow {})",
                kbps(&m.per_flow(VANILLA, |r, i| r.tput_all[i]))
            ),
        ),
        Verdict::of(v_sp >= 3.0),
        text.get("note van_spread")?,
    )?;
    j.claim(
        "ca_rexmit",
        Ours::num(t_rx, format!("{t_rx:.3}")),
        Verdict::of(t_rx <= 0.03),
        "",
    )?;
    j.claim(
        "ca_goodput",
        Ours::num(t_30, format!("{t_30:.3}")),
        Verdict::of(t_30 >= 0.95),
        "",
    )
}

/// The mixed-receiver claims: the 4.3BSD receivers' senders lose more and get less.
fn judge_mixed(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let mixed = m.mixed(MIXED);
    let tick = m.mixed(MIXED_TICK);
    let tick_note = text.fill(
        "note tick",
        &[
            ("lo", format!("{:.2}", 100.0 * mean(&tick.loss_old))),
            ("ln", format!("{:.2}", 100.0 * mean(&tick.loss_new))),
            ("to", format!("{:.1}", mean(&tick.tput_old) / 1e3)),
            ("tn", format!("{:.1}", mean(&tick.tput_new) / 1e3)),
        ],
    )?;
    let (lo, ln) = (mean(&mixed.loss_old), mean(&mixed.loss_new));
    let per_run: Vec<f64> = mixed
        .loss_old
        .iter()
        .zip(&mixed.loss_new)
        .filter(|(_, n)| **n > 0.0)
        .map(|(o, n)| o / n)
        .collect();
    let seed_lo = per_run.iter().copied().fold(f64::INFINITY, f64::min);
    let seed_hi = per_run.iter().copied().fold(0.0, f64::max);
    let (to, tn) = (mean(&mixed.tput_old), mean(&mixed.tput_new));
    let loss_ratio = if ln > 0.0 { lo / ln } else { f64::INFINITY };
    let tput_ratio = if to > 0.0 { tn / to } else { f64::INFINITY };
    let tput_ok = (1.3..=2.2).contains(&tput_ratio);
    let (verdict, note) = if (2.0..=5.0).contains(&loss_ratio) {
        (
            Verdict::Pass,
            format!("per-run ratios {seed_lo:.1}-{seed_hi:.1}"),
        )
    } else {
        let note = text.fill(
            "note mixed_loss",
            &[
                ("lo", format!("{:.2}", 100.0 * lo)),
                ("ln", format!("{:.2}", 100.0 * ln)),
                ("seed_lo", format!("{seed_lo:.1}")),
                ("seed_hi", format!("{seed_hi:.1}")),
                ("tick", tick_note.clone()),
            ],
        )?;
        if loss_ratio > 1.0 && tput_ok {
            (Verdict::Disagree, note)
        } else {
            (Verdict::Fail, note)
        }
    };
    j.claim(
        "mixed_loss",
        Ours::num(
            loss_ratio,
            format!("{loss_ratio:.1} ({:.2}% / {:.2}%)", 100.0 * lo, 100.0 * ln),
        ),
        verdict,
        note,
    )?;
    j.claim(
        "mixed_tput",
        Ours::num(
            tput_ratio,
            format!("{tput_ratio:.2} ({:.1} / {:.1} KBps)", tn / 1e3, to / 1e3),
        ),
        Verdict::of(tput_ok),
        tick_note,
    )
}

/// Every configuration, means over seeds.
fn table(m: &Measured) -> Table {
    let rows: Vec<Vec<String>> = GROUPS
        .iter()
        .enumerate()
        .map(|(g, (_, _, name))| {
            vec![
                name.to_string(),
                format!("{:.3}", m.avg(g, |r| r.rexmit)),
                format!("{:.2}", m.goodput(g)),
                format!("{:.2}", m.after30(g)),
                kbps(&m.per_flow(g, |r, i| r.tput[i])),
                kbps(&m.per_flow(g, |r, i| r.tput_all[i])),
                m.per_flow(g, |r, i| r.loss_all[i])
                    .iter()
                    .map(|l| format!("{:.2}%", 100.0 * l))
                    .collect::<Vec<_>>()
                    .join(" / "),
                format!("{:.1}", m.spread(g)),
            ]
        })
        .collect();
    Table {
        caption: "Per configuration, means over RNG seeds (throughput per flow in KB/s from its start to its completion)".into(),
        header: Table::header(&[
            "configuration",
            "retransmitted / sent",
            "delivered / link (to last completion)",
            "after 30 s / link",
            "KBps per flow (life)",
            "KBps per flow (all four running)",
            "retransmitted / sent per flow (all four running)",
            "max / min (all four running)",
        ]),
        rows,
    }
}

/// Conversation 1's time-sequence diagram, vanilla and Tahoe; the four throughputs of
/// vanilla, Tahoe and the first mixed group.
fn plot(m: &Measured, text: &Text, out: &Path) -> Result<Vec<Figure>> {
    let mut figs = Vec::new();
    let tseq = [
        (
            "tseq-vanilla-flow1",
            "Vanilla 4.3BSD, conversation 1: time-sequence",
        ),
        ("tseq-tahoe-flow1", "Tahoe, conversation 1: time-sequence"),
    ];
    // The second caption says "same axes".
    let charts = plots::time_sequences_same_axes(
        &[(&m.plotted[0], 0, tseq[0].1), (&m.plotted[1], 0, tseq[1].1)],
        None,
    )?;
    for ((stem, title), chart) in tseq.into_iter().zip(charts) {
        figs.push(Figure::from_text(out, stem, title, text, &[])?.draw(chart)?);
    }
    let old = OLD_RECEIVERS[MIXED[0].1];
    for (k, stem, title) in [
        (
            0,
            "throughput-vanilla",
            "Throughput of the four conversations: vanilla 4.3BSD".to_string(),
        ),
        (
            1,
            "throughput-tahoe",
            "Throughput of the four conversations: Tahoe".to_string(),
        ),
        (
            2,
            "throughput-mixed",
            format!(
                "Throughput of the four conversations: Tahoe, 4.3BSD receivers on {} and {}",
                old[0] + 1,
                old[1] + 1
            ),
        ),
    ] {
        let labels: Vec<String> = (0..m.plotted[k].traces.len())
            .map(|i| {
                if k == 2 && old.contains(&i) {
                    format!("conversation {} (4.3BSD receiver)", i + 1)
                } else {
                    format!("conversation {}", i + 1)
                }
            })
            .collect();
        let fig = Figure::from_text(out, stem, title, text, &[])?;
        plots::throughput_titled(&m.plotted[k], &fig.file, &fig.title, &labels)?;
        figs.push(fig);
    }
    Ok(figs)
}
