//! Experiment 7: the fast-recovery algebra of 30 Apr 1990 (REFERENCES S-d).

use super::{judged, scenario, Ctx, Experiment, Section, Table, Verdict};
use crate::plots;
use ackclock_gateway::{ImpairmentsConfig, ScriptedDrop};
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::{TraceEvent, TraceKind};
use anyhow::{anyhow, Result};

pub struct FastRecovery;

const TEXT: &str = include_str!("../../../../scenarios/repro/fast_recovery.toml");
const WINDOWS: [u32; 4] = [8, 16, 32, 64];

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

impl Experiment for FastRecovery {
    fn name(&self) -> &'static str {
        "fast_recovery"
    }
    fn title(&self) -> &'static str {
        "7. Fast recovery: W/2-1 new packets, no burst"
    }
    fn scenario(&self) -> &'static str {
        TEXT
    }
    fn runs(&self, _quick: bool, _seeds: u64) -> u64 {
        WINDOWS.len() as u64 + 1
    }

    fn run(&self, ctx: &Ctx) -> Result<Section> {
        let base = scenario("fast_recovery", TEXT)?;
        let mut runs: Vec<Scenario> = WINDOWS.iter().map(|&w| variant(&base, w, "reno")).collect();
        runs.push(variant(&base, 16, "tahoe"));
        let results: Vec<RunResult> = ctx.run_all(runs)?;
        let mut rows = Vec::new();
        let (mut exact, mut quiet, mut calm) = (true, true, true);
        let mut ours_new = Vec::new();
        for (i, &w) in WINDOWS.iter().enumerate() {
            let c = count(&results[i].traces[0], w)?;
            exact &= c.new_during == w / 2 - 1;
            quiet &= c.before_half == 0;
            calm &= c.on_recovery_ack <= 1;
            ours_new.push(c.new_during.to_string());
            rows.push(vec![
                w.to_string(),
                c.dupacks.to_string(),
                format!("{} (W/2-1 = {})", c.new_during, w / 2 - 1),
                c.before_half.to_string(),
                c.on_recovery_ack.to_string(),
                results[i].summary.flows[0].timeouts.to_string(),
            ]);
        }
        let e = self.name();
        let claims = vec![
            judged(
                &base,
                e,
                "w2_minus_1",
                ours_new.join(", "),
                Verdict::of(exact),
                "",
            )?,
            judged(
                &base,
                e,
                "quiet_half",
                if quiet { "0".into() } else { "> 0".into() },
                Verdict::of(quiet),
                "",
            )?,
            judged(
                &base,
                e,
                "no_burst",
                rows.iter()
                    .map(|r| r[4].clone())
                    .collect::<Vec<_>>()
                    .join(", "),
                Verdict::of(calm),
                "",
            )?,
        ];
        let p1 = ctx.out.join("tseq-reno-w16.svg");
        let t = |r: &RunResult| {
            let fr = r.traces[0]
                .iter()
                .find(|e| e.kind == TraceKind::FastRetransmit)
                .map_or(0.0, |e| e.time.as_nanos() as f64 / 1e9);
            fr + 0.5
        };
        plots::time_sequence_titled(
            &results[1],
            0,
            &p1,
            "Reno, W = 16: fast retransmit and recovery",
            Some(t(&results[1])),
        )?;
        let p2 = ctx.out.join("tseq-tahoe-w16.svg");
        plots::time_sequence_titled(
            &results[4],
            0,
            &p2,
            "Tahoe, W = 16: fast retransmit, then slow start",
            Some(t(&results[4])),
        )?;
        Ok(Section {
            quote: "the amount actually sent between the loss detection and the recovery ack is U+W/2+W-1 - U+W = W/2-1 ... (I.e., there is no sudden burst of packets as the `hole' is filled.) Also note ... we do nothing for the first W/2 dup acks".into(),
            quote_source: "seed 000_a2655ca5932a6b6b.txt and 001_511cbe12d2c06f6d.txt, 30 Apr 1990, with the correction of the next morning".into(),
            setup: "One Reno flow (the 1990 diff as corrected) held at W segments (initial window W, ssthresh W, no additive increase), MSS 1000, through an 8 Mb/s 20 ms hop; the receiver ACKs every segment and offers 4W; the 4W-th data segment is dropped once. W = 8, 16, 32, 64; Tahoe at W = 16 beside it.".into(),
            claims,
            tables: vec![Table {
                caption: "Per window".into(),
                header: vec!["W".into(), "dup ACKs".into(), "new segments during recovery".into(), "new before the W/2-th dup ACK".into(), "sent on the recovery ACK".into(), "timeouts".into()],
                rows,
            }],
            plots: vec![p1, p2],
            discussion: "Exact mechanism test: no randomness, no cross traffic. The message's algebra assumes one duplicate ACK per packet in transit; with a receiver that delays ACKs for in-order data the ACK for U-1 can be the first out-of-order ACK and recovery sees W-2 duplicates (one new segment fewer); the engine's tests check that law too.".into(),
            ..Section::default()
        })
    }
}
