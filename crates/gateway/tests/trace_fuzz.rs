//! The trace fuzz target's check (`ackclock_gateway::fuzzing::trace`) on stable: traces of
//! random opportunity times and random text (with valid lines mixed in) either read with a
//! line-numbered error or serve packets in order, never before they are ready.

use proptest::prelude::*;

proptest! {
    #![proptest_config(ackclock_testkit::proptest_config(256))]

    /// Valid traces: non-decreasing times, as text.
    #[test]
    fn mahimahi_traces_serve_packets_in_order(mut v in prop::collection::vec(0u64..5000, 1..200)) {
        v.sort_unstable();
        let text: String = v.iter().map(|t| format!("{t}\n")).collect();
        ackclock_gateway::fuzzing::trace(text.as_bytes());
    }

    /// Any text: a trace or an error naming a line of it.
    #[test]
    fn any_text_is_a_trace_or_a_line_numbered_error(s in "([0-9]{1,4}|#.*|-1|x|)(\n([0-9]{1,4}|#.*| ))*") {
        ackclock_gateway::fuzzing::trace(s.as_bytes());
    }
}
