//! `ackclock live-demo`: a namespace of its own, ackclock serving echo, discard and chargen
//! on a TUN device in it, and the Linux side talking to it with `nc`
//! ([`ackclock_tun::demo`]).

use ackclock_tun::demo::{steps, DemoApp};
use ackclock_tun::flags::TcpArgs;
use ackclock_tun::netcfg::NetNs;
use ackclock_tun::{DeviceConfig, Host};
use anyhow::{bail, Result};
use std::process::Command;

#[derive(clap::Args, Debug, Clone)]
pub struct DemoArgs {
    /// After the demo, keep serving until Ctrl-C (try: ip netns exec NS nc 198.18.0.2 7).
    #[arg(long)]
    pub keep: bool,
    /// Write the demo's packets to this pcap file.
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub tcp: TcpArgs,
}

pub fn run(a: DemoArgs) -> Result<()> {
    if !ackclock_tun::is_root() {
        bail!("live-demo creates a network namespace and a TUN device: run it as root (sudo)");
    }
    if Command::new("nc").arg("-h").output().is_err() {
        bail!("live-demo needs nc (apt-get install netcat-openbsd)");
    }
    let ns = NetNs::create(&format!("ackclock-demo-{}", std::process::id()))?;
    let dev = DeviceConfig {
        netns: Some(ns.name().to_string()),
        pcap: a.pcap.clone(),
        ..DeviceConfig::default()
    };
    let mut host = Host::new(&dev)?;
    println!(
        "ackclock live-demo: namespace {}; ackclock is {} on {} serving echo (7), discard (9) and chargen (19); the Linux kernel is {}",
        ns.name(),
        dev.our_addr,
        host.device.name,
        dev.kernel_addr
    );
    let tcp = a.tcp.config()?;
    let mut app = DemoApp::new(&ns, steps(dev.our_addr), tcp, a.keep);
    app.services.listen_now(&mut host.ep)?;
    host.run(&mut app)?;
    host.finish()?;
    println!("\n# what ackclock saw");
    for c in &app.services.finished {
        println!("{c}");
    }
    if a.keep {
        println!("(namespace {} is deleted now)", ns.name());
    }
    if !app.failed.is_empty() {
        bail!("demo steps failed: {}", app.failed.join("; "));
    }
    Ok(())
}
