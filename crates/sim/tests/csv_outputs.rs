//! The CSV files `ackclock sim` writes load without guessing: every row has the header's
//! columns, a row says what it is (the columns of other kinds of event are empty), an
//! infinite ssthresh is `inf`, relative sequence numbers start at the ISN, and the
//! throughput series adds up to what was acknowledged.

use ackclock_sim::{build, Scenario};
use std::path::Path;

const SCENARIO: &str = r#"
name = "csv"
seed = 3
duration_s = 5
[topology]
kind = "dumbbell"
pairs = 1
access = { rate_bps = 100e6, delay_ms = 1 }
bottleneck = { rate_bps = 2e6, delay_ms = 20, queue = { kind = "drop_tail", limit_pkts = 10 } }
[topology.flows]
tcp = "newreno"
app = { kind = "bulk" }
"#;

fn rows(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(String::from).collect::<Vec<_>>())
        .collect();
    (header, rows)
}

#[test]
fn flow_and_throughput_csvs_describe_themselves() {
    let dir = std::env::temp_dir().join(format!("ackclock-csv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let s = Scenario::from_str_named(SCENARIO, Path::new("csv.toml")).unwrap();
    let r = build(&s, Some(&dir)).unwrap().run(|_| {});
    r.write_files(&dir).unwrap();
    let name = &r.summary.flows[0].name;
    let flow = std::fs::read_to_string(dir.join(format!("flow-{name}.csv"))).unwrap();
    let tput = std::fs::read_to_string(dir.join(format!("throughput-{name}.csv"))).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();

    let (h, rows) = self::rows(&flow);
    let col = |n: &str| {
        h.iter()
            .position(|c| c == n)
            .unwrap_or_else(|| panic!("no {n}"))
    };
    assert!(rows.len() > 100);
    for r in &rows {
        assert_eq!(r.len(), h.len(), "{r:?}");
    }
    let (ev, seq, seq_rel, ack, rtt, state, ssthresh) = (
        col("event"),
        col("seq"),
        col("seq_rel"),
        col("ack"),
        col("rtt_ms"),
        col("state"),
        col("ssthresh_bytes"),
    );
    // The first data byte is 1 relative to the ISN, as Wireshark counts.
    let first_send = rows.iter().find(|r| r[ev] == "send").unwrap();
    assert_eq!(first_send[seq_rel], "1");
    for r in &rows {
        match r[ev].as_str() {
            "send" | "retransmit" => assert!(!r[seq].is_empty() && r[ack].is_empty()),
            "ack" => assert!(r[seq].is_empty() && !r[ack].is_empty()),
            "rtt_sample" => assert!(r[rtt].parse::<f64>().unwrap() > 40.0),
            "state" => assert!(!r[state].is_empty()),
            _ => {}
        }
        if r[ev] != "rtt_sample" {
            assert!(r[rtt].is_empty());
        }
        assert!(r[ssthresh] == "inf" || r[ssthresh].parse::<u32>().is_ok());
    }
    // Slow start begins with no threshold.
    assert_eq!(rows[0][ssthresh], "inf");

    let (th, trows) = self::rows(&tput);
    assert_eq!(th, ["time_s", "interval_s", "acked_bytes", "goodput_mbps"]);
    let total: u64 = trows.iter().map(|r| r[2].parse::<u64>().unwrap()).sum();
    // What SND.UNA moved past, less the SYN: the data acknowledged (no FIN in 5 s of bulk).
    let una = |row: &Vec<String>| row[col("snd_una_rel")].parse::<u64>().unwrap();
    let acked = una(rows.last().unwrap()) - 1;
    assert_eq!(total, acked);
    let delivered = r.summary.flows[0].bytes_delivered;
    assert!(
        acked <= delivered && delivered - acked < 20 * 1460,
        "{acked} vs {delivered}"
    );
}

/// The column names of the table under `heading` in docs/OUTPUTS.md (first cell of each
/// row, backquoted).
fn documented_columns(doc: &str, heading: &str) -> Vec<String> {
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("docs/OUTPUTS.md has no {heading:?}"));
    doc[start..]
        .lines()
        .skip(1)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.split('|')
                .nth(1)
                .unwrap()
                .trim()
                .trim_matches('`')
                .to_string()
        })
        .collect()
}

