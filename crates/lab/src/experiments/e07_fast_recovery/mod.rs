//! Experiment 7: the fast-recovery algebra of 30 Apr 1990 (seeds 000 and 001): between
//! the fast retransmit and the recovery ACK a Reno sender held at W segments sends exactly
//! W/2-1 new segments, none during the first W/2 duplicate ACKs, and no burst when the hole
//! is filled. One deterministic run per W, and Tahoe beside it.

use crate::claims::{Judge, Ours};
use crate::plots;
use crate::suite::{files, Experiment, Figure, Files, Params, Rendered, Table, Verdict};
use crate::text::Text;
use ackclock_gateway::{ImpairmentsConfig, ScriptedDrop};
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::{TraceEvent, TraceKind};
use anyhow::{anyhow, Result};
use std::path::Path;

pub struct FastRecovery;

const WINDOWS: [u32; 4] = [8, 16, 32, 64];
/// The plotted runs: Reno and Tahoe at W = 16 (indices in the plan).
const PLOT_RENO: usize = 1;
const PLOT_TAHOE: usize = WINDOWS.len();

fn variant(base: &Scenario, w: u32, tcp: &str) -> Scenario {
    let mut s = base.clone();
    let f = &mut s.flow[0];
    f.tcp = tcp.to_string();
    f.tcp_overrides.initial_window_segments = Some(w);
    f.tcp_overrides.initial_ssthresh_bytes = Some(w * 1000);
    f.tcp_overrides.recv_buffer_bytes = Some((4 * w * 1000) as usize);
    f.tcp_overrides.send_buffer_bytes = Some((10 * w * 1000) as usize);
    f.app = ackclock_sim::scenario::AppSpec::Bulk {
        bytes: Some(f64::from(10 * w * 1000)),
        duration_s: None,
        chunk_bytes: None,
    };
    // Drop the 4W-th data segment: the window is full and steady by then.
    s.link[1].impair_ab = Some(ImpairmentsConfig {
        scripted: vec![ScriptedDrop::DataSegment {
            flow: Some(0),
            src_port: None,
            dst_port: None,
            nth: vec![u64::from(4 * w)],
        }],
        ..Default::default()
    });
    s
}

#[derive(Clone, Copy)]
struct Counts {
    new_during: u32,
    before_half: u32,
    on_recovery_ack: u32,
    dupacks: u32,
}

fn count(trace: &[TraceEvent], w: u32) -> Result<Counts> {
    let fr = trace
        .iter()
        .position(|e| e.kind == TraceKind::FastRetransmit)
        .ok_or_else(|| anyhow!("W={w}: no fast retransmit"))?;
    let exit = trace
        .iter()
        .position(|e| e.kind == TraceKind::RecoveryExit)
        .ok_or_else(|| anyhow!("W={w}: no recovery exit"))?;
    let during = &trace[fr..exit];
    let is_new = |e: &TraceEvent| matches!(e.kind, TraceKind::Send { retransmit: false, len, .. } if len > 0);
    let new_during = during.iter().filter(|e| is_new(e)).count() as u32;
    let half = during
        .iter()
        .position(|e| e.kind == TraceKind::DupAck { count: w / 2 })
        .unwrap_or(during.len() - 1);
    let before_half = during[..=half].iter().filter(|e| is_new(e)).count() as u32;
    let after = &trace[exit..];
    let next_ack = after[1..]
        .iter()
        .position(|e| matches!(e.kind, TraceKind::Ack { .. }))
        .map_or(after.len(), |i| i + 1);
    let on_recovery_ack = after[..next_ack]
        .iter()
        .filter(|e| matches!(e.kind, TraceKind::Send { .. }))
        .count() as u32;
    let dupacks = trace[..exit]
        .iter()
        .filter(|e| matches!(e.kind, TraceKind::DupAck { .. }))
        .count() as u32;
    Ok(Counts {
        new_during,
        before_half,
        on_recovery_ack,
        dupacks,
    })
}

/// One run: the counts of the recovery episode (Reno runs), the timeouts, and the whole
/// result of the two plotted runs.
pub struct Run {
    counts: Option<Counts>,
    timeouts: u64,
    plotted: Option<RunResult>,
}

pub struct Measured {
    /// Per window of [`WINDOWS`], Reno's counts and timeouts.
    per_window: Vec<(u32, Counts, u64)>,
    reno: RunResult,
    tahoe: RunResult,
}

