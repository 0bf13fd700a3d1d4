//! The segment-input fuzz body (`ackclock_testkit::fuzzing::segments`) on random scripts, so
//! CI exercises on stable what `cargo fuzz run segments` explores on nightly.

use proptest::prelude::*;

proptest! {
    #![proptest_config(ackclock_testkit::proptest_config(3000))]

    #[test]
    fn arbitrary_segments_keep_the_invariants(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        ackclock_testkit::fuzzing::segments(&data);
    }
}

/// Inputs the fuzzer and an adversarial audit found (each an ACK storm between two
/// desynchronised ends: 2.85 M packets from the 32-byte `storm-min.bin`, past libFuzzer's
/// 30 s timeout from `timeout-*`, up to 9 M packets from the `slow-unit-*`; and `burst-*`,
/// a send window frozen at 1 byte by a blind segment, 6,142 packets in two minutes, see
/// `rfc5961_blind_segment_far_ahead_cannot_freeze_the_send_window`; `burst-a72f7dc5`, a
/// crafted segment with an MSS option of 1 that had the engine send a byte per packet, see
/// `min_snd_mss_a_peer_mss_below_64_bytes_is_raised_to_64`). They must now finish
/// with bounded output.
#[test]
fn fuzz_found_ack_storms_stay_bounded() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fuzz-regressions");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let started = std::time::Instant::now();
        ackclock_testkit::fuzzing::segments(&data);
        eprintln!("{}: {:?}", path.display(), started.elapsed());
        n += 1;
    }
    assert_eq!(n, 7);
}
