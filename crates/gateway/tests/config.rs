//! Scenario-file shapes: every config parses from TOML as the simulator will read it,
//! rejects unknown fields, round-trips through serde, and builds.

use ackclock_gateway::{
    Impairments, ImpairmentsConfig, Link, LinkConfig, QdiscConfig, ScriptedDrop, TestPacket,
};

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    link: LinkConfig,
    queue: QdiscConfig,
    #[serde(default)]
    impair: ImpairmentsConfig,
}

#[test]
fn every_qdisc_kind_parses_and_builds() {
    let cases = [
        "kind = \"drop_tail\"\nlimit_pkts = 50",
        "kind = \"drop_tail\"\nlimit_bytes = 75000",
        "kind = \"random_drop\"\nlimit_pkts = 16\nearly_drop_threshold_pkts = 8\nearly_drop_prob = 0.02",
        "kind = \"red\"\nlimit_pkts = 60\nmin_th_pkts = 5\nmax_th_pkts = 15\nmax_p = 0.1\nw_q = 0.002\ngentle = true\necn = true",
        "kind = \"red\"\nlimit_bytes = 90000\nbyte_mode = true\nmean_pkt_bytes = 1000\nlink_rate_bps = 10000000",
        "kind = \"drr\"\nquantum_bytes = 1500\nbuckets = 64\nlimit_pkts = 200",
        "kind = \"codel\"\ntarget_ms = 5\ninterval_ms = 100\nlimit_pkts = 1000\necn = true",
        "kind = \"fq_codel\"",
        "kind = \"fq_codel\"\nbuckets = 1024\nquantum_bytes = 1514\nlimit_pkts = 10240\ntarget_ms = 5.0\ninterval_ms = 100.0\necn = false",
    ];
    for text in cases {
        let cfg: QdiscConfig = toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        cfg.validate().unwrap();
        let q = cfg.build::<TestPacket>(1).unwrap();
        assert_eq!(q.name(), cfg.kind());
        // Round trip.
        let back: QdiscConfig = toml::from_str(&toml::to_string(&cfg).unwrap()).unwrap();
        assert_eq!(back, cfg);
    }
}

#[test]
fn unknown_fields_and_kinds_are_rejected() {
    for text in [
        "kind = \"red\"\nlimit_pkts = 60\nminth = 5",
        "kind = \"codel\"\ntarget = 5",
        "kind = \"sfq\"",
        "limit_pkts = 5",
    ] {
        assert!(
            toml::from_str::<QdiscConfig>(text).is_err(),
            "{text} parsed"
        );
    }
    assert!(toml::from_str::<LinkConfig>("rate_bps = 1\ndelay = 3").is_err());
    assert!(toml::from_str::<ImpairmentsConfig>("loss = 0.1").is_err());
    assert!(toml::from_str::<ImpairmentsConfig>(
        "scripted = [{ kind = \"packets\", nth = [1], flow = 0 }]"
    )
    .is_err());
}

#[test]
fn invalid_values_parse_but_do_not_build() {
    let cfg: QdiscConfig =
        toml::from_str("kind = \"red\"\nlimit_pkts = 60\nmin_th_pkts = 20\nmax_th_pkts = 10")
            .unwrap();
    let err = cfg.build::<TestPacket>(0).err().unwrap();
    assert!(err.to_string().starts_with("red: `max_th_pkts`"), "{err}");
    let cfg: QdiscConfig = toml::from_str("kind = \"drop_tail\"").unwrap();
    assert!(cfg.build::<TestPacket>(0).is_err());
}

#[test]
fn a_whole_path() {
    let text = r#"
        [link]
        rate_bps = 10_000_000
        delay_ms = 0.05
        framing_overhead_bytes = 38
        min_wire_bytes = 84

        [queue]
        kind = "red"
        limit_pkts = 60

        [impair]
        loss_prob = 0.01
        ber = 1e-7
        gilbert = { p_good_to_bad = 0.01, r_bad_to_good = 0.3 }
        reorder = { prob = 0.01, delay_ms = 5 }
        duplicate_prob = 0.001
        scripted = [
          { kind = "data_segment", flow = 0, nth = [5] },
          { kind = "data_segment", dst_port = 80, nth = [7, 9] },
          { kind = "seq", seq = 14601, times = 1 },
          { kind = "packets", nth = [10, 11] },
          { kind = "outage", from_ms = 2000, to_ms = 2500 },
        ]
    "#;
    let mut s: Scenario = toml::from_str(text).unwrap();
    let link = Link::new(&s.link).unwrap();
    assert_eq!(link.serialization_time(1500).as_nanos(), 1_230_400);
    s.queue.set_link_rate_if_unset(s.link.rate_bps);
    match &s.queue {
        QdiscConfig::Red(r) => assert_eq!(r.link_rate_bps, Some(10_000_000)),
        other => panic!("{other:?}"),
    }
    s.queue.build::<Vec<u8>>(3).unwrap();
    assert_eq!(s.impair.scripted.len(), 5);
    assert_eq!(
        s.impair.scripted[2],
        ScriptedDrop::Seq {
            seq: 14601,
            times: Some(1),
            flow: None,
            src_port: None,
            dst_port: None
        }
    );
    assert_eq!(s.impair.gilbert.as_ref().unwrap().loss_in_bad, 1.0);
    Impairments::new(&s.impair, 3).unwrap();
    assert!(!s.impair.is_empty());
    assert!(ImpairmentsConfig::default().is_empty());
}

/// `QdiscConfig::fields` lists exactly what serde accepts for each kind: serde names the
/// expected fields when it meets an unknown one.
#[test]
fn field_lists_match_what_each_kind_accepts() {
    for kind in QdiscConfig::KINDS {
        let text = format!("kind = \"{kind}\"\nno_such_field_probe = 1\n");
        let err = toml::from_str::<QdiscConfig>(&text)
            .err()
            .unwrap_or_else(|| panic!("{kind} accepted an unknown field"))
            .to_string();
        let expected = err
            .split("expected one of ")
            .nth(1)
            .or_else(|| err.split("expected ").nth(1))
            .unwrap_or_else(|| panic!("{kind}: {err}"));
        let mut serde_fields: Vec<&str> = expected
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|f| *f != "kind")
            .collect();
        let mut ours: Vec<&str> = QdiscConfig::fields(kind).expect("listed").to_vec();
        serde_fields.sort();
        ours.sort();
        assert_eq!(ours, serde_fields, "{kind}: {err}");
    }
    assert_eq!(QdiscConfig::fields("fifo"), None);
}
