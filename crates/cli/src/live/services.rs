//! `ackclock discard`, `chargen` and `echo`: the classic services, for nc, socat or a
//! browser on the Linux side.

use ackclock_apps::services::{Service, ServiceOptions, ServicesApp};
use ackclock_tun::flags::{DevArgs, TcpArgs};
use ackclock_tun::Host;
use ackclock_units as units;
use anyhow::{bail, Result};
use std::io::Write;
use std::net::SocketAddrV4;

#[derive(clap::Args, Debug, Clone)]
pub struct ServiceArgs {
    /// ackclock's address and port (default 198.18.0.2 and the service's well-known port:
    /// discard 9, chargen 19, echo 7).
    #[arg(long, value_name = "ADDR:PORT", value_parser = units::parse_socket_addr)]
    pub listen: Option<SocketAddrV4>,
    /// Exit after this many connections have finished (default: run until SIGINT/SIGTERM).
    #[arg(long)]
    pub count: Option<u64>,
    #[command(flatten)]
    pub tcp: TcpArgs,
    #[command(flatten)]
    pub dev: DevArgs,
}

/// chargen's flags: the services' and its own `--bytes` (only its help lists it).
#[derive(clap::Args, Debug, Clone)]
pub struct ChargenArgs {
    /// Close after sending this many bytes (a size: 7400, 64K, 1MB; default: until the
    /// client closes).
    #[arg(long, value_name = "SIZE", value_parser = units::size())]
    pub bytes: Option<u64>,
    #[command(flatten)]
    pub service: ServiceArgs,
}

impl ServiceArgs {
    /// Refuses addresses outside 198.18.0.0/15 unless --allow-any-address (0.0.0.0 in
    /// --listen stands for the default address).
    pub fn check_addresses(&self) -> Result<()> {
        if let Some(l) = self.listen.filter(|l| !l.ip().is_unspecified()) {
            super::check_address("--listen", &l, *l.ip(), self.dev.allow_any_address)?;
        }
        self.dev.check_addresses()
    }
}

/// Runs `service`; `chargen_bytes` is chargen's `--bytes`.
pub fn run(service: Service, a: ServiceArgs, chargen_bytes: Option<u64>) -> Result<()> {
    a.check_addresses()?;
    let tcp = a.tcp.config()?;
    let port = a.listen.map_or(service.port(), |l| l.port());
    let dev = a.dev.device(a.listen.map(|l| *l.ip()))?;
    let mut app = ServicesApp::new(
        vec![(port, service)],
        ServiceOptions {
            tcp,
            max_conns: a.count,
            chargen_bytes,
            print: true,
            backlog: 64,
        },
    );
    let mut host = Host::new(&dev)?;
    // Open before saying so: a client let in by the banner must not find the port closed.
    if let Err(e) = app.listen_now(&mut host.ep) {
        bail!("cannot listen on port {port}: {e}");
    }
    println!(
        "ackclock {}: listening on {}:{port} on {} (kernel side {}); Ctrl-C to stop",
        service.name(),
        dev.our_addr,
        host.device.name,
        dev.kernel_addr
    );
    let _ = std::io::stdout().flush();
    host.run(&mut app)?;
    host.finish()?;
    let (bin, bout) = app
        .finished
        .iter()
        .fold((0, 0), |(i, o), c| (i + c.bytes_in, o + c.bytes_out));
    println!(
        "{} connections served ({} still open), {bin} bytes in, {bout} bytes out",
        app.finished.len(),
        app.open_connections()
    );
    print!("{}", host.counters_text());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        s: ServiceArgs,
    }

    #[test]
    fn the_listen_address_keeps_to_198_18_0_0_15() {
        let check = |args: &[&str]| {
            T::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
                .unwrap()
                .s
                .check_addresses()
        };
        assert!(check(&[]).is_ok());
        assert!(check(&["--listen", "198.18.0.2:7"]).is_ok());
        assert!(check(&["--listen", "0.0.0.0:7"]).is_ok());
        let e = check(&["--listen", "127.0.0.1:7"]).unwrap_err().to_string();
        assert!(
            e.starts_with("--listen 127.0.0.1:7: 127.0.0.1 is outside"),
            "{e}"
        );
        assert!(check(&["--listen", "127.0.0.1:7", "--allow-any-address"]).is_ok());
        assert!(check(&["--addr", "172.16.0.2"]).is_err());
    }
}
