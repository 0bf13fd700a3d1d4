#![no_main]
// The check lives in ackclock_analyze::fuzzing so the property test runs it on stable too.
libfuzzer_sys::fuzz_target!(|data: &[u8]| ackclock_analyze::fuzzing::capture(data));
