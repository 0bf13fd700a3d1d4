//! The text summary and the CSV of an [`Analysis`].

use crate::model::{Analysis, Connection, Direction};
use crate::stats::Summary;
use std::fmt::Write as _;

/// A rate in bits per second, with a unit.
fn rate(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} Gb/s", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{:.2} Mb/s", bps / 1e6)
    } else {
        format!("{:.1} kb/s", bps / 1e3)
    }
}

fn rtt_line(name: &str, s: &Summary) -> String {
    format!(
        "{name} {} samples: p50 {:.2} ms, p90 {:.2}, p99 {:.2}; min {:.2}, mean {:.2}, max {:.2}, sd {:.2}",
        s.count, s.p50, s.p90, s.p99, s.min, s.mean, s.max, s.sd
    )
}

/// The text summary: per connection, what happened in each direction, people first.
pub fn text(a: &Analysis) -> String {
    let mut o = String::new();
    let p = &a.packets;
    let malformed: u64 = p.malformed.values().sum();
    let _ = writeln!(
        o,
        "{} packets: {} TCP/IPv4 in {} connection{}; {} malformed, {} not IPv4, {} not TCP, {} fragments",
        p.total,
        p.tcp,
        a.connections.len(),
        if a.connections.len() == 1 { "" } else { "s" },
        malformed,
        p.not_ipv4,
        p.not_tcp,
        p.fragments
    );
    for (why, n) in &p.malformed {
        let _ = writeln!(o, "  {n:>8}  {why}");
    }
    if p.untracked > 0 {
        let _ = writeln!(
            o,
            "  {} segments of connections beyond the first {} not analysed",
            p.untracked,
            crate::MAX_CONNECTIONS
        );
    }
    if let Some(s) = &a.stopped {
        let _ = writeln!(o, "reading stopped early: {s}");
    }
    for c in &a.connections {
        connection(&mut o, c);
    }
    o
}

fn connection(o: &mut String, c: &Connection) {
    let _ = writeln!(
        o,
        "\nconnection {}: {} <-> {}, {:.3} s from {:.3} s, {} packets{}{}",
        c.index,
        c.a,
        c.b,
        c.duration_s,
        c.first_s,
        c.packets,
        if c.reset {
            ", reset"
        } else if c.complete {
            ", complete"
        } else {
            ", incomplete (not both SYNs and FINs captured)"
        },
        match (c.window_scaling.known, c.window_scaling.in_effect) {
            (false, _) => ", SYNs not captured: windows taken unscaled",
            (true, true) => "",
            (true, false) => ", no window scaling",
        }
    );
    direction(o, &c.directions[0], &c.directions[1]);
    direction(o, &c.directions[1], &c.directions[0]);
}

/// One direction `d`; `back` is the other, whose ACKs carried the SACK blocks about `d`.
fn direction(o: &mut String, d: &Direction, back: &Direction) {
    if d.data_pkts == 0 {
        let _ = writeln!(o, "  {} > {}: no data, {} packets", d.from, d.to, d.packets);
        return;
    }
    let _ = writeln!(
        o,
        "  {} > {}: {} bytes ({} sent in {} segments), goodput {}",
        d.from,
        d.to,
        d.unique_bytes,
        d.data_bytes,
        d.data_pkts,
        rate(d.goodput_bps)
    );
    match &d.rtt_ms {
        Some(s) => {
            let _ = writeln!(o, "    {}", rtt_line("RTT", s));
        }
        None => {
            let _ = writeln!(o, "    RTT: no sample");
        }
    }
    if let Some(s) = &d.ts_rtt_ms {
        let _ = writeln!(o, "    {}", rtt_line("timestamp RTT", s));
    }
    let sp = &d.spurious;
    let _ = writeln!(
        o,
        "    retransmitted {} segments ({} bytes), spurious {} (D-SACK {}, already ACKed {}); out of order {}",
        d.rexmt_pkts, d.rexmt_bytes, sp.total, sp.dsack, sp.already_acked, d.out_of_order_pkts
    );
    let _ = writeln!(
        o,
        "    duplicate ACKs {} (triple {}); SACK options in {} ACKs (D-SACK {}); zero windows advertised to it {}",
        d.dup_acks, d.triple_dup_acks, back.sack_pkts, back.dsack_pkts, back.zero_window_adv
    );
    let l = &d.limits;
    let _ = writeln!(
        o,
        "    mostly limited by {}; time limited by the receive window {:.3} s, by cwnd (inferred) {:.3} s, with nothing outstanding {:.3} s; at most {} bytes outstanding",
        l.main_limit(),
        l.rwnd_limited_s,
        l.cwnd_limited_inferred_s,
        l.idle_s,
        l.max_outstanding
    );
    if d.bounded > 0 {
        let _ = writeln!(
            o,
            "    approximate: {} records or samples beyond the memory bounds",
            d.bounded
        );
    }
}

/// The CSV header: the columns of [`csv`].
pub const CSV_HEADER: &str = "connection,from,to,duration_s,packets,data_pkts,data_bytes,unique_bytes,goodput_bps,rexmt_pkts,rexmt_bytes,spurious,spurious_dsack,spurious_acked,out_of_order_pkts,dup_acks,triple_dup_acks,zero_window_adv,sack_pkts,dsack_pkts,rtt_samples,rtt_p50_ms,rtt_p90_ms,rtt_p99_ms,rtt_min_ms,rtt_mean_ms,rtt_max_ms,rtt_sd_ms,ts_rtt_samples,ts_rtt_p50_ms,handshake_rtt_ms,rwnd_limited_s,cwnd_limited_inferred_s,idle_s,max_outstanding";

/// One row per connection and direction, under [`CSV_HEADER`]; an absent value is empty.
pub fn csv(a: &Analysis) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{CSV_HEADER}");
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
    for c in &a.connections {
        for d in &c.directions {
            let r = d.rtt_ms.as_ref();
            let sp = &d.spurious;
            let l = &d.limits;
            let _ = writeln!(
                o,
                "{},{},{},{:.6},{},{},{},{},{:.0},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6},{:.6},{:.6},{}",
                c.index,
                d.from,
                d.to,
                c.duration_s,
                d.packets,
                d.data_pkts,
                d.data_bytes,
                d.unique_bytes,
                d.goodput_bps,
                d.rexmt_pkts,
                d.rexmt_bytes,
                sp.total,
                sp.dsack,
                sp.already_acked,
                d.out_of_order_pkts,
                d.dup_acks,
                d.triple_dup_acks,
                d.zero_window_adv,
                d.sack_pkts,
                d.dsack_pkts,
                r.map_or(0, |s| s.count),
                opt(r.map(|s| s.p50)),
                opt(r.map(|s| s.p90)),
                opt(r.map(|s| s.p99)),
                opt(r.map(|s| s.min)),
                opt(r.map(|s| s.mean)),
                opt(r.map(|s| s.max)),
                opt(r.map(|s| s.sd)),
                d.ts_rtt_ms.as_ref().map_or(0, |s| s.count),
                opt(d.ts_rtt_ms.as_ref().map(|s| s.p50)),
                opt(d.handshake_rtt_ms),
                l.rwnd_limited_s,
                l.cwnd_limited_inferred_s,
                l.idle_s,
                l.max_outstanding
            );
        }
    }
    o
}
