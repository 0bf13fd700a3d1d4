#![no_main]
// The checks live in ackclock_wire::fuzzing so the property tests run them on stable too.
libfuzzer_sys::fuzz_target!(|data: &[u8]| ackclock_wire::fuzzing::udp(data));
