//! The segment-input fuzz body (`ackclock_tcp::fuzzing::segments`) on random scripts, so
//! CI exercises on stable what `cargo fuzz run segments` explores on nightly.

use proptest::prelude::*;

proptest! {
    #![proptest_config(ackclock_testkit::proptest_config(3000))]

    #[test]
    fn arbitrary_segments_keep_the_invariants(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        ackclock_tcp::fuzzing::segments(&data);
    }
}
