//! The library's live pieces against the real kernel (root only; SKIP otherwise): a host
//! serving echo on a TUN device moved into a namespace, and the emulator forwarding
//! between two namespaces. Every wait is bounded and everything is removed on drop.

use ackclock_apps::services::{Service, ServiceOptions, ServicesApp};
use ackclock_apps::{App, Ctx};
use ackclock_tcp::TcpConfig;
use ackclock_tun::netcfg::NetNs;
use ackclock_tun::sys::Tun;
use ackclock_tun::{DeviceConfig, Emulator, EmulatorConfig, Host, RunEnd, Topology};
use ackclock_wire::{Duration, Instant};
use std::process::Command;

fn can_run(test: &str, tools: &[&str]) -> bool {
    if !ackclock_tun::is_root() {
        println!("SKIP: {test}: needs root (TUN devices, network namespaces)");
        return false;
    }
    for t in ["ip"].iter().chain(tools) {
        if Command::new("sh")
            .args(["-c", &format!("command -v {t}")])
            .output()
            .map_or(true, |o| !o.status.success())
        {
            println!("SKIP: {test}: `{t}` is not installed");
            return false;
        }
    }
    true
}

fn unique(p: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{p}{}x{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Runs `sh -c` in a namespace, killed (by PID) after 20 s.
fn sh_in(ns: &str, script: &str) -> (bool, String) {
    let mut child = Command::new("ip")
        .args(["netns", "exec", ns, "sh", "-c", script])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > end {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let o = child.wait_with_output().unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
    )
}

#[test]
fn bad_interface_names_are_refused() {
    for name in ["", "a/b", "sixteen-chars-xx"] {
        let e = Tun::open(name).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{name:?}");
    }
}

/// Ends the loop after a deadline whatever the inner application does.
struct Bounded<A: App> {
    inner: A,
    until: Duration,
    now: Instant,
}

impl<A: App> App for Bounded<A> {
    fn poll(&mut self, cx: &mut Ctx<'_>) -> Option<Instant> {
        self.now = cx.now;
        let d = Instant::ZERO + self.until;
        if cx.now >= d {
            return None;
        }
        Some(self.inner.poll(cx).map_or(d, |t| t.min(d)))
    }
    fn is_done(&self) -> bool {
        self.now >= Instant::ZERO + self.until || self.inner.is_done()
    }
    fn shutdown(&mut self, cx: &mut Ctx<'_>) {
        self.inner.shutdown(cx)
    }
}

#[test]
fn host_serves_echo_on_a_device_in_a_namespace() {
    if !can_run("host_serves_echo_on_a_device_in_a_namespace", &["nc"]) {
        return;
    }
    let ns = NetNs::create(&unique("acktun")).unwrap();
    let cfg = DeviceConfig {
        netns: Some(ns.name().to_string()),
        ..DeviceConfig::default()
    };
    let mut host = Host::new(&cfg).unwrap();
    let name = ns.name().to_string();
    let client = std::thread::spawn(move || {
        sh_in(&name, "printf 'ping over TUN\\n' | nc -N -w 5 198.18.0.2 7")
    });
    let mut app = Bounded {
        inner: ServicesApp::new(
            vec![(7, Service::Echo)],
            ServiceOptions {
                tcp: TcpConfig::sack(),
                max_conns: Some(1),
                chargen_bytes: None,
                print: false,
                backlog: 4,
            },
        ),
        until: Duration::from_secs(20),
        now: Instant::ZERO,
    };
    let end = host.run(&mut app).unwrap();
    host.finish().unwrap();
    let (ok, out) = client.join().unwrap();
    assert!(ok, "{out}");
    assert_eq!(out, "ping over TUN\n");
    assert_eq!(end, RunEnd::Done);
    let s = &app.inner.finished[0];
    assert_eq!((s.bytes_in, s.bytes_out), (14, 14));
    assert!(s.error.is_none());
    assert!(host.counters.packets_in >= 4 && host.counters.packets_out >= 4);
    let _ = app.now;
}

#[test]
fn emulator_forwards_both_ways_and_cleans_up() {
    if !can_run("emulator_forwards_both_ways_and_cleans_up", &["ping"]) {
        return;
    }
    let topo = Topology {
        left_ns: unique("ackeL"),
        right_ns: unique("ackeR"),
        ..Topology::default()
    };
    let (l, r) = (topo.left_ns.clone(), topo.right_ns.clone());
    let l2 = l.clone();
    let cfg: EmulatorConfig = toml::from_str(
        "[left_to_right]\nlink = { rate_bps = 10_000_000, delay_ms = 5.0 }\n[right_to_left]\n",
    )
    .unwrap();
    let mut emu = Emulator::new(&cfg, topo).unwrap();
    let pinger = std::thread::spawn(move || sh_in(&l, "ping -n -c 5 -i 0.1 -W 2 198.18.2.1"));
    let report = emu.run(Some(std::time::Duration::from_secs(2))).unwrap();
    let (ok, out) = pinger.join().unwrap();
    assert!(ok, "{out}");
    assert!(out.contains("5 received"), "{out}");
    // Requests crossed the 5 ms link, replies came straight back.
    assert!(report.left_to_right.delivered_pkts >= 5);
    assert!(report.right_to_left.delivered_pkts >= 5);
    let min = report.left_to_right.delay.min().unwrap();
    assert!(min >= Duration::from_millis(5), "{min:?}");
    // The reverse direction has no link: the bare forwarder (no delay measured).
    assert_eq!(report.right_to_left.delay.count(), 0);
    drop(emu);
    for ns in [&l2, &r] {
        assert!(
            !std::path::Path::new("/run/netns").join(ns).exists(),
            "namespace {ns} removed"
        );
    }
}
