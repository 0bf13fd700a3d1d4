//! Experiment 21's section: the setup and discussion filled with the run's numbers, four
//! tables and four figures.

use super::paths::{
    bdp_pkts, data_rate, fat_losses, fat_seeds, satnet_losses, Net, Tcp, Variant, BUFFERS,
    FAT_LOSS, FAT_RTT, LINUX_PAYLOAD, SATNET_LOSS, SATNET_PIPE, TRACE_BER,
};
use super::{f2, mathis_bps, Measured, Run, FAT_S, PLOT_S, WARM_S};
use crate::plots::{self, palette, step_path, Chart, Mark, MeanLine, Series};
use crate::suite::{Figure, Params, Rendered, Table};
use crate::text::Text;
use anyhow::Result;
use std::path::Path;

/// Mean ± sd of the efficiency of some runs (the mean alone for one run), or "-" for none.
fn cell(runs: &[&Run]) -> String {
    match Measured::stat(runs, |r| r.eff) {
        None => "-".into(),
        Some((m, _)) if runs.len() == 1 => format!("{m:.3}"),
        Some((m, s)) => format!("{m:.3} ± {s:.3}"),
    }
}

/// The section.
pub fn render(p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
    let bbr1 = m.at(Net::Fat, Tcp::Bbr, 0.01);
    let wall = Measured::stat(&bbr1, |r| r.wall_s).map_or(0.0, |s| s.0);
    let events = Measured::stat(&bbr1, |r| r.events as f64).map_or(0.0, |s| s.0);
    let setup = text.fill(
        "setup",
        &[
            ("satnet_s", format!("{:.0}", m.satnet_s)),
            ("seeds", p.seeds.to_string()),
            ("fat_s", format!("{FAT_S:.0}")),
            ("fat_seeds", fat_seeds(p).to_string()),
            ("fat_bdp", format!("{:.0}", bdp_pkts(Net::Fat))),
            ("limit", format!("{:.1e}", 0.01 / bdp_pkts(Net::Fat))),
            ("buffer_s", format!("{:.0}", m.buffer_s)),
            ("warm", format!("{WARM_S:.0}")),
            ("wall", format!("{wall:.1}")),
            ("events", format!("{:.1}", events / 1e6)),
        ],
    )?;
    let discussion = discussion(m, text)?;
    Ok(Rendered {
        setup,
        tables: vec![
            satnet_table(p, m),
            trace_table(m),
            fat_table(p, m),
            buffer_table(m),
        ],
        plots: figures(p, m, text, out)?,
        discussion,
    })
}

fn discussion(m: &Measured, text: &Text) -> Result<String> {
    let bbr = m.queue(Tcp::Bbr, 2.0);
    let reno = m.queue(Tcp::LinuxReno, 2.0);
    let cubic = m.queue(Tcp::Cubic, 2.0);
    text.fill(
        "discussion",
        &[
            ("satnet_bbr", f2(m.eff(Net::Satnet, Tcp::Bbr, 0.01))),
            ("satnet_reno", f2(m.eff(Net::Satnet, Tcp::Reno, 0.01))),
            ("satnet_lossless", f2(m.eff(Net::Satnet, Tcp::Bbr, 0.0))),
            (
                "floor",
                format!("{:.0}", 100.0 * m.floor(Net::Satnet, Tcp::Bbr, 0.0)),
            ),
            ("v3_lossless", f2(m.eff(Net::Satnet, Tcp::Bbr3, 0.0))),
            ("trace_bbr", f2(m.eff(Net::Trace, Tcp::Bbr, TRACE_BER))),
            ("fat_1", f2(m.fat_ratio(Tcp::Bbr, 0.01))),
            ("fat_2", f2(m.fat_ratio(Tcp::Bbr, 0.02))),
            ("fat_5", f2(m.fat_ratio(Tcp::Bbr, 0.05))),
            ("cubic_1", f2(m.eff(Net::Fat, Tcp::Cubic, 0.01))),
            (
                "dumazet_bbr",
                f2(m.eff(Net::Fat, Tcp::Bbr, 0.01)
                    .map(|e| e * LINUX_PAYLOAD / 1500.0)),
            ),
            (
                "dumazet_cubic",
                f2(
                    Measured::stat(&m.at(Net::Fat, Tcp::Cubic, 0.01), |r| r.goodput / 1e6)
                        .map(|s| s.0),
                ),
            ),
            ("bbr_q", format!("{:.0}", bbr.p95_ms)),
            ("reno_q", format!("{:.0}", reno.median_ms)),
            ("cubic_q", format!("{:.0}", cubic.median_ms)),
            ("bbr_shallow", format!("{:.3}", m.queue(Tcp::Bbr, 0.1).util)),
            (
                "reno_shallow",
                format!("{:.3}", m.queue(Tcp::LinuxReno, 0.1).util),
            ),
            (
                "cubic_shallow",
                format!("{:.3}", m.queue(Tcp::Cubic, 0.1).util),
            ),
        ],
    )
}

