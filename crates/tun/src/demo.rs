//! `ackclock live-demo`'s application: ackclock serving echo, discard and chargen on a TUN
//! device in a namespace of its own, while a script of `nc` and `ss` commands runs on the
//! Linux side of it, one after the other, each bounded in time and ended by its PID if it
//! hangs.

use crate::netcfg::NetNs;
use ackclock_apps::services::{Service, ServiceOptions, ServicesApp};
use ackclock_apps::{App, Ctx};
use ackclock_tcp::TcpConfig;
use ackclock_wire::{Duration, Instant};
use std::io::{Read, Write};
use std::net::Ipv4Addr;
use std::process::{Child, Command, Stdio};

/// One step of the script: its title and the shell command run in the namespace.
pub struct Step {
    /// What it shows.
    pub title: &'static str,
    /// The shell command, run in the namespace.
    pub cmd: String,
}

/// The services, and the script running against them; prints each step's output.
pub struct DemoApp {
    /// The services: echo (7), discard (9), chargen (19).
    pub services: ServicesApp,
    ns: String,
    steps: Vec<Step>,
    next: usize,
    child: Option<(Child, Instant)>,
    keep: bool,
    hinted: bool,
    now: Instant,
    /// The steps that failed, with why.
    pub failed: Vec<String>,
    done: bool,
}

impl DemoApp {
    fn start_next(&mut self, now: Instant) {
        let Some(step) = self.steps.get(self.next) else {
            return;
        };
        println!(
            "\n# {}\n$ ip netns exec {} sh -c \"{}\"",
            step.title, self.ns, step.cmd
        );
        let _ = std::io::stdout().flush();
        match Command::new("ip")
            .args(["netns", "exec", &self.ns, "sh", "-c", &step.cmd])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
        {
            Ok(c) => self.child = Some((c, now)),
            Err(e) => {
                self.failed.push(format!("{}: {e}", step.title));
                self.next += 1;
            }
        }
    }

    fn check_child(&mut self, now: Instant) {
        let Some((child, started)) = self.child.as_mut() else {
            return;
        };
        let status = match child.try_wait() {
            Ok(Some(s)) => Some(s),
            Ok(None) if now - *started > Duration::from_secs(10) => {
                // Bounded: a step that hangs is ended (by its PID) and reported.
                let _ = child.kill();
                child.wait().ok()
            }
            Ok(None) => return,
            Err(_) => None,
        };
        let mut out = String::new();
        let mut err = String::new();
        if let Some(o) = child.stdout.as_mut() {
            let _ = o.read_to_string(&mut out);
        }
        if let Some(e) = child.stderr.as_mut() {
            let _ = e.read_to_string(&mut err);
        }
        print!("{out}");
        if !out.ends_with('\n') && !out.is_empty() {
            println!();
        }
        if !err.trim().is_empty() {
            println!("(stderr) {}", err.trim());
        }
        if !status.is_some_and(|s| s.success()) {
            self.failed.push(format!(
                "{}: exit status {:?}",
                self.steps[self.next].title,
                status.and_then(|s| s.code())
            ));
        }
        self.child = None;
        self.next += 1;
    }
}

impl App for DemoApp {
    fn poll(&mut self, cx: &mut Ctx<'_>) -> Option<Instant> {
        let now = cx.now;
        self.now = now;
        self.services.poll(cx);
        self.check_child(now);
        if self.child.is_none() && self.next < self.steps.len() {
            self.start_next(now);
        }
        let demo_done = self.child.is_none() && self.next >= self.steps.len();
        if self.services.is_done() {
            self.done = true;
            return None;
        }
        if demo_done && self.keep && !self.hinted {
            self.hinted = true;
            println!(
                "\nstill serving; try: sudo ip netns exec {} nc 198.18.0.2 7   (Ctrl-C here to stop)",
                self.ns
            );
            let _ = std::io::stdout().flush();
        }
        if demo_done && !self.keep && self.services.open_connections() == 0 {
            self.done = true;
        }
        // Poll the child every 10 ms while it runs.
        self.child
            .as_ref()
            .map(|_| self.now + Duration::from_millis(10))
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn shutdown(&mut self, cx: &mut Ctx<'_>) {
        if let Some((c, _)) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.child = None;
        self.next = self.steps.len();
        self.services.shutdown(cx);
    }
}

/// The script: echo, discard, chargen, and the Linux side's view of a connection (`ss`),
/// against ackclock at `ip`.
pub fn steps(ip: Ipv4Addr) -> Vec<Step> {
    vec![
        Step {
            title: "echo (RFC 862): Linux sends a line, ackclock sends it back",
            cmd: format!("echo 'hello from the Linux kernel TCP' | nc -N -w 5 {ip} 7"),
        },
        Step {
            title: "discard (RFC 863): Linux sends 1 MB, ackclock throws it away",
            cmd: format!(
                "head -c 1000000 /dev/zero | nc -N -w 5 {ip} 9 && echo 'sent 1000000 bytes'"
            ),
        },
        Step {
            title: "chargen (RFC 864): ackclock sends the character pattern, Linux reads 3 lines",
            cmd: format!("nc -d -w 5 {ip} 19 | head -n 3"),
        },
        Step {
            title: "the Linux side's view of a connection to ackclock (ss -ti)",
            cmd: format!(
                "(sleep 0.3 | nc -N -w 2 {ip} 7 >/dev/null &) ; sleep 0.15; ss -tin dst {ip}"
            ),
        },
    ]
}

impl DemoApp {
    /// Serves echo, discard and chargen with `tcp` and runs `steps` in `ns`; with `keep`,
    /// serves on after the script until a signal.
    pub fn new(ns: &NetNs, steps: Vec<Step>, tcp: TcpConfig, keep: bool) -> DemoApp {
        DemoApp {
            services: ServicesApp::new(
                vec![
                    (7, Service::Echo),
                    (9, Service::Discard),
                    (19, Service::Chargen),
                ],
                ServiceOptions {
                    tcp,
                    max_conns: None,
                    chargen_bytes: None,
                    print: false,
                    backlog: 16,
                },
            ),
            ns: ns.name().to_string(),
            steps,
            next: 0,
            child: None,
            keep,
            hinted: false,
            now: Instant::ZERO,
            failed: Vec::new(),
            done: false,
        }
    }
}
