//! Experiment 13: buffer sizing, a bandwidth-delay product (or two) at the bottleneck
//! (seed 004, 7 Mar 1988: two products or the bottleneck is "fragile"; seed 000/001,
//! 30 Apr 1990: one product is good engineering). Bottleneck utilization and drop rate
//! against the drop-tail buffer, for one Tahoe, Reno or NewReno flow (deterministic) and
//! for eight flows with drawn round trips and start times (per seed).

use crate::claims::{Judge, Ours};
use crate::plots;
use crate::stats::{mean, sd};
use crate::suite::{files, Experiment, Figure, Files, Params, Rendered, Table, Verdict};
use crate::text::Text;
use ackclock_gateway::{DropTailConfig, QdiscConfig};
use ackclock_sim::scenario::{FlowSpec, LinkSpec, NodeSpec};
use ackclock_sim::{component_seed, RunResult, Scenario};
use ackclock_tcp::TraceKind;
use anyhow::{anyhow, Result};
use std::path::Path;

pub struct BufferSizing;

/// Bandwidth-delay product of the path in packets (10 Mb/s x 120 ms / 1500 bytes).
const BDP: f64 = 100.0;
const RATE: f64 = 10e6;
const MSS: f64 = 1460.0;
const WARM_S: f64 = 10.0;
const B_FULL: [f64; 6] = [0.1, 0.25, 0.5, 1.0, 1.5, 2.0];
const B_QUICK: [f64; 4] = [0.1, 0.25, 1.0, 2.0];
/// (flows, tcp) configurations; one flow alone is deterministic (one run), 8 flows vary
/// with the seed.
const ONE: [&str; 3] = ["tahoe", "reno", "newreno"];
const MANY: [&str; 2] = ["reno", "newreno"];
const ONE_QUICK: [&str; 2] = ["tahoe", "reno"];
const MANY_QUICK: [&str; 1] = ["newreno"];
const N_MANY: usize = 8;

/// What is swept: buffer sizes (in bandwidth-delay products), the TCPs run alone and the
/// TCPs run [`N_MANY`] at a time, and the seeds of each several-flow configuration.
#[derive(Clone, Copy)]
struct Grid {
    bs: &'static [f64],
    one: &'static [&'static str],
    many: &'static [&'static str],
    seeds: usize,
}

impl Grid {
    fn of(p: Params) -> Grid {
        let (bs, one, many): (&'static [f64], &'static [&str], &'static [&str]) = if p.quick {
            (&B_QUICK, &ONE_QUICK, &MANY_QUICK)
        } else {
            (&B_FULL, &ONE, &MANY)
        };
        Grid {
            bs,
            one,
            many,
            seeds: p.seeds as usize,
        }
    }

    /// The buffer sizes in packets.
    fn bufs(&self) -> Vec<usize> {
        self.bs
            .iter()
            .map(|&x| (x * BDP).round() as usize)
            .collect()
    }

    /// The column of the buffer of `x` bandwidth-delay products (the first if not swept).
    fn col(&self, x: f64) -> usize {
        self.bs
            .iter()
            .position(|&b| (b - x).abs() < 1e-9)
            .unwrap_or(0)
    }

    /// The single-flow Reno (the first TCP if Reno is not run alone).
    fn reno(&self) -> usize {
        self.one.iter().position(|&t| t == "reno").unwrap_or(0)
    }

    /// Index in the plan of the one-flow run of TCP `t` (in `one`) with buffer `j`; the
    /// one-flow runs come first.
    fn one_index(&self, t: usize, j: usize) -> usize {
        t * self.bs.len() + j
    }

    /// Index in the plan of seed `k` of the several-flow run of TCP `t` (in `many`) with
    /// buffer `j`.
    fn many_index(&self, t: usize, j: usize, k: usize) -> usize {
        self.one.len() * self.bs.len() + (t * self.bs.len() + j) * self.seeds + k
    }

    /// Whether run `index` is plotted: one Reno flow with 1 bdp (queue) and 0.25 bdp
    /// (time-sequence) of buffer.
    fn plotted(&self, index: usize) -> bool {
        let reno = self.reno();
        index == self.one_index(reno, self.col(1.0))
            || index == self.one_index(reno, self.col(0.25))
    }
}

