#![no_main]
// Any bytes as a script: parsing ends with a script or an error naming a line, and a
// script that parses runs to pass or fail (virtual time, bounded timer steps), never a
// panic or a hang.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(s) = ackclock_packetdrill::Script::parse("fuzz.pkt", &text, &["STANDARD"]) {
        let _ = ackclock_packetdrill::run(&s, &ackclock_packetdrill::RunOptions::default());
        // And under profile L (google/packetdrill's Linux defaults).
        let linux = ackclock_packetdrill::RunOptions {
            profile: ackclock_packetdrill::profile::Profile::Linux,
            ..Default::default()
        };
        let _ = ackclock_packetdrill::run(&s, &linux);
    }
});
