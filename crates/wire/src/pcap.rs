//! Classic libpcap capture files (the format of tcpdump, `pcap-savefile(5)`), written with
//! nanosecond timestamps and the raw-IP link type so `tcpdump -r`, `tshark -r` and
//! `tcptrace` read what the simulator and the live mode capture.
//!
//! Written here rather than with the `pcap-file` crate: its 2.0 reader rejects valid
//! captures whose original length exceeds the snap length (every truncated capture), reserves
//! 8 MB per reader, and its 3.0 is not released. The format is two fixed headers.
//!
//! Writing does not allocate per packet; reading reuses one buffer.

use crate::time::Instant;
use std::io::{self, Read, Write};
use thiserror::Error;

const MAGIC_MICROS: u32 = 0xa1b2_c3d4;
const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
const GLOBAL_HEADER_LEN: usize = 24;
const RECORD_HEADER_LEN: usize = 16;
/// The largest snap length libpcap itself uses; a record claiming more is malformed.
pub const MAX_SNAPLEN: u32 = 262_144;

/// The link-layer header type of every packet in a file (tcpdump.org/linktypes.html).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkType {
    /// LINKTYPE_RAW (101): the packet starts with an IPv4 or IPv6 header. What we write.
    Raw,
    /// LINKTYPE_IPV4 (228): the packet starts with an IPv4 header.
    Ipv4,
    /// LINKTYPE_ETHERNET (1): an Ethernet II header precedes the IP header.
    Ethernet,
    /// LINKTYPE_LINUX_SLL (113): Linux "any"-device cooked capture.
    LinuxSll,
    /// Any other LINKTYPE_ value: read and written, but its frames are not decoded
    /// ([`ip_packet`](Self::ip_packet) gives `None`).
    Other(u32),
}

impl LinkType {
    /// The LINKTYPE_ number written in the file header.
    pub fn to_u32(self) -> u32 {
        match self {
            LinkType::Raw => 101,
            LinkType::Ipv4 => 228,
            LinkType::Ethernet => 1,
            LinkType::LinuxSll => 113,
            LinkType::Other(v) => v,
        }
    }
    /// The link type of a LINKTYPE_ number (the file header's field with its FCS bits
    /// masked off).
    pub fn from_u32(v: u32) -> Self {
        match v {
            101 => LinkType::Raw,
            228 => LinkType::Ipv4,
            1 => LinkType::Ethernet,
            113 => LinkType::LinuxSll,
            v => LinkType::Other(v),
        }
    }
    /// The IP packet inside a frame of this link type, if it carries IPv4.
    pub fn ip_packet(self, frame: &[u8]) -> Option<&[u8]> {
        match self {
            LinkType::Raw | LinkType::Ipv4 => Some(frame),
            LinkType::Ethernet => match frame.get(12..14) {
                Some([0x08, 0x00]) => frame.get(14..),
                _ => None,
            },
            LinkType::LinuxSll => match frame.get(14..16) {
                Some([0x08, 0x00]) => frame.get(16..),
                _ => None,
            },
            LinkType::Other(_) => None,
        }
    }
}

/// The pcapng block type of a Section Header Block, read as the first four bytes in either
/// byte order: a pcapng file starts with it (the pcapng draft, §4.1).
const PCAPNG_SHB: u32 = 0x0a0d_0d0a;

/// What to say after "not a pcap file": how to convert, for a pcapng file only (any other
/// file is simply not a capture).
fn pcapng_hint(magic: u32) -> &'static str {
    if magic == PCAPNG_SHB {
        ": it is pcapng, which is not supported; convert it with `editcap -F pcap`"
    } else {
        ""
    }
}