/// The length of the one-flow and of the several-flow runs.
fn durations(p: Params, base: &Scenario) -> (f64, f64) {
    if p.quick {
        (60.0, 25.0)
    } else {
        (base.duration_s, 40.0)
    }
}

/// A uniform draw in [0, 1) from the seed and a label.
fn unit(seed: u64, label: &str) -> f64 {
    (component_seed(seed, label) >> 11) as f64 / (1u64 << 53) as f64
}

/// The dumbbell with `n` pairs, `b` packets of bottleneck buffer and `tcp` flows.
fn variant(base: &Scenario, n: usize, b: usize, tcp: &str, seed: u64, dur: f64) -> Scenario {
    let mut s = base.clone();
    s.seed = seed;
    s.duration_s = dur;
    let node = |name: String| NodeSpec {
        name,
        ..base.node[0].clone()
    };
    let proto_l = base.link[0].clone();
    let proto_r = base.link[2].clone();
    let mut bottleneck: LinkSpec = base.link[1].clone();
    bottleneck.queue = Some(QdiscConfig::DropTail(DropTailConfig {
        mark_threshold_pkts: None,
        limit_pkts: Some(b),
        limit_bytes: None,
    }));
    let routers: Vec<NodeSpec> = base.node[2..].to_vec();
    let mut nodes = Vec::new();
    let mut links = Vec::new();
    let mut flows = Vec::new();
    let share = (((BDP + b as f64) / n as f64).max(2.0) * MSS) as u32;
    for i in 1..=n {
        let (l, r) = (format!("left{i}"), format!("right{i}"));
        nodes.push(node(l.clone()));
        nodes.push(node(r.clone()));
        let mut a = proto_l.clone();
        a.a = l.clone();
        if n > 1 {
            // Different round trips (1-6 ms of access delay) so the flows do not move in
            // lock-step through the drop-tail queue.
            a.delay_ms = 1.0 + 5.0 * unit(seed, &format!("access/{i}"));
        }
        links.push(a);
        let mut c = proto_r.clone();
        c.b = r.clone();
        links.push(c);
        let mut f: FlowSpec = base.flow[0].clone();
        f.from = l;
        f.to = r;
        f.tcp = tcp.to_string();
        f.tcp_overrides.initial_ssthresh_bytes = Some(share);
        if n > 1 {
            f.start_s = 2.0 * unit(seed, &format!("start/{i}"));
        }
        flows.push(f);
    }
    nodes.extend(routers);
    links.push(bottleneck);
    s.node = nodes;
    s.link = links;
    s.flow = flows;
    s
}

/// Goodput of all flows after `from_s`, as a share of the bottleneck's data rate.
fn utilization(r: &RunResult, from_s: f64) -> f64 {
    let mut bytes = 0.0;
    for tr in &r.traces {
        let mut first = None;
        let mut last = None;
        for e in tr {
            if let TraceKind::Ack { ack, .. } = e.kind {
                if e.time.as_nanos() as f64 / 1e9 >= from_s {
                    first.get_or_insert(ack);
                    last = Some(ack);
                }
            }
        }
        if let (Some(a), Some(b)) = (first, last) {
            bytes += f64::from(b.since(a));
        }
    }
    bytes * 8.0 / (r.summary.duration_s - from_s) / (RATE * MSS / (MSS + 40.0))
}

/// Drops at the bottleneck / packets offered to it.
fn loss(r: &RunResult) -> f64 {
    r.summary
        .links
        .iter()
        .find(|l| l.name == "gw_left-gw_right")
        .map_or(0.0, |l| {
            l.queue_drops as f64 / (l.packets + l.queue_drops).max(1) as f64
        })
}

/// One run: its utilization, drop rate and Jain index; the plotted runs keep their whole
/// result.
pub struct Run {
    utilization: f64,
    loss: f64,
    jain: Option<f64>,
    plotted: Option<RunResult>,
}

/// One configuration (TCP, flows, buffer): utilization, drop rate and Jain index, means
/// over its seeds (one flow alone has one run; its Jain index is not shown).
#[derive(Clone, Copy)]
struct Point {
    util: f64,
    loss: f64,
    jain: f64,
    /// Sample standard deviations of `util` and `loss` over the seeds (NaN for one run).
    util_sd: f64,
    loss_sd: f64,
}

