//! `ackclock-analyze`: a tcptrace-class analyzer of TCP/IPv4 captures (`ackclock analyze`).
//!
//! One pass over a classic pcap file (ours, tcpdump's, Linux's: raw IP, IPv4, Ethernet or
//! Linux cooked frames) finds every TCP connection and, per direction, what happened: bytes
//! and goodput, RTT samples with exact percentiles (Karn-safe from data and ACKs, and from
//! timestamps), retransmissions and which were spurious (D-SACK, RFC 2883, or already
//! acknowledged), reordering, duplicate ACKs, zero windows, the time the receive window
//! or (inferred) the congestion window held the sender back, SACK blocks. The counts that
//! tcptrace also prints are defined as tcptrace defines them (each field's documentation
//! in [`model`] names tcptrace's line), and a CLI test holds them to tcptrace's on the same
//! captures.
//!
//! - [`analyze`] reads a capture into an [`Analysis`]; [`Analyzer`] takes packets one at
//!   a time;
//! - [`report`] writes the text summary and the CSV;
//! - [`figures`] draws each connection's time-sequence, outstanding data, RTT and
//!   throughput figures.
//!
//! Malformed or truncated packets are counted by reason and skipped; no input panics, and
//! memory per connection is bounded ([`MAX_RECORDS`], [`MAX_SAMPLES`], [`MAX_SERIES`]).

#![warn(missing_docs)]

pub mod figures;
#[doc(hidden)]
pub mod fuzzing;
pub mod model;
mod ranges;
pub mod report;
pub mod stats;
mod track;

#[cfg(test)]
mod tests;

pub use model::{Analysis, Connection, Direction, Limits, PacketCounts, Spurious, WindowScaling};
pub use stats::Summary;
pub use track::Series;

use ackclock_wire::pcap::{PcapError, PcapReader};
use ackclock_wire::{Instant, Ipv4Packet, TcpSegment, WireError, IPPROTO_TCP};
use std::collections::HashMap;
use std::io::Read;
use std::net::SocketAddrV4;
use track::Conn;

/// Most connections tracked; segments of further ones are counted in
/// [`PacketCounts::untracked`].
pub const MAX_CONNECTIONS: usize = 100_000;
/// Most unacknowledged transmissions (and retransmissions) remembered per direction: far
/// above any window (a 1 GB window of 1448-byte segments is 740,000); beyond it, counted in
/// [`Direction::bounded`].
pub const MAX_RECORDS: usize = 1 << 20;
/// Most RTT samples kept per direction and kind (8 MB of them); later ones are counted in
/// [`Direction::bounded`] and left out of the percentiles.
pub const MAX_SAMPLES: usize = 1 << 20;
/// Most points of each figure series per direction.
pub const MAX_SERIES: usize = 1 << 21;

/// Why a capture could not be analysed at all.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// The file is not a pcap capture, or cannot be read.
    #[error(transparent)]
    Pcap(#[from] PcapError),
}

/// Reads the pcap `input` and analyses every TCP connection in it.
///
/// # Errors
/// The file is not a classic pcap file. A broken record later on ends the reading; what
/// came before is analysed and [`Analysis::stopped`] says why.
pub fn analyze<R: Read>(input: R) -> Result<Analysis, AnalyzeError> {
    let mut reader = PcapReader::new(input)?;
    let link = reader.link_type();
    let mut an = Analyzer::new();
    let mut stopped = None;
    while let Some(rec) = reader.next_record() {
        let rec = match rec {
            Ok(r) => r,
            Err(e) => {
                stopped = Some(e.to_string());
                break;
            }
        };
        an.packets.total += 1;
        let Some(ip) = link.ip_packet(rec.data) else {
            an.packets.not_ipv4 += 1;
            continue;
        };
        let link_len = rec.data.len() - ip.len();
        let wire_len = (rec.orig_len as usize).saturating_sub(link_len);
        an.ip_packet(rec.ts, ip, wire_len.max(ip.len()));
    }
    let mut a = an.finish();
    a.stopped = stopped;
    Ok(a)
}

/// The analysis in progress: feed it IPv4 packets in capture order, then [`finish`].
///
/// [`finish`]: Analyzer::finish
pub struct Analyzer {
    packets: PacketCounts,
    conns: Vec<Conn>,
    /// The current connection of each 4-tuple (lower endpoint first).
    by_tuple: HashMap<(SocketAddrV4, SocketAddrV4), usize>,
    t0: Option<u64>,
}

impl Default for Analyzer {
    fn default() -> Self {
        Self::new()
    }
}

impl Analyzer {
    /// No packets yet.
    pub fn new() -> Analyzer {
        Analyzer {
            packets: PacketCounts::default(),
            conns: Vec::new(),
            by_tuple: HashMap::new(),
            t0: None,
        }
    }

    /// One IPv4 packet captured at `ts`, `wire_len` bytes long on the wire (more than
    /// `ip.len()` when the snap length cut it: its headers are analysed, its data length
    /// taken from the IP header). Anything but a well-formed TCP/IPv4 segment is counted
    /// and skipped. [`PacketCounts::total`] is the caller's to count.
    pub fn ip_packet(&mut self, ts: Instant, ip: &[u8], wire_len: usize) {
        let t = ts.as_nanos();
        let t0 = *self.t0.get_or_insert(t);
        let p = match Ipv4Packet::parse_captured(ip, wire_len) {
            Ok(p) => p,
            Err(e) => return self.malformed(&e),
        };
        if p.is_fragment() {
            self.packets.fragments += 1;
            return;
        }
        if p.protocol() != IPPROTO_TCP {
            self.packets.not_tcp += 1;
            return;
        }
        let seg = match TcpSegment::parse(p.payload()) {
            Ok(s) => s,
            Err(e) => return self.malformed(&e),
        };
        let tcp_len = usize::from(p.total_len()).saturating_sub(p.header_len());
        let payload = tcp_len.saturating_sub(seg.header_len());
        let payload = u32::try_from(payload).unwrap_or(u32::MAX);
        self.packets.tcp += 1;
        let src = SocketAddrV4::new(p.src(), seg.src_port());
        let dst = SocketAddrV4::new(p.dst(), seg.dst_port());
        let key = if src <= dst { (src, dst) } else { (dst, src) };
        let flags = seg.flags();
        let opening = flags.contains(ackclock_wire::TcpFlags::SYN)
            && !flags.contains(ackclock_wire::TcpFlags::ACK);
        let idx = match self.by_tuple.get(&key) {
            Some(&i) if !(opening && self.conns[i].closed()) => i,
            _ => {
                if self.conns.len() >= MAX_CONNECTIONS {
                    self.packets.untracked += 1;
                    return;
                }
                self.conns.push(Conn::new(src, dst, t, t0));
                self.by_tuple.insert(key, self.conns.len() - 1);
                self.conns.len() - 1
            }
        };
        let c = &mut self.conns[idx];
        let d = c.dir_of(src);
        c.segment(t, d, &seg, payload, &mut self.packets.bad_options);
    }

    fn malformed(&mut self, e: &WireError) {
        *self
            .packets
            .malformed
            .entry(e.kind().to_string())
            .or_default() += 1;
    }

    /// The analysis of the packets given.
    pub fn finish(self) -> Analysis {
        Analysis {
            packets: self.packets,
            connections: self
                .conns
                .into_iter()
                .enumerate()
                .map(|(i, c)| c.finish(i + 1))
                .collect(),
            stopped: None,
        }
    }
}
