//! A tcpdump-like listing of a pcap capture (`ackclock decode`): one line per TCP/IPv4
//! packet, then what was malformed and why.

use crate::pcap::{LinkType, PcapError, PcapReader};
use crate::{parse_ipv4_tcp, Ipv4Packet, TcpOption, TcpSegment, WireError, IPPROTO_TCP};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::Ipv4Addr;

/// Why a listing stopped.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// The file is not a pcap capture, or cannot be read.
    #[error(transparent)]
    Pcap(#[from] PcapError),
    /// Writing the listing failed.
    #[error(transparent)]
    Write(#[from] std::io::Error),
    /// A record is broken (nothing after it can be framed); the good ones before it were
    /// listed.
    #[error("{error} (after {good} good record{})", if *good == 1 { "" } else { "s" })]
    Broken {
        /// What is wrong with the record.
        error: PcapError,
        /// Records listed before it.
        good: u64,
    },
}

/// How sequence and acknowledgment numbers are printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SeqNumbers {
    /// Relative, as tcpdump prints them by default: per connection, from the SYN-ACK (or,
    /// when the handshake was not captured, the first packet that carries an ACK), each
    /// side's numbers count from its initial sequence number: the sender's from that
    /// packet's sequence number, the receiver's from its acknowledgment number minus one.
    /// So the handshake's last ACK reads `ack 1`. Packets with SYN, and those before the
    /// bases are known, are printed absolute. SACK blocks are relative too.
    #[default]
    Relative,
    /// As on the wire (tcpdump's `-S`).
    Absolute,
}

/// One end of a connection: address and port.
type End = (Ipv4Addr, u16);

/// The sequence-number bases of the connections seen: keyed by the ends of the packet that
/// set them (sender, receiver), the sender's base and the receiver's.
#[derive(Default)]
struct Bases(HashMap<(End, End), (u32, u32)>);

impl Bases {
    /// The bases of `seg` from `a` to `b`, (its sequence numbers', its ACK's); `None`
    /// when the packet is printed absolute (no ACK before, or this one sets them).
    fn of(&mut self, a: End, b: End, seg: &TcpSegment<'_>) -> Option<(u32, u32)> {
        let flags = seg.flags();
        if flags.contains(crate::TcpFlags::SYN) {
            // A SYN is printed absolute and (re)starts the connection's numbering: a SYN
            // clears it, a SYN-ACK sets it from its own numbers (a retransmitted SYN-ACK
            // sets the same bases again).
            self.0.remove(&(b, a));
            if flags.contains(crate::TcpFlags::ACK) {
                self.0
                    .insert((a, b), (seg.seq(), seg.ack().wrapping_sub(1)));
            } else {
                self.0.remove(&(a, b));
            }
            return None;
        }
        if !flags.contains(crate::TcpFlags::ACK) {
            return None;
        }
        if let Some(&(s, r)) = self.0.get(&(a, b)) {
            return Some((s, r));
        }
        if let Some(&(s, r)) = self.0.get(&(b, a)) {
            return Some((r, s));
        }
        // The handshake was not captured: this packet sets the bases and is printed
        // absolute. Bounded by the capture: one entry per connection seen.
        self.0
            .insert((a, b), (seg.seq(), seg.ack().wrapping_sub(1)));
        None
    }
}

/// Lists the TCP/IPv4 packets of the pcap `input` on `out`, one line each as tcpdump
/// writes them (`limit`: at most this many; `seq`: relative or absolute numbers), then a
/// summary: the packets, how many were TCP/IPv4, malformed (by reason, as
/// [`crate::WireError`] names it) or not IPv4. A record cut by the snap length is listed
/// from its headers, not counted malformed.
///
/// # Errors
/// The file is not a pcap, `out` fails, or a record is broken: what came before it is
/// listed and summarised first.
pub fn list<R: Read, W: Write>(
    input: R,
    out: &mut W,
    limit: Option<u64>,
    seq: SeqNumbers,
) -> Result<(), ListError> {
    let mut reader = PcapReader::new(input)?;
    let mut bases = Bases::default();
    let link = reader.link_type();
    let mut total = 0u64;
    let mut tcp = 0u64;
    let mut not_ip = 0u64;
    let mut bad: BTreeMap<String, u64> = BTreeMap::new();
    let mut line = String::new();
    // A broken record ends the file (nothing after it can be framed), but what came before
    // is still listed and counted; the error is reported after the summary.
    let mut broken = None;
    while let Some(rec) = reader.next_record() {
        let rec = match rec {
            Ok(r) => r,
            Err(e) => {
                broken = Some(e);
                break;
            }
        };
        total += 1;
        let Some(ip) = link.ip_packet(rec.data) else {
            not_ip += 1;
            continue;
        };
        // A record cut by the snap length (`tcpdump -s 96`) is listed from its headers, as
        // tcpdump does, with the length the IP header gives; its checksum cannot be
        // checked. It is not malformed.
        let wire_len = (rec.orig_len as usize).saturating_sub(rec.data.len() - ip.len());
        let parsed = if wire_len > ip.len() {
            captured(ip, wire_len)
        } else {
            parse_ipv4_tcp(ip).map(|p| {
                let len = p.tcp.payload().len();
                (p.ip, Some(p.tcp), len)
            })
        };
        match parsed {
            Ok((ip, seg, payload_len)) => {
                tcp += 1;
                if limit.is_some_and(|l| tcp > l) {
                    continue;
                }
                line.clear();
                let base = match (seq, seg.as_ref()) {
                    (SeqNumbers::Relative, Some(s)) => {
                        bases.of((ip.src(), s.src_port()), (ip.dst(), s.dst_port()), s)
                    }
                    _ => None,
                };
                listing(
                    &mut line,
                    rec.ts.as_nanos(),
                    &ip,
                    seg.as_ref(),
                    payload_len,
                    base,
                )
                .expect("formatting into a String");
                writeln!(out, "{line}")?;
            }
            Err(e) => {
                *bad.entry(e.kind().to_string()).or_default() += 1;
            }
        }
    }
    let malformed: u64 = bad.values().sum();
    writeln!(
        out,
        "{total} packets: {tcp} TCP/IPv4, {malformed} malformed or not TCP, {not_ip} not IPv4"
    )?;
    for (why, n) in &bad {
        writeln!(out, "  {n:>8}  {why}")?;
    }
    if let LinkType::Other(v) = link {
        writeln!(
            out,
            "link type {v} is not one decode reads (raw IP 101, IPv4 228, Ethernet 1, Linux cooked 113): no packet was decoded"
        )?;
    }
    match broken {
        Some(error) => Err(ListError::Broken { error, good: total }),
        None => Ok(()),
    }
}