/// Satnet: every TCP at every loss rate.
fn satnet_table(p: Params, m: &Measured) -> Table {
    let rows_of = [
        (Tcp::Tahoe, Variant::Plain, "Tahoe"),
        (Tcp::Reno, Variant::Plain, "Reno"),
        (Tcp::Bbr, Variant::Plain, "BBR v1"),
        (Tcp::Bbr3, Variant::Plain, "BBR v3"),
        (
            Tcp::Bbr,
            Variant::TwoPipes,
            "BBR v1, receiver window 2 pipes",
        ),
        (Tcp::Bbr, Variant::NoDsack, "BBR v1, D-SACK off"),
    ];
    let rows = rows_of
        .iter()
        .map(|&(tcp, variant, label)| {
            let at = |loss| m.of(Net::Satnet, tcp, loss, 0.0, variant);
            let mut row = vec![label.to_string(), cell(&at(0.0))];
            row.extend(SATNET_LOSS.iter().map(|&x| cell(&at(x))));
            let one = at(0.01);
            row.push(
                Measured::stat(&one, |r| r.timeouts).map_or("-".into(), |s| format!("{:.1}", s.0)),
            );
            row.push(
                Measured::stat(&one, |r| r.floor.unwrap_or(f64::NAN))
                    .filter(|s| s.0.is_finite())
                    .map_or("-".into(), |s| format!("{:.0}%", 100.0 * s.0)),
            );
            row
        })
        .collect();
    let mut header = vec!["TCP".to_string(), "lossless".into()];
    header.extend(
        SATNET_LOSS
            .iter()
            .map(|x| format!("{:.1}% loss", x * 100.0)),
    );
    header.push("timeouts per run at 1%".into());
    header.push("time at 4 packets or below, 1%".into());
    let swept = satnet_losses(p)
        .iter()
        .map(|x| format!("{:.1}%", x * 100.0))
        .collect::<Vec<_>>()
        .join(", ");
    Table {
        caption: format!(
            "Satnet (40 kb/s, 2.048 s): goodput / channel data rate, mean ± sd over RNG seeds (loss rates run: {swept}; lossless runs once), receiver window 4 pipes"
        ),
        header,
        rows,
    }
}

/// The Satnet trace: the BBRs with and without the bit errors, and Tahoe.
fn trace_table(m: &Measured) -> Table {
    let rows = [Tcp::Bbr, Tcp::Bbr3, Tcp::Tahoe]
        .iter()
        .map(|&tcp| {
            let lossy = m.at(Net::Trace, tcp, TRACE_BER);
            let clean = m.eff(Net::Trace, tcp, 0.0);
            let e = m.eff(Net::Trace, tcp, TRACE_BER);
            vec![
                tcp.label().to_string(),
                f2(clean),
                cell(&lossy),
                e.zip(clean)
                    .map_or("-".into(), |(a, b)| format!("{:.3}", a / b)),
                format!("{:.1}", m.timeouts(Net::Trace, tcp, TRACE_BER)),
            ]
        })
        .collect();
    Table {
        caption: "The Satnet trace (35.05 kb/s, 2.2 s, 42 packets of buffer): goodput / 4000 B/s, BER 1.8e-6 (mean ± sd over RNG seeds) and lossless; receiver window 4 pipes".into(),
        header: Table::header(&["TCP", "lossless", "BER 1.8e-6", "lossy / lossless", "timeouts per run"]),
        rows,
    }
}