#[test]
fn every_documented_csv_column_is_in_the_files_and_no_other() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/OUTPUTS.md"),
    )
    .unwrap();
    let dir = std::env::temp_dir().join(format!("ackclock-csvdoc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let s = Scenario::from_str_named(SCENARIO, Path::new("csv.toml")).unwrap();
    let r = build(&s, Some(&dir)).unwrap().run(|_| {});
    r.write_files(&dir).unwrap();
    let name = &r.summary.flows[0].name;
    let header = |file: &str| -> Vec<String> {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        text.lines()
            .next()
            .unwrap()
            .split(',')
            .map(String::from)
            .collect()
    };
    let queue = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|f| f.starts_with("queue-"))
        .unwrap();
    for (heading, file) in [
        ("### `flow-<flow>.csv`", format!("flow-{name}.csv")),
        (
            "### `throughput-<flow>.csv`",
            format!("throughput-{name}.csv"),
        ),
        (
            "### `link-<from>-<to>.csv`",
            queue.replacen("queue-", "link-", 1),
        ),
        ("### `queue-<from>-<to>.csv`", queue),
    ] {
        assert_eq!(
            documented_columns(&doc, heading),
            header(&file),
            "{file}: the columns and docs/OUTPUTS.md's table differ"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The per-link throughput series adds up to the bytes the link sent (up to the last
/// sample) and its drops to the link's drops: it is the link's own counter, cut in bins.
#[test]
fn link_throughput_series_adds_up_to_the_links_counters() {
    let dir = std::env::temp_dir().join(format!("ackclock-linkcsv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let s = Scenario::from_str_named(SCENARIO, Path::new("csv.toml")).unwrap();
    let r = build(&s, Some(&dir)).unwrap().run(|_| {});
    r.write_files(&dir).unwrap();
    let bottleneck = r
        .summary
        .links
        .iter()
        .max_by_key(|l| l.queue_drops)
        .unwrap();
    assert!(
        bottleneck.queue_drops > 0,
        "the scenario should overflow its queue"
    );
    let text = std::fs::read_to_string(dir.join(format!("link-{}.csv", bottleneck.name))).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let (h, rows) = self::rows(&text);
    assert_eq!(
        h,
        [
            "time_s",
            "interval_s",
            "sent_bytes",
            "throughput_mbps",
            "dropped_pkts"
        ]
    );
    // 5 s in bins of 0.1 s (10 ms samples divide them exactly).
    assert!(rows.len() >= 49, "{} rows", rows.len());
    for (i, row) in rows.iter().enumerate() {
        let t: f64 = row[0].parse().unwrap();
        let dt: f64 = row[1].parse().unwrap();
        assert!(
            (t - i as f64 * 0.1).abs() < 1e-6 && (dt - 0.1).abs() < 1e-6,
            "{row:?}"
        );
        let mbps: f64 = row[3].parse().unwrap();
        // The bottleneck runs at 2 Mbit/s, and a bin counts the packets whose transmission
        // started in it: at most one packet (1500 bytes, 0.12 Mbit/s over 0.1 s) more.
        assert!(mbps <= 2.0 + 0.12 + 1e-9, "{row:?}");
    }
    let sent: u64 = rows.iter().map(|r| r[2].parse::<u64>().unwrap()).sum();
    let dropped: u64 = rows.iter().map(|r| r[4].parse::<u64>().unwrap()).sum();
    // The series ends at the last sample; the link's counters at the end of the run.
    assert!(
        sent <= bottleneck.bytes && bottleneck.bytes - sent <= 2 * 1500 * 10,
        "{sent} vs {}",
        bottleneck.bytes
    );
    assert!(dropped <= bottleneck.queue_drops && bottleneck.queue_drops - dropped <= 5);
    // Busy most of the time: a saturated bottleneck's mean rate is close to its capacity.
    let mean_mbps = sent as f64 * 8.0 / (rows.len() as f64 * 0.1) / 1e6;
    assert!(mean_mbps > 1.6, "{mean_mbps}");
}

/// RFC 2018's blocks and the advertised window reach the flow CSV (and so the
/// time-sequence plot): each `sack` row is a block above the cumulative ACK at that moment,
/// and every `ack` row carries the window its ACK advertised.
#[test]
fn sack_rows_are_blocks_above_the_ack_and_ack_rows_carry_the_window() {
    const LOSSY: &str = r#"
name = "sack"
seed = 2
duration_s = 4
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
a = "a"
b = "b"
rate_bps = 10e6
delay_ms = 20
impair_ab = { loss_prob = 0.02 }
[[flow]]
from = "a"
to = "b"
tcp = "sack"
tcp_overrides = { recv_buffer_bytes = 65536 }
app = { kind = "bulk" }
"#;
    let s = Scenario::from_str_named(LOSSY, Path::new("sack.toml")).unwrap();
    let r = build(&s, None).unwrap().run(|_| {});
    let csv = ackclock_sim::results::flow_csv(&r.traces[0]);
    let (h, rows) = self::rows(&csv);
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let (ev, seq_rel, len, ack_rel, win, una_rel) = (
        col("event"),
        col("seq_rel"),
        col("len"),
        col("ack_rel"),
        col("window_bytes"),
        col("snd_una_rel"),
    );
    let num = |r: &Vec<String>, c: usize| r[c].parse::<u64>().unwrap();
    let mut sacks = 0;
    for r in &rows {
        match r[ev].as_str() {
            "sack" => {
                sacks += 1;
                assert!(num(r, len) > 0, "{r:?}");
                // Above SND.UNA (as it was before this ACK): the receiver holds it out of
                // order.
                assert!(num(r, seq_rel) > num(r, una_rel), "{r:?}");
                assert!(r[win].is_empty());
            }
            "ack" => {
                assert!(num(r, ack_rel) > 0);
                // The receiver's 64 KiB buffer, less what it holds: never more.
                let w = num(r, win);
                assert!(w > 0 && w <= 65536, "{r:?}");
            }
            _ => assert!(r[win].is_empty(), "{r:?}"),
        }
    }
    assert!(sacks > 10, "{sacks} SACK blocks with 2% loss");
}

/// Every field of a TCP flow's entry in summary.json is in docs/OUTPUTS.md's table and the
/// table has no other (but `datagram`, which only a datagram flow has): the RACK-TLP
/// counters (RFC 8985) came with this check. (serde_json's map is sorted, so the sets are
/// compared, not the order.)
#[test]
fn summary_json_flow_fields_are_the_documented_ones() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/OUTPUTS.md"),
    )
    .unwrap();
    let s = Scenario::from_str_named(SCENARIO, Path::new("csv.toml")).unwrap();
    let r = build(&s, None).unwrap().run(|_| {});
    let v = serde_json::to_value(&r.summary).unwrap();
    let fields: Vec<String> = v["flows"][0].as_object().unwrap().keys().cloned().collect();
    let mut documented = documented_columns(&doc, "### `summary.json`");
    assert_eq!(documented.pop().as_deref(), Some("datagram"));
    documented.sort();
    assert_eq!(fields, documented);
}
