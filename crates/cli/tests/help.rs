//! What `--help` says: each command describes its own flags and no other command's.

use std::process::Command;

fn help(cmd: &str) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_ackclock"))
        .args([cmd, "--help"])
        .output()
        .expect("run ackclock");
    assert!(o.status.success(), "ackclock {cmd} --help failed");
    String::from_utf8(o.stdout).expect("UTF-8 help")
}

/// `--bytes` is chargen's: discard's and echo's help used to describe it too (and the
/// command then refused it).
#[test]
fn only_chargen_describes_bytes() {
    assert!(help("chargen").contains("--bytes <SIZE>"));
    for cmd in ["discard", "echo"] {
        let h = help(cmd);
        assert!(!h.contains("--bytes"), "ackclock {cmd} --help:\n{h}");
        assert!(!h.contains("chargen: close"), "ackclock {cmd} --help:\n{h}");
    }
}