/// The headers of a TCP/IPv4 packet captured short of `wire_len`: the segment when its
/// header was captured whole (`None`: cut inside it, listed as tcpdump's `[|tcp]`), and
/// the data length the headers give.
fn captured(
    ip: &[u8],
    wire_len: usize,
) -> Result<(Ipv4Packet<'_>, Option<TcpSegment<'_>>, usize), WireError> {
    let ip = Ipv4Packet::parse_captured(ip, wire_len)?;
    if ip.is_fragment() {
        return Err(WireError::Fragment {
            offset: ip.fragment_offset(),
            more: ip.more_fragments(),
        });
    }
    if ip.protocol() != IPPROTO_TCP {
        return Err(WireError::NotTcp(ip.protocol()));
    }
    let seg = TcpSegment::parse(ip.payload()).ok();
    let tcp_len = usize::from(ip.total_len()) - ip.header_len();
    let payload = seg.map_or(0, |s| tcp_len.saturating_sub(s.header_len()));
    Ok((ip, seg, payload))
}

/// One packet's line: time, addresses, flags, sequence range, ACK, window, options and the
/// data length, as tcpdump writes them; `base`: the numbers are printed relative to these
/// (the sender's sequence numbers', the ACK's and SACK blocks').
fn listing(
    line: &mut String,
    t: u64,
    ip: &Ipv4Packet<'_>,
    seg: Option<&TcpSegment<'_>>,
    payload_len: usize,
    base: Option<(u32, u32)>,
) -> std::fmt::Result {
    let (sb, ab) = base.unwrap_or((0, 0));
    write!(line, "{}.{:09} ", t / 1_000_000_000, t % 1_000_000_000)?;
    let Some(s) = seg else {
        // The snap length cut the TCP header: the addresses, and the ports if captured.
        return match ip.payload().first_chunk::<4>() {
            Some(p) => write!(
                line,
                "{}:{} > {}:{}: [|tcp]",
                ip.src(),
                u16::from_be_bytes([p[0], p[1]]),
                ip.dst(),
                u16::from_be_bytes([p[2], p[3]])
            ),
            None => write!(line, "{} > {}: [|tcp]", ip.src(), ip.dst()),
        };
    };
    write!(
        line,
        "{}:{} > {}:{} Flags [{}]",
        ip.src(),
        s.src_port(),
        ip.dst(),
        s.dst_port(),
        s.flags(),
    )?;
    // As tcpdump: a segment without data, SYN, FIN or RST (a pure ACK) has no sequence
    // number worth a column.
    let numbered = crate::TcpFlags::SYN | crate::TcpFlags::FIN | crate::TcpFlags::RST;
    if payload_len > 0 || s.flags().intersects(numbered) {
        write!(line, ", seq {}", s.seq().wrapping_sub(sb))?;
    }
    if payload_len > 0 {
        write!(
            line,
            ":{}",
            s.seq().wrapping_add(payload_len as u32).wrapping_sub(sb)
        )?;
    }
    if s.flags().contains(crate::TcpFlags::ACK) {
        write!(line, ", ack {}", s.ack().wrapping_sub(ab))?;
    }
    write!(line, ", win {}", s.window())?;
    let opts: Vec<String> = s
        .options_iter()
        .map(|o| match o {
            Ok(TcpOption::Nop) => "nop".into(),
            Ok(TcpOption::EndOfList) => "eol".into(),
            Ok(TcpOption::Mss(m)) => format!("mss {m}"),
            Ok(TcpOption::WindowScale(w)) => format!("wscale {w}"),
            Ok(TcpOption::SackPermitted) => "sackOK".into(),
            Ok(TcpOption::Sack(b)) => {
                // tcpdump's form: the number of blocks, then each block in braces.
                let v: Vec<String> = b
                    .iter()
                    .map(|b| {
                        format!(
                            "{{{}:{}}}",
                            b.left.wrapping_sub(ab),
                            b.right.wrapping_sub(ab)
                        )
                    })
                    .collect();
                format!("sack {} {}", v.len(), v.concat())
            }
            Ok(TcpOption::Timestamps(t)) => {
                format!("TS val {} ecr {}", t.tsval, t.tsecr)
            }
            Ok(TcpOption::Unknown { kind, data }) => {
                format!("opt-{kind}:{}", data.len())
            }
            Err(e) => format!("BAD({e})"),
        })
        .collect();
    if !opts.is_empty() {
        write!(line, ", options [{}]", opts.join(","))?;
    }
    write!(line, ", length {payload_len}")
}