impl Experiment for FastRecovery {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "fast_recovery"
    }

    fn files(&self) -> Files {
        files!("e07_fast_recovery")
    }

    fn plan(&self, _p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        let mut runs: Vec<Scenario> = WINDOWS.iter().map(|&w| variant(base, w, "reno")).collect();
        runs.push(variant(base, 16, "tahoe"));
        Ok(runs)
    }

    fn reduce(&self, _p: Params, i: usize, r: RunResult) -> Result<Run> {
        let counts = match WINDOWS.get(i) {
            Some(&w) => Some(count(&r.traces[0], w)?),
            None => None,
        };
        let timeouts = r.summary.flows[0].timeouts;
        let plotted = (i == PLOT_RENO || i == PLOT_TAHOE).then_some(r);
        Ok(Run {
            counts,
            timeouts,
            plotted,
        })
    }

    fn measure(&self, _p: Params, runs: Vec<Run>) -> Result<Measured> {
        let mut per_window = Vec::new();
        let (mut reno, mut tahoe) = (None, None);
        for (i, r) in runs.into_iter().enumerate() {
            if let (Some(&w), Some(c)) = (WINDOWS.get(i), r.counts) {
                per_window.push((w, c, r.timeouts));
            }
            match i {
                PLOT_RENO => reno = r.plotted,
                PLOT_TAHOE => tahoe = r.plotted,
                _ => {}
            }
        }
        Ok(Measured {
            per_window,
            reno: reno.ok_or_else(|| anyhow!("the Reno W = 16 run is missing"))?,
            tahoe: tahoe.ok_or_else(|| anyhow!("the Tahoe run is missing"))?,
        })
    }

    fn judge(&self, _p: Params, m: &Measured, _text: &Text, j: &mut Judge) -> Result<()> {
        let list = |f: &dyn Fn(&Counts) -> String| {
            m.per_window
                .iter()
                .map(|(_, c, _)| f(c))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let all = |f: &dyn Fn(u32, &Counts) -> bool| m.per_window.iter().all(|(w, c, _)| f(*w, c));
        j.claim(
            "w2_minus_1",
            list(&|c| c.new_during.to_string()),
            Verdict::of(all(&|w, c| c.new_during == w / 2 - 1)),
            "",
        )?;
        let quiet = all(&|_, c| c.before_half == 0);
        let most = |f: &dyn Fn(&Counts) -> f64| {
            m.per_window
                .iter()
                .map(|(_, c, _)| f(c))
                .fold(0.0, f64::max)
        };
        j.claim(
            "quiet_half",
            Ours::num(
                most(&|c| c.before_half as f64),
                if quiet { "0" } else { "> 0" },
            ),
            Verdict::of(quiet),
            "",
        )?;
        j.claim(
            "no_burst",
            Ours::num(
                most(&|c| c.on_recovery_ack as f64),
                list(&|c| c.on_recovery_ack.to_string()),
            ),
            Verdict::of(all(&|_, c| c.on_recovery_ack <= 1)),
            "",
        )?;
        Ok(())
    }

    fn render(&self, _p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let rows = m
            .per_window
            .iter()
            .map(|(w, c, timeouts)| {
                vec![
                    w.to_string(),
                    c.dupacks.to_string(),
                    format!("{} (W/2-1 = {})", c.new_during, w / 2 - 1),
                    c.before_half.to_string(),
                    c.on_recovery_ack.to_string(),
                    timeouts.to_string(),
                ]
            })
            .collect();
        // Half a second from the fast retransmit: the recovery episode fills the plot.
        let until = |r: &RunResult| {
            let fr = r.traces[0]
                .iter()
                .find(|e| e.kind == TraceKind::FastRetransmit)
                .map_or(0.0, |e| e.time.as_nanos() as f64 / 1e9);
            Some(fr + 0.5)
        };
        let f1 = Figure::from_text(
            out,
            "tseq-reno-w16",
            "Reno, W = 16, one drop: fast retransmit and recovery",
            text,
            &[],
        )?;
        plots::time_sequence_titled(&m.reno, 0, &f1.file, &f1.title, until(&m.reno))?;
        let f2 = Figure::from_text(
            out,
            "tseq-tahoe-w16",
            "Tahoe, W = 16, one drop: fast retransmit, then slow start",
            text,
            &[],
        )?;
        plots::time_sequence_titled(&m.tahoe, 0, &f2.file, &f2.title, until(&m.tahoe))?;
        let windows = WINDOWS.map(|w| w.to_string()).join(", ");
        Ok(Rendered {
            setup: text.fill("setup", &[("windows", windows)])?,
            tables: vec![Table {
                caption: "Per window".into(),
                header: vec![
                    "W".into(),
                    "dup ACKs".into(),
                    "new segments during recovery".into(),
                    "new before the W/2-th dup ACK".into(),
                    "sent on the recovery ACK".into(),
                    "timeouts".into(),
                ],
                rows,
            }],
            plots: vec![f1, f2],
            discussion: text.get("discussion")?,
        })
    }
}
