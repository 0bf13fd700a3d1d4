//! The live commands that open a TUN device, run without the privilege to: one clear line
//! that says to run as root, and the operating system's error said once (it was printed
//! twice, with a hint about interface names that did not apply).
//!
//! As root the commands run as `nobody` through `setpriv`; as another user they run as is.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `ackclock ARGS` as an unprivileged user, its exit code and stderr; None when this machine
/// cannot drop to one (root without `setpriv`, or a binary `nobody` may not run).
fn unprivileged(args: &[&str]) -> Option<(Option<i32>, String)> {
    let bin = env!("CARGO_BIN_EXE_ackclock");
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut c = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", bin]);
        c
    } else {
        Command::new(bin)
    };
    c.args(args)
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = c.spawn().ok()?;
    // Bounded: these commands fail at once; a run that hangs is killed (by PID) and fails.
    let end = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().ok()? {
            break Some(s);
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut()?, &mut err).ok()?;
    // setpriv itself failed, or nobody may not execute the binary (a private target dir).
    if err.contains("setpriv:") || err.contains("Permission denied") {
        println!("SKIP: cannot run ackclock as an unprivileged user here: {err}");
        return None;
    }
    Some((status.and_then(|s| s.code()), err))
}

#[test]
fn tun_commands_without_privilege_say_to_run_as_root_once() {
    for args in [
        &["echo"][..],
        &["discard"],
        &["chargen"],
        &["stream", "--connect", "198.18.0.1:5001"],
        &["stream", "--listen", "198.18.0.2:5001"],
    ] {
        let Some((code, err)) = unprivileged(args) else {
            return;
        };
        let what = args.join(" ");
        assert_eq!(code, Some(1), "ackclock {what}: {err}");
        assert_eq!(err.lines().count(), 1, "ackclock {what}: one line:\n{err}");
        assert!(
            err.contains("run ackclock as root (sudo) or give it CAP_NET_ADMIN"),
            "ackclock {what}: {err}"
        );
        assert_eq!(
            err.matches("Operation not permitted").count(),
            1,
            "ackclock {what}: the OS error once: {err}"
        );
        assert!(!err.contains("name taken"), "ackclock {what}: {err}");
    }
}
