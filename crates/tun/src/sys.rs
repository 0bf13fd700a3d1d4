//! The few system calls live mode needs, over `libc`: the TUN device, epoll, a timerfd for
//! nanosecond deadlines, the monotonic clock and process CPU time.
//!
//! Why not a crate: a TUN device is one `open` and one `TUNSETIFF` ioctl, and the loop needs
//! exactly three file descriptors in one epoll set. `mio` would add a dependency and, more
//! to the point, round every timeout to whole milliseconds (`epoll_wait`), which is too
//! coarse for the emulator's serialization times (120 us per 1500-byte packet at 100 Mb/s);
//! a `timerfd` armed with absolute `CLOCK_MONOTONIC` deadlines gives nanoseconds.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// A TUN device in IFF_TUN mode without packet information: each `read` returns one IP
/// packet, each `write` injects one into the kernel's stack. The device exists while the
/// descriptor is open (it is not persistent).
#[derive(Debug)]
pub struct Tun {
    fd: OwnedFd,
    name: String,
}

#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

impl Tun {
    /// Creates (or attaches to) the TUN device `name`; a name with `%d` lets the kernel pick
    /// the number. The descriptor is non-blocking and close-on-exec: `open("/dev/net/tun",
    /// O_RDWR | O_NONBLOCK | O_CLOEXEC)`, then `ioctl(TUNSETIFF)` with
    /// `IFF_TUN | IFF_NO_PI`.
    ///
    /// # Errors
    /// A name that is empty, of `IFNAMSIZ` characters or more, or with a '/'; no access
    /// to `/dev/net/tun` (root or CAP_NET_ADMIN, and the tun module, are needed); or
    /// `TUNSETIFF` refused (the name taken by another kind of interface, say).
    pub fn open(name: &str) -> io::Result<Tun> {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('/') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "interface name {name:?}: 1 to {} characters, no '/'",
                    libc::IFNAMSIZ - 1
                ),
            ));
        }
        // SAFETY: a NUL-terminated path literal; the result is checked.
        let fd = cvt(unsafe {
            libc::open(
                c"/dev/net/tun".as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        })
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot open /dev/net/tun: {e} (live mode needs root or CAP_NET_ADMIN, and the tun module)"),
            )
        })?;
        // SAFETY: `fd` was just returned by open and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
            _pad: [0; 22],
        };
        for (d, s) in req.name.iter_mut().zip(name.bytes()) {
            *d = s as libc::c_char;
        }
        // SAFETY: TUNSETIFF reads and writes a `struct ifreq`, which IfReq lays out (40 bytes).
        cvt(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &mut req as *mut IfReq) })
            .map_err(|e| {
                // EPERM is the missing privilege; other errors (EBUSY, EINVAL) are a name that
                // an interface of another kind holds.
                let hint = if e.raw_os_error() == Some(libc::EPERM) {
                    "run ackclock as root (sudo) or give it CAP_NET_ADMIN"
                } else {
                    "is the name taken by a non-TUN interface?"
                };
                io::Error::new(
                    e.kind(),
                    format!("cannot create TUN device {name:?}: {e}: {hint}"),
                )
            })?;
        let len = req
            .name
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(libc::IFNAMSIZ);
        let name = req.name[..len].iter().map(|&c| c as u8 as char).collect();
        Ok(Tun { fd, name })
    }

    /// The interface name the kernel gave the device.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads one packet (`read`) into `buf` and returns its length; `Ok(None)` when none
    /// is waiting (EAGAIN) or the read was interrupted (EINTR).
    #[inline]
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: reading into a valid, writable buffer of buf.len() bytes.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock => Ok(None),
            io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        }
    }

    /// Writes one packet into the kernel (`write`, again after EINTR). Returns false when
    /// the kernel refused it for lack of buffers (EAGAIN, ENOBUFS, ENOMEM) or rejected it
    /// (EINVAL, EIO: a malformed packet, say): the packet is lost, as on a real
    /// interface, and the loop goes on.
    ///
    /// # Errors
    /// Any other errno.
    #[inline]
    pub fn send(&self, pkt: &[u8]) -> io::Result<bool> {
        loop {
            // SAFETY: writing from a valid buffer of pkt.len() bytes.
            let n = unsafe { libc::write(self.fd.as_raw_fd(), pkt.as_ptr().cast(), pkt.len()) };
            if n >= 0 {
                return Ok(true);
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::ENOMEM) => return Ok(false),
                // A packet the kernel rejects (e.g. malformed) must not stop the loop.
                Some(libc::EINVAL) | Some(libc::EIO) => return Ok(false),
                _ => return Err(e),
            }
        }
    }
}