/// The fat pipe: every TCP at every loss rate, the bound and Mathis.
fn fat_table(p: Params, m: &Measured) -> Table {
    let tcps = [Tcp::LinuxReno, Tcp::Cubic, Tcp::Bbr, Tcp::Bbr3];
    let w = bdp_pkts(Net::Fat);
    let rows = FAT_LOSS
        .iter()
        .filter(|&&x| tcps.iter().any(|&t| fat_losses(p, t).contains(&x)))
        .map(|&x| {
            let mut row = vec![format!("{}%", x * 100.0), format!("{:.2}", x * w / 0.01)];
            row.extend(tcps.iter().map(|&t| cell(&m.at(Net::Fat, t, x))));
            row.push(format!("{:.3}", 1.0 - x));
            row.push(format!(
                "{:.4}",
                (mathis_bps(x, FAT_RTT) / data_rate(Net::Fat)).min(1.0)
            ));
            row.push(format!("{:.1}", m.timeouts(Net::Fat, Tcp::Bbr, x)));
            row
        })
        .collect();
    Table {
        caption: format!(
            "Fat pipe (100 Mbit/s x 100 ms, {w:.0} packets, 1 BDP of buffer, {FAT_S:.0} s): goodput / data rate (mean ± sd over RNG seeds); p x W / .01 is the loss rate in units of the seeds' limit"
        ),
        header: Table::header(&[
            "loss p",
            "p x W / .01",
            "Reno (Linux)",
            "CUBIC",
            "BBR v1",
            "BBR v3",
            "bound 1 - p",
            "Mathis (Reno)",
            "BBR v1 timeouts",
        ]),
        rows,
    }
}

/// The buffer path: utilisation and queueing delay per TCP and buffer.
fn buffer_table(m: &Measured) -> Table {
    let mut rows = Vec::new();
    for b in BUFFERS {
        for tcp in [Tcp::LinuxReno, Tcp::Cubic, Tcp::Bbr, Tcp::Bbr3] {
            let q = m.queue(tcp, b);
            rows.push(vec![
                format!("{b} BDP ({:.0} packets)", b * bdp_pkts(Net::Buffer)),
                tcp.label().to_string(),
                format!("{:.3}", q.util),
                format!("{:.1}", q.median_ms),
                format!("{:.1}", q.p95_ms),
                q.drops.to_string(),
            ]);
        }
    }
    Table {
        caption: format!(
            "Buffer path (10 Mbit/s x 120 ms, BDP 100 packets): bottleneck utilisation and queueing delay after the first {WARM_S:.0} s (the delay a packet arriving at a 10 ms sample would wait)"
        ),
        header: Table::header(&["buffer", "TCP", "utilisation", "median delay (ms)", "p95 delay (ms)", "drops"]),
        rows,
    }
}

/// Means over seeds of the efficiency of `tcp` on `net` at each loss rate (x in percent).
fn mean_line(m: &Measured, net: Net, tcp: Tcp, losses: &[f64]) -> MeanLine {
    let pts = losses
        .iter()
        .filter_map(|&x| {
            let (mu, s) = Measured::stat(&m.at(net, tcp, x), |r| r.eff)?;
            Some((x * 100.0, mu, s))
        })
        .collect();
    (tcp.label().to_string(), pts)
}

