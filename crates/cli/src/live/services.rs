//! `ackclock discard`, `chargen` and `echo`: the classic services, for nc, socat or a
//! browser on the Linux side.

use super::args::{DevArgs, TcpArgs};
use crate::units;
use ackclock_tun::{Host, Service, ServiceOptions, ServicesApp};
use anyhow::{bail, Result};
use std::io::Write;
use std::net::SocketAddrV4;

#[derive(clap::Args, Debug, Clone)]
pub struct ServiceArgs {
    /// ackclock's address and port (default 198.18.0.2 and the service's well-known port:
    /// discard 9, chargen 19, echo 7).
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<SocketAddrV4>,
    /// Exit after this many connections have finished (default: run until SIGINT/SIGTERM).
    #[arg(long)]
    pub count: Option<u64>,
    /// chargen: close after sending this many bytes (a size: 7400, 64K, 1MB; default:
    /// until the client closes).
    #[arg(long, value_name = "SIZE", value_parser = units::size())]
    pub bytes: Option<u64>,
    #[command(flatten)]
    pub tcp: TcpArgs,
    #[command(flatten)]
    pub dev: DevArgs,
}

pub fn run(service: Service, a: ServiceArgs) -> Result<()> {
    let tcp = a.tcp.config()?;
    let port = a.listen.map_or(service.port(), |l| l.port());
    let dev = a.dev.device(a.listen.map(|l| *l.ip()))?;
    if a.bytes.is_some() && service != Service::Chargen {
        bail!("--bytes applies to chargen only");
    }
    let mut app = ServicesApp::new(
        vec![(port, service)],
        ServiceOptions {
            tcp,
            max_conns: a.count,
            chargen_bytes: a.bytes,
            print: true,
            backlog: 64,
        },
    );
    let mut host = Host::new(&dev)?;
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
    if let Some(e) = app.error {
        bail!("cannot listen on port {port}: {e}");
    }
    let (bin, bout) = app
        .finished
        .iter()
        .fold((0, 0), |(i, o), c| (i + c.bytes_in, o + c.bytes_out));
    println!(
        "{} connections served ({} still open), {bin} bytes in, {bout} bytes out",
        app.finished.len(),
        app.open_connections()
    );
    super::stream::print_device(&host);
    Ok(())
}