impl AsRawFd for Tun {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Nanoseconds on `CLOCK_MONOTONIC`.
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// Nanoseconds since the Unix epoch (`CLOCK_REALTIME`), for pcap timestamps.
pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes a timespec; both clocks always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time (user + system) this process has used, in nanoseconds.
pub fn process_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// Sets the calling thread's timer slack to `ns` (`prctl(PR_SET_TIMERSLACK)`): how late
/// the kernel may wake it after a timer expires, to batch wake-ups (50 us by default). The
/// emulator asks for 1 ns. A failure leaves the slack as it was.
pub fn set_timer_slack_ns(ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long; failure only means the default stays.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0);
    }
}

/// Fills `buf` from the kernel's random source (for the RFC 6528 ISN key).
pub fn random_bytes(buf: &mut [u8]) -> io::Result<()> {
    let mut off = 0;
    while off < buf.len() {
        // SAFETY: getrandom writes at most len bytes into the valid buffer.
        let n = unsafe { libc::getrandom(buf[off..].as_mut_ptr().cast(), buf.len() - off, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        off += n as usize;
    }
    Ok(())
}

/// A timerfd on `CLOCK_MONOTONIC`, armed with absolute deadlines.
#[derive(Debug)]
pub struct Timer {
    fd: OwnedFd,
    armed_ns: Option<u64>,
}

impl Timer {
    /// `timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)`, disarmed.
    ///
    /// # Errors
    /// The system call failed.
    pub fn new() -> io::Result<Timer> {
        // SAFETY: plain syscall; result checked.
        let fd = cvt(unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        })?;
        Ok(Timer {
            // SAFETY: fresh descriptor owned by nobody else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            armed_ns: None,
        })
    }

    /// Arms the timer for the absolute monotonic time `at_ns`, or disarms it (`None`), by
    /// `timerfd_settime` with `TFD_TIMER_ABSTIME`. Re-arming for the same deadline costs
    /// nothing (no system call).
    pub fn set(&mut self, at_ns: Option<u64>) -> io::Result<()> {
        if self.armed_ns == at_ns {
            return Ok(());
        }
        let v = at_ns.map_or(0, |t| t.max(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (v / 1_000_000_000) as libc::time_t,
                tv_nsec: (v % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: valid itimerspec; the old value is not wanted.
        cvt(unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        })?;
        self.armed_ns = at_ns;
        Ok(())
    }

    /// Consumes an expiry by reading the timerfd's 8-byte count (so the level-triggered
    /// descriptor stops being readable); the timer is then disarmed.
    pub fn clear(&mut self) {
        let mut b = [0u8; 8];
        // SAFETY: reading 8 bytes into an 8-byte buffer; EAGAIN is fine.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), b.as_mut_ptr().cast(), 8) };
        if n == 8 {
            self.armed_ns = None;
        }
    }
}

impl AsRawFd for Timer {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// A level-triggered epoll set; each descriptor is registered with a `u64` token.
#[derive(Debug)]
pub struct Epoll {
    fd: OwnedFd,
    events: Vec<libc::epoll_event>,
}

impl Epoll {
    /// `epoll_create1(EPOLL_CLOEXEC)`, with room for 16 events per wait.
    ///
    /// # Errors
    /// The system call failed.
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: plain syscall; result checked.
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        Ok(Epoll {
            // SAFETY: fresh descriptor owned by nobody else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            events: vec![libc::epoll_event { events: 0, u64: 0 }; 16],
        })
    }

    /// Watches `fd` for readability (`EPOLL_CTL_ADD` with `EPOLLIN`, level-triggered);
    /// `token` is what [`wait`](Self::wait) reports for it.
    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: valid epoll and target descriptors, valid event struct.
        cvt(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        Ok(())
    }

    /// Waits for readiness in `epoll_wait` (`timeout_ms`: -1 forever, 0 poll). Calls `f`
    /// with each ready token (at most 16 per call). An interrupted wait (EINTR) returns
    /// without events.
    pub fn wait(&mut self, timeout_ms: i32, mut f: impl FnMut(u64)) -> io::Result<()> {
        // SAFETY: the buffer holds events.len() entries.
        let n = unsafe {
            libc::epoll_wait(
                self.fd.as_raw_fd(),
                self.events.as_mut_ptr(),
                self.events.len() as libc::c_int,
                timeout_ms,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(());
            }
            return Err(e);
        }
        for ev in &self.events[..n as usize] {
            f(ev.u64);
        }
        Ok(())
    }
}

/// Puts the calling thread (the loop's: live mode is single-threaded) in the SCHED_FIFO
/// real-time class at `priority` (1-99), so a busy machine delays its wake-ups less:
/// `sched_setscheduler(0, SCHED_FIFO)`. The loop sleeps whenever it has nothing due, and
/// the kernel's real-time throttling (95% by default) bounds what it could take.
///
/// # Errors
/// The kernel refused: EPERM without CAP_SYS_NICE (or an RLIMIT_RTPRIO that allows it),
/// EINVAL for a priority outside 1-99.
pub fn set_realtime(priority: i32) -> io::Result<()> {
    let p = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: valid sched_param; pid 0 is this process.
    cvt(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) })?;
    Ok(())
}