/// Why a pcap file cannot be read. Once [`PcapReader::next_record`] has returned one, it
/// returns `None`.
#[derive(Debug, Error)]
pub enum PcapError {
    /// Reading the underlying file failed.
    #[error("cannot read: {}", io_reason(.0))]
    Io(io::Error),
    /// The first four bytes are not a classic pcap magic number (microsecond or nanosecond,
    /// either byte order); it holds the number read.
    #[error("not a pcap file (magic number {magic:#010x}){hint}", magic = .0, hint = pcapng_hint(*.0))]
    BadMagic(u32),
    /// The file ends inside a header or a packet; it names which.
    #[error("file ends inside {0}")]
    Truncated(&'static str),
    /// A record claims more captured bytes than [`MAX_SNAPLEN`] or than its original length.
    #[error("record {index} claims {incl_len} captured bytes (more than {MAX_SNAPLEN}) or more than its original length {orig_len}")]
    BadRecordLength {
        /// The record's number, counted from 0.
        index: u64,
        /// Captured bytes it claims.
        incl_len: u32,
        /// Bytes it says the packet had on the wire.
        orig_len: u32,
    },
    /// A record's sub-second field is a second or more (10^6 us or 10^9 ns).
    #[error("record {index} has a sub-second timestamp field of {frac}, out of range")]
    BadTimestamp {
        /// The record's number, counted from 0.
        index: u64,
        /// The sub-second field as written, in the file's unit (us or ns).
        frac: u32,
    },
}

/// Writes a pcap file: the global header at creation, then one record per packet.
pub struct PcapWriter<W: Write> {
    out: W,
    snaplen: u32,
    /// Added to every timestamp (simulations start at time zero; a driver may want real
    /// dates). In nanoseconds.
    epoch_offset_ns: u64,
}

impl<W: Write> PcapWriter<W> {
    /// Starts a nanosecond-resolution file of raw IP packets with the maximum snap length.
    pub fn new(out: W) -> io::Result<Self> {
        Self::with_options(out, LinkType::Raw, MAX_SNAPLEN)
    }

    /// Starts a nanosecond-resolution file of `link` frames, storing at most `snaplen` bytes
    /// of each packet (clamped to `1..=MAX_SNAPLEN`). The headers are written in this
    /// machine's byte order, which readers detect from the magic number.
    pub fn with_options(mut out: W, link: LinkType, snaplen: u32) -> io::Result<Self> {
        let snaplen = snaplen.clamp(1, MAX_SNAPLEN);
        let mut h = [0u8; GLOBAL_HEADER_LEN];
        h[0..4].copy_from_slice(&MAGIC_NANOS.to_ne_bytes());
        h[4..6].copy_from_slice(&2u16.to_ne_bytes());
        h[6..8].copy_from_slice(&4u16.to_ne_bytes());
        // thiszone (8..12) and sigfigs (12..16) are zero.
        h[16..20].copy_from_slice(&snaplen.to_ne_bytes());
        h[20..24].copy_from_slice(&link.to_u32().to_ne_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter {
            out,
            snaplen,
            epoch_offset_ns: 0,
        })
    }

    /// Shifts every timestamp by `ns` nanoseconds.
    pub fn set_epoch_offset_ns(&mut self, ns: u64) {
        self.epoch_offset_ns = ns;
    }

