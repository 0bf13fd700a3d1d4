//! SIGINT and SIGTERM as readable bytes on a socket, so the poll loop sees them like any
//! other event (signal-hook's self-pipe: the handler only writes a byte).

use std::io::{self, Read};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;

/// While alive, SIGINT and SIGTERM no longer kill the process: they make `fd()` readable.
#[derive(Debug)]
pub struct Signals {
    read: UnixStream,
    ids: Vec<signal_hook::SigId>,
}

impl Signals {
    /// Creates the socket pair and registers signal-hook's pipe handler for SIGINT and
    /// SIGTERM (it writes one byte per signal); the handlers are removed on drop.
    ///
    /// # Errors
    /// `socketpair` or the registration failed.
    pub fn new() -> io::Result<Signals> {
        let (read, write) = UnixStream::pair()?;
        read.set_nonblocking(true)?;
        let mut ids = Vec::new();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            ids.push(signal_hook::low_level::pipe::register(
                sig,
                write.try_clone()?,
            )?);
        }
        Ok(Signals { read, ids })
    }

    /// How many signals arrived since the last call.
    pub fn take(&mut self) -> usize {
        let mut n = 0;
        let mut b = [0u8; 64];
        loop {
            match self.read.read(&mut b) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(_) => break,
            }
        }
        n
    }

    /// The read end of the pair, for an epoll set: readable once a signal arrived, until
    /// [`take`](Self::take) reads it empty.
    pub fn fd(&self) -> RawFd {
        self.read.as_raw_fd()
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}
