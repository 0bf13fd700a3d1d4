//! The live commands: `stream`, `discard`, `chargen`, `echo`, `emulate` and `live-demo`
//! (ackclock on a Linux TUN device; see the `ackclock-tun` crate).

pub mod args;
pub mod demo;
pub mod emulate;
pub mod services;
pub mod stream;

use anyhow::{bail, Result};

/// Live commands need root (TUN devices, namespaces): say so before anything fails
/// obscurely.
pub fn require_root(what: &str) -> Result<()> {
    if !ackclock_tun::is_root() {
        bail!(
            "ackclock {what} creates a TUN device{}: run it as root (sudo) or with CAP_NET_ADMIN",
            if what == "emulate" {
                " and network namespaces"
            } else {
                ""
            }
        );
    }
    Ok(())
}