fn figures(p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Vec<Figure>> {
    let satnet: Vec<MeanLine> = [Tcp::Tahoe, Tcp::Reno, Tcp::Bbr, Tcp::Bbr3]
        .iter()
        .map(|&t| mean_line(m, Net::Satnet, t, satnet_losses(p)))
        .collect();
    let grid: Vec<f64> = (0..=20)
        .map(|i| 0.3 * 10f64.powf(f64::from(i) / 20.0))
        .collect();
    let bound = (
        "1 - p (a 1% throughput effect)".to_string(),
        grid.iter().map(|&x| (x, 1.0 - x / 100.0)).collect(),
    );
    let lossless = m.eff(Net::Satnet, Tcp::Bbr, 0.0).unwrap_or(f64::NAN);
    let flat = (
        "BBR v1 without loss".to_string(),
        vec![(grid[0], lossless), (grid[grid.len() - 1], lossless)],
    );
    let f1 = Figure::from_text(
        out,
        "satnet-efficiency",
        "Satnet (40 kb/s, 2.048 s): share of the channel against random loss",
        text,
        &[],
    )?
    .draw(plots::means_chart(
        "packet loss (%, log scale)",
        "goodput / channel data rate",
        &satnet,
        &[bound, flat],
        true,
    ))?;
    let f2 = Figure::from_text(
        out,
        "satnet-cwnd",
        "BBR on Satnet at 1% loss: the window, first 200 s",
        text,
        &[],
    )?
    .draw(cwnd_chart(m))?;
    let fat: Vec<MeanLine> = [Tcp::LinuxReno, Tcp::Cubic, Tcp::Bbr, Tcp::Bbr3]
        .iter()
        .map(|&t| mean_line(m, Net::Fat, t, fat_losses(p, t)))
        .collect();
    // From 0.001% to 20%, ten points a decade.
    let fgrid: Vec<f64> = (0..=43)
        .map(|i| 1e-3 * 10f64.powf(f64::from(i) / 10.0))
        .collect();
    let limit = 100.0 * 0.01 / bdp_pkts(Net::Fat);
    let models = vec![
        (
            "bound 1 - p".to_string(),
            fgrid.iter().map(|&x| (x, 1.0 - x / 100.0)).collect(),
        ),
        (
            "Mathis 1.22/sqrt(p) (Reno)".to_string(),
            fgrid
                .iter()
                .map(|&x| {
                    (
                        x,
                        (mathis_bps(x / 100.0, FAT_RTT) / data_rate(Net::Fat)).min(1.0),
                    )
                })
                .collect(),
        ),
        (
            "the seeds' limit .01/(bandwidth x delay)".to_string(),
            vec![(limit, 0.0), (limit, 1.0)],
        ),
    ];
    let f3 = Figure::from_text(
        out,
        "fat-loss",
        "100 Mbit/s x 100 ms: share of the link against random loss",
        text,
        &[],
    )?
    .draw(plots::means_chart(
        "packet loss (%, log scale)",
        "goodput / data rate",
        &fat,
        &models,
        true,
    ))?;
    let f4 = Figure::from_text(
        out,
        "buffer-queue",
        "10 Mbit/s x 120 ms, 2 BDP of drop-tail buffer: the queue",
        text,
        &[],
    )?
    .draw(queue_chart(m))?;
    Ok(vec![f1, f2, f3, f4])
}

/// BBR v1's and v3's windows on Satnet at 1% loss, in packets, with the pipe.
fn cwnd_chart(m: &Measured) -> Chart {
    let mut series = Vec::new();
    for (i, tcp) in [Tcp::Bbr, Tcp::Bbr3].iter().enumerate() {
        let pts = m
            .runs
            .iter()
            .find(|(c, r)| c.net == Net::Satnet && c.tcp == *tcp && r.cwnd.is_some())
            .and_then(|(_, r)| r.cwnd.clone())
            .unwrap_or_default();
        series.push(Series::new(
            tcp.label(),
            palette(i),
            Mark::Line,
            step_path(pts),
        ));
    }
    let pipe = SATNET_PIPE as f64;
    series.push(Series::new(
        "the pipe (40 packets)",
        palette(7),
        Mark::Dashed,
        vec![(0.0, pipe), (PLOT_S, pipe)],
    ));
    Chart {
        x_desc: "time (s)".into(),
        y_desc: "congestion window (packets)".into(),
        x_range: Some((0.0, PLOT_S)),
        ..Chart::one_panel(series)
    }
}

/// The queueing delay at the bottleneck with 2 BDP of buffer, per TCP.
fn queue_chart(m: &Measured) -> Chart {
    let series = [Tcp::LinuxReno, Tcp::Cubic, Tcp::Bbr, Tcp::Bbr3]
        .iter()
        .enumerate()
        .map(|(i, &tcp)| {
            let pts = m
                .of(Net::Buffer, tcp, 0.0, 2.0, Variant::Plain)
                .first()
                .and_then(|r| r.qdelay.clone())
                .unwrap_or_default();
            Series::new(tcp.label(), palette(i), Mark::Line, pts)
        })
        .collect();
    Chart {
        x_desc: "time (s)".into(),
        y_desc: "queueing delay (ms)".into(),
        ..Chart::one_panel(series)
    }
}