/// The point of one configuration from its runs.
fn point(runs: &[Run]) -> Point {
    let of = |f: &dyn Fn(&Run) -> Option<f64>| mean(&runs.iter().filter_map(f).collect::<Vec<_>>());
    let sd_of = |f: &dyn Fn(&Run) -> f64| {
        if runs.len() < 2 {
            f64::NAN
        } else {
            sd(&runs.iter().map(f).collect::<Vec<_>>())
        }
    };
    Point {
        util: of(&|r| Some(r.utilization)),
        loss: of(&|r| Some(r.loss)),
        jain: of(&|r| r.jain),
        util_sd: sd_of(&|r| r.utilization),
        loss_sd: sd_of(&|r| r.loss),
    }
}

pub struct Measured {
    grid: Grid,
    dur1: f64,
    dur8: f64,
    /// Per TCP of `grid.one`, per buffer of `grid.bs`.
    one: Vec<Vec<Point>>,
    /// Per TCP of `grid.many`, per buffer of `grid.bs`.
    many: Vec<Vec<Point>>,
    /// One Reno flow with 1 bdp of buffer (the cwnd plot).
    cwnd_run: RunResult,
    /// One Reno flow with 0.25 bdp of buffer (the time-sequence plot).
    tseq_run: RunResult,
}

impl Measured {
    /// Utilization of one flow of TCP `t` (in `grid.one`) with `x` bdp of buffer.
    fn u1(&self, t: usize, x: f64) -> f64 {
        self.one[t][self.grid.col(x)].util
    }

    /// Mean utilization of several flows of TCP `t` (in `grid.many`) with `x` bdp of buffer.
    fn u8(&self, t: usize, x: f64) -> f64 {
        self.many[t][self.grid.col(x)].util
    }

    /// Every configuration's label ("1 reno", "8 newreno") with its points, one flow first.
    fn series(&self) -> Vec<(String, &[Point])> {
        let g = &self.grid;
        let one = g
            .one
            .iter()
            .zip(&self.one)
            .map(|(t, v)| (format!("1 {t}"), &v[..]));
        let many = g
            .many
            .iter()
            .zip(&self.many)
            .map(|(t, v)| (format!("{N_MANY} {t}"), &v[..]));
        one.chain(many).collect()
    }
}

