#![no_main]
// Arbitrary segments to connections in every state; the checks live in
// ackclock_testkit::fuzzing so a property test runs them on stable too.
libfuzzer_sys::fuzz_target!(|data: &[u8]| ackclock_testkit::fuzzing::segments(data));