    /// Appends one packet captured at `ts`; bytes past the snap length are not stored, but
    /// the original length is recorded.
    pub fn write_packet(&mut self, ts: Instant, packet: &[u8]) -> io::Result<()> {
        let ns = ts.as_nanos().saturating_add(self.epoch_offset_ns);
        // The classic format has 32-bit seconds: saturate rather than wrap in 2106.
        let secs = u32::try_from(ns / 1_000_000_000).unwrap_or(u32::MAX);
        let frac = (ns % 1_000_000_000) as u32;
        let orig_len = u32::try_from(packet.len()).unwrap_or(u32::MAX);
        let incl_len = orig_len.min(self.snaplen);
        let mut h = [0u8; RECORD_HEADER_LEN];
        h[0..4].copy_from_slice(&secs.to_ne_bytes());
        h[4..8].copy_from_slice(&frac.to_ne_bytes());
        h[8..12].copy_from_slice(&incl_len.to_ne_bytes());
        h[12..16].copy_from_slice(&orig_len.to_ne_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(&packet[..incl_len as usize])
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The underlying writer, unflushed.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// One record of a pcap file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcapRecord<'a> {
    /// Capture time in nanoseconds since the Unix epoch (or the simulation's zero).
    pub ts: Instant,
    /// Length of the packet on the wire.
    pub orig_len: u32,
    /// The captured bytes (possibly fewer than `orig_len`).
    pub data: &'a [u8],
}

/// Reads classic pcap files of either byte order and either timestamp resolution.
pub struct PcapReader<R: Read> {
    input: R,
    swapped: bool,
    nanos: bool,
    link: LinkType,
    snaplen: u32,
    buf: Vec<u8>,
    index: u64,
    done: bool,
}

impl<R: Read> PcapReader<R> {
    /// Reads and checks the file header: the magic number gives the byte order and the
    /// timestamp resolution.
    pub fn new(mut input: R) -> Result<Self, PcapError> {
        let mut h = [0u8; GLOBAL_HEADER_LEN];
        read_full(&mut input, &mut h, "the file header")?;
        let magic = u32::from_ne_bytes(h[0..4].try_into().unwrap());
        let (swapped, nanos) = match magic {
            MAGIC_MICROS => (false, false),
            MAGIC_NANOS => (false, true),
            m if m.swap_bytes() == MAGIC_MICROS => (true, false),
            m if m.swap_bytes() == MAGIC_NANOS => (true, true),
            m => return Err(PcapError::BadMagic(m)),
        };
        let rd = |b: &[u8]| {
            let v = u32::from_ne_bytes(b.try_into().unwrap());
            if swapped {
                v.swap_bytes()
            } else {
                v
            }
        };
        Ok(PcapReader {
            input,
            swapped,
            nanos,
            snaplen: rd(&h[16..20]),
            link: LinkType::from_u32(rd(&h[20..24]) & 0x0fff_ffff),
            buf: Vec::new(),
            index: 0,
            done: false,
        })
    }

    /// The link type of every record's frame.
    pub fn link_type(&self) -> LinkType {
        self.link
    }
    /// The snap length the file header declares, in bytes: the capture stored at most this
    /// much of each packet.
    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }
    /// Whether timestamps are in nanoseconds (else microseconds); records are converted
    /// to nanosecond [`Instant`]s either way.
    pub fn is_nanosecond(&self) -> bool {
        self.nanos
    }

    fn u32_at(&self, b: &[u8]) -> u32 {
        let v = u32::from_ne_bytes(b.try_into().unwrap());
        if self.swapped {
            v.swap_bytes()
        } else {
            v
        }
    }

    /// The next record, `None` at a clean end of file. After an error, always `None`.
    pub fn next_record(&mut self) -> Option<Result<PcapRecord<'_>, PcapError>> {
        if self.done {
            return None;
        }
        match self.read_record() {
            Ok(Some((ts, orig_len, len))) => Some(Ok(PcapRecord {
                ts,
                orig_len,
                data: &self.buf[..len],
            })),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }

    fn read_record(&mut self) -> Result<Option<(Instant, u32, usize)>, PcapError> {
        let mut h = [0u8; RECORD_HEADER_LEN];
        // A clean EOF is allowed only before the first byte of a record header.
        let mut got = 0;
        while got < h.len() {
            match self.input.read(&mut h[got..]) {
                Ok(0) if got == 0 => return Ok(None),
                Ok(0) => return Err(PcapError::Truncated("a record header")),
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(PcapError::Io(e)),
            }
        }
        let secs = self.u32_at(&h[0..4]);
        let frac = self.u32_at(&h[4..8]);
        let incl_len = self.u32_at(&h[8..12]);
        let orig_len = self.u32_at(&h[12..16]);
        let index = self.index;
        self.index += 1;
        if incl_len > MAX_SNAPLEN || incl_len > orig_len {
            return Err(PcapError::BadRecordLength {
                index,
                incl_len,
                orig_len,
            });
        }
        let frac_ns = if self.nanos {
            frac
        } else if frac < 1_000_000 {
            frac * 1_000
        } else {
            u32::MAX
        };
        if frac_ns >= 1_000_000_000 {
            return Err(PcapError::BadTimestamp { index, frac });
        }
        let len = incl_len as usize;
        self.buf.resize(len, 0);
        read_full(&mut self.input, &mut self.buf[..len], "a packet's data")?;
        let ts = Instant::from_nanos(u64::from(secs) * 1_000_000_000 + u64::from(frac_ns));
        Ok(Some((ts, orig_len, len)))
    }
}

/// An I/O error as a reason, without Rust's "(os error N)" suffix.
fn io_reason(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn read_full<R: Read>(r: &mut R, buf: &mut [u8], what: &'static str) -> Result<(), PcapError> {
    r.read_exact(buf).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            PcapError::Truncated(what)
        } else {
            PcapError::Io(e)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_sample(snaplen: u32) -> Vec<u8> {
        let mut w = PcapWriter::with_options(Vec::new(), LinkType::Raw, snaplen).unwrap();
        w.write_packet(Instant::from_nanos(1_500_000_123), &[1, 2, 3, 4, 5])
            .unwrap();
        w.write_packet(Instant::from_nanos(2_000_000_000), &[9; 100])
            .unwrap();
        w.into_inner()
    }

    #[test]
    fn round_trip_nanoseconds() {
        let f = write_sample(MAX_SNAPLEN);
        assert_eq!(f.len(), 24 + 16 + 5 + 16 + 100);
        let mut r = PcapReader::new(&f[..]).unwrap();
        assert_eq!(r.link_type(), LinkType::Raw);
        assert!(r.is_nanosecond());
        let a = r.next_record().unwrap().unwrap();
        assert_eq!(a.ts, Instant::from_nanos(1_500_000_123));
        assert_eq!(a.data, &[1, 2, 3, 4, 5]);
        let b = r.next_record().unwrap().unwrap();
        assert_eq!((b.orig_len, b.data.len()), (100, 100));
        assert!(r.next_record().is_none());
    }

    #[test]
    fn snaplen_truncates_but_keeps_original_length() {
        let f = write_sample(64);
        let mut r = PcapReader::new(&f[..]).unwrap();
        r.next_record().unwrap().unwrap();
        let b = r.next_record().unwrap().unwrap();
        assert_eq!((b.orig_len, b.data.len()), (100, 64));
    }

    #[test]
    fn reads_big_endian_microsecond_files() {
        let mut f = Vec::new();
        f.extend_from_slice(&MAGIC_MICROS.to_be_bytes());
        f.extend_from_slice(&2u16.to_be_bytes());
        f.extend_from_slice(&4u16.to_be_bytes());
        f.extend_from_slice(&[0; 8]);
        f.extend_from_slice(&65535u32.to_be_bytes());
        f.extend_from_slice(&1u32.to_be_bytes());
        for v in [7u32, 250_000, 3, 3] {
            f.extend_from_slice(&v.to_be_bytes());
        }
        f.extend_from_slice(&[0xaa, 0xbb, 0xcc]);
        let mut r = PcapReader::new(&f[..]).unwrap();
        assert_eq!(r.link_type(), LinkType::Ethernet);
        assert!(!r.is_nanosecond());
        let a = r.next_record().unwrap().unwrap();
        assert_eq!(a.ts, Instant::from_nanos(7_250_000_000));
        assert_eq!(a.data, &[0xaa, 0xbb, 0xcc]);
    }

    #[test]
    fn malformed_files_are_errors() {
        assert!(matches!(
            PcapReader::new(&[0u8; 10][..]),
            Err(PcapError::Truncated(_))
        ));
        assert!(matches!(
            PcapReader::new(&[0u8; 24][..]),
            Err(PcapError::BadMagic(0))
        ));
        let f = write_sample(MAX_SNAPLEN);
        // Cut inside the second record's data.
        let mut r = PcapReader::new(&f[..f.len() - 1]).unwrap();
        assert!(r.next_record().unwrap().is_ok());
        assert!(matches!(
            r.next_record(),
            Some(Err(PcapError::Truncated(_)))
        ));
        assert!(r.next_record().is_none());
        // A record claiming a gigabyte.
        let mut g = f[..24].to_vec();
        for v in [0u32, 0, 1 << 30, 1 << 30] {
            g.extend_from_slice(&v.to_ne_bytes());
        }
        let mut r = PcapReader::new(&g[..]).unwrap();
        assert!(matches!(
            r.next_record(),
            Some(Err(PcapError::BadRecordLength { .. }))
        ));
        // Nanosecond field out of range.
        let mut g = f[..24].to_vec();
        for v in [0u32, 1_000_000_000, 0, 0] {
            g.extend_from_slice(&v.to_ne_bytes());
        }
        let mut r = PcapReader::new(&g[..]).unwrap();
        assert!(matches!(
            r.next_record(),
            Some(Err(PcapError::BadTimestamp { .. }))
        ));
    }

    #[test]
    fn ethernet_and_sll_frames_expose_ipv4() {
        let mut eth = vec![0u8; 14];
        eth[12] = 0x08;
        eth.extend_from_slice(&[0x45, 0]);
        assert_eq!(LinkType::Ethernet.ip_packet(&eth), Some(&[0x45, 0][..]));
        eth[13] = 0x06; // ARP
        assert_eq!(LinkType::Ethernet.ip_packet(&eth), None);
        assert_eq!(LinkType::Other(5).ip_packet(&eth), None);
    }
}