impl Experiment for BufferSizing {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "buffer_sizing"
    }

    fn files(&self) -> Files {
        files!("e13_buffer_sizing")
    }

    /// One run per (TCP, buffer) for one flow, then the seeds of each (TCP, buffer) for
    /// [`N_MANY`] flows (see [`Grid::one_index`], [`Grid::many_index`]).
    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        let g = Grid::of(p);
        let (dur1, dur8) = durations(p, base);
        let bufs = g.bufs();
        let mut runs = Vec::new();
        for tcp in g.one {
            for &b in &bufs {
                runs.push(variant(base, 1, b, tcp, 1, dur1));
            }
        }
        for tcp in g.many {
            for &b in &bufs {
                for k in 0..p.seeds {
                    runs.push(variant(base, N_MANY, b, tcp, 1 + k, dur8));
                }
            }
        }
        Ok(runs)
    }

    fn reduce(&self, p: Params, index: usize, r: RunResult) -> Result<Run> {
        Ok(Run {
            utilization: utilization(&r, WARM_S),
            loss: loss(&r),
            jain: r.summary.jain_fairness,
            plotted: Grid::of(p).plotted(index).then_some(r),
        })
    }

    fn measure(&self, p: Params, mut runs: Vec<Run>) -> Result<Measured> {
        let g = Grid::of(p);
        let base = Scenario::from_str_named(
            self.files().scenario,
            Path::new("e13_buffer_sizing/scenario.toml"),
        )
        .map_err(|e| anyhow!("{e}"))?;
        let (dur1, dur8) = durations(p, &base);
        let points = |tcps: usize, range: &dyn Fn(usize, usize) -> (usize, usize)| {
            (0..tcps)
                .map(|t| {
                    (0..g.bs.len())
                        .map(|j| {
                            let (a, b) = range(t, j);
                            point(&runs[a..b])
                        })
                        .collect()
                })
                .collect()
        };
        let one = points(g.one.len(), &|t, j| {
            (g.one_index(t, j), g.one_index(t, j) + 1)
        });
        let many = points(g.many.len(), &|t, j| {
            (g.many_index(t, j, 0), g.many_index(t, j, g.seeds))
        });
        let reno = g.reno();
        let mut take = |x: f64, what: &str| {
            runs[g.one_index(reno, g.col(x))]
                .plotted
                .take()
                .ok_or_else(|| anyhow!("the one-flow Reno run at {what} is missing"))
        };
        let cwnd_run = take(1.0, "1 bdp")?;
        let tseq_run = take(0.25, "0.25 bdp")?;
        Ok(Measured {
            grid: g,
            dur1,
            dur8,
            one,
            many,
            cwnd_run,
            tseq_run,
        })
    }

    fn judge(&self, _p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        judge_one_flow(m, text, j)?;
        judge_two_bdp(m, j)?;
        judge_reports(m, text, j)
    }

    fn render(&self, p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let g = &m.grid;
        let f1 = Figure::from_text(
            out,
            "utilization-vs-buffer",
            "Bottleneck utilization against buffer (10 Mb/s, 120 ms, bdp 100 packets)",
            text,
            &[("n_many", N_MANY.to_string())],
        )?;
        let f2 = Figure::from_text(
            out,
            "loss-vs-buffer",
            "Drop rate at the bottleneck against buffer (10 Mb/s, 120 ms, bdp 100 packets)",
            text,
            &[],
        )?;
        let (f1, f2) = plot_sweeps(m, f1, f2)?;
        let f3 = Figure::from_text(
            out,
            "cwnd-reno-1flow-1bdp",
            "One Reno flow, buffer 1 bdp: the window's sawtooth",
            text,
            &[],
        )?;
        plots::cwnd_titled(&m.cwnd_run, &f3.file, &f3.title)?;
        let f4 = Figure::from_text(
            out,
            "tseq-reno-1flow-quarter-bdp",
            "One Reno flow, buffer 0.25 bdp: time-sequence",
            text,
            &[],
        )?;
        plots::time_sequence_titled(&m.tseq_run, 0, &f4.file, &f4.title, Some(m.dur1))?;
        let setup = text.fill(
            "setup",
            &[
                ("bdp", format!("{BDP}")),
                ("buffers", format!("{:?}", g.bs)),
                ("dur1", format!("{}", m.dur1)),
                ("n_many", format!("{N_MANY}")),
                ("seeds", p.seeds.to_string()),
                ("dur8", format!("{}", m.dur8)),
                ("warm", format!("{WARM_S}")),
            ],
        )?;
        let reno = g.reno();
        let discussion = text.fill(
            "discussion",
            &[
                ("reno_one", format!("{:.2}", m.u1(reno, 1.0))),
                ("reno_tenth", format!("{:.2}", m.u1(reno, 0.1))),
                ("n_many", format!("{N_MANY}")),
            ],
        )?;
        Ok(Rendered {
            setup,
            tables: vec![table(m)],
            plots: vec![f1, f2, f3, f4],
            discussion,
        })
    }
}

/// The claims on one flow: one bdp keeps Reno's link busy, less is fragile.
fn judge_one_flow(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let g = &m.grid;
    let reno = g.reno();
    let reno1 = m.u1(reno, 1.0);
    let newreno = g.one.iter().position(|&t| t == "newreno");
    j.claim(
        "one_bdp",
        Ours::num(
            reno1,
            format!(
                "Reno {reno1:.3}{}",
                newreno.map_or(String::new(), |t| format!(", NewReno {:.3}", m.u1(t, 1.0)))
            ),
        ),
        Verdict::of(reno1 >= 0.95),
        "",
    )?;
    j.claim(
        "less_is_fragile",
        format!(
            "{:.3} at 0.1, {:.3} at 0.25, {reno1:.3} at 1 bdp",
            m.u1(reno, 0.1),
            m.u1(reno, 0.25)
        ),
        Verdict::of(m.u1(reno, 0.1) <= reno1 - 0.05),
        text.get("note less_is_fragile")?,
    )
}

