#![no_main]
// The check lives in ackclock_gateway::fuzzing so the property test runs it on stable too.
libfuzzer_sys::fuzz_target!(|data: &[u8]| ackclock_gateway::fuzzing::trace(data));
