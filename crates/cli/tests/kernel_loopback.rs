//! The datagram commands on kernel sockets (`--kernel`, no root) may use loopback: nothing
//! is routed through a TUN device then, so the live range (198.18.0.0/15, kept so that
//! ackclock never sends into a real network) does not apply. `rpc-server --kernel --listen
//! 127.0.0.1:...` used to be refused.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ackclock")
}

#[test]
fn a_kernel_socket_serves_and_reaches_loopback() {
    // Port 0: the kernel picks one, and the banner says which.
    let mut srv = Command::new(bin())
        .args([
            "rpc-server",
            "--kernel",
            "--listen",
            "127.0.0.1:0",
            "--time",
            "20s",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ackclock rpc-server");
    let out = srv.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    // Bounded wait for the banner (a condition, not a sleep).
    let banner = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("no banner from rpc-server within 10 s");
    let at = banner
        .split_whitespace()
        .find(|w| w.starts_with("127.0.0.1:"))
        .unwrap_or_else(|| panic!("no address in {banner:?}"))
        .to_string();
    let client = Command::new(bin())
        .args([
            "rpc",
            "--kernel",
            "--connect",
            &at,
            "--time",
            "500ms",
            "--json",
        ])
        .output()
        .expect("run ackclock rpc");
    // SAFETY: kill(2) on the PID of the child this test started.
    unsafe {
        libc::kill(srv.id() as i32, libc::SIGTERM);
    }
    let status = srv.wait().expect("wait for rpc-server");
    let err = String::from_utf8_lossy(&client.stderr);
    assert!(client.status.success(), "rpc --kernel to {at}: {err}");
    let j: serde_json::Value = serde_json::from_slice(&client.stdout).expect("JSON on stdout");
    assert!(j["completed"].as_u64().unwrap_or(0) > 0, "{j}\n{err}");
    assert!(status.success(), "rpc-server ended with {status}");
}