/// The 1988 rule: the lowest utilization with 2 bdp of buffer over every configuration.
fn judge_two_bdp(m: &Measured, j: &mut Judge) -> Result<()> {
    let col = m.grid.col(2.0);
    // The first of equal minima.
    let (worst_name, worst) = m.series().into_iter().map(|(n, v)| (n, v[col].util)).fold(
        (String::new(), f64::INFINITY),
        |a, b| if b.1 < a.1 { b } else { a },
    );
    j.claim(
        "two_bdp",
        Ours::num(worst, format!("{worst:.3} ({worst_name})")),
        Verdict::of(worst >= 0.95),
        "",
    )
}

/// The reported claims: Tahoe's need for buffer, several flows against one.
fn judge_reports(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let g = &m.grid;
    j.claim(
        "tahoe_needs_more",
        g.one
            .iter()
            .position(|&t| t == "tahoe")
            .map_or("not run".into(), |t| {
                format!(
                    "{:.3} at 0.25, {:.3} at 1, {:.3} at 2 bdp",
                    m.u1(t, 0.25),
                    m.u1(t, 1.0),
                    m.u1(t, 2.0)
                )
            }),
        Verdict::Info,
        text.get("note tahoe_needs_more")?,
    )?;
    // Without a single NewReno flow (quick mode) the single Reno flow stands in.
    let nr1 = g
        .one
        .iter()
        .position(|&t| t == "newreno")
        .unwrap_or(g.reno());
    let nr8 = g.many.iter().position(|&t| t == "newreno").unwrap_or(0);
    j.claim(
        "many_flows",
        format!(
            "{:.3} ({N_MANY} flows) vs {:.3} (1 flow)",
            m.u8(nr8, 0.25),
            m.u1(nr1, 0.25)
        ),
        Verdict::Info,
        text.get("note many_flows")?,
    )
}

/// Per buffer size, each configuration's utilization and drop rate (and Jain index for
/// several flows).
fn table(m: &Measured) -> Table {
    let g = &m.grid;
    let bufs = g.bufs();
    let rows =
        g.bs.iter()
            .enumerate()
            .map(|(j, &x)| {
                let mut row = vec![format!("{x}"), bufs[j].to_string()];
                for v in &m.one {
                    row.push(format!("{:.3} ({:.2}%)", v[j].util, v[j].loss * 100.0));
                }
                for v in &m.many {
                    row.push(format!(
                        "{:.3} ({:.2}%, J {:.2})",
                        v[j].util,
                        v[j].loss * 100.0,
                        v[j].jain
                    ));
                }
                row
            })
            .collect();
    let mut header = vec!["buffer / bdp".to_string(), "packets".to_string()];
    header.extend(m.series().into_iter().map(|(n, _)| n));
    Table {
        caption: "Utilization (drop rate; for several flows Jain's fairness index J)".into(),
        header,
        rows,
    }
}

/// Utilization and drop rate against the buffer, one line per configuration (means over
/// the seeds, with error bars of one standard deviation); returns the two figures drawn.
fn plot_sweeps(m: &Measured, util: Figure, loss: Figure) -> Result<(Figure, Figure)> {
    let bs = m.grid.bs;
    let line = |f: &dyn Fn(&Point) -> (f64, f64)| -> Vec<crate::plots::MeanLine> {
        let one = m.grid.one.iter().map(|t| format!("one {t} flow"));
        let many = m.grid.many.iter().map(|t| format!("{N_MANY} {t} flows"));
        one.chain(many)
            .zip(m.series())
            .map(|(n, (_, v))| {
                let pts = bs
                    .iter()
                    .zip(v.iter().map(f))
                    .map(|(&x, (mu, s))| (x, mu, s))
                    .collect();
                (n, pts)
            })
            .collect()
    };
    let x_desc = "buffer / bandwidth-delay product";
    let util = util.draw(plots::means_chart(
        x_desc,
        "goodput / data rate",
        &line(&|p| (p.util, p.util_sd)),
        &[],
        false,
    ))?;
    let loss = loss.draw(plots::means_chart(
        x_desc,
        "drops / packets offered (%)",
        &line(&|p| (p.loss * 100.0, p.loss_sd * 100.0)),
        &[],
        false,
    ))?;
    Ok((util, loss))
}
