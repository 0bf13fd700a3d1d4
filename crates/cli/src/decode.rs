//! `ackclock decode`: a tcpdump-like listing of a pcap file, parsed by `ackclock-wire`.

use ackclock_wire::pcap::PcapReader;
use ackclock_wire::{parse_ipv4_tcp, TcpOption, WireError};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{Read, Write};

pub fn run<R: Read, W: Write>(input: R, out: &mut W, limit: Option<u64>) -> anyhow::Result<()> {
    let mut reader = PcapReader::new(input)?;
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
        match parse_ipv4_tcp(ip) {
            Ok(p) => {
                tcp += 1;
                if limit.is_some_and(|l| tcp > l) {
                    continue;
                }
                line.clear();
                let t = rec.ts.as_nanos();
                let s = &p.tcp;
                write!(
                    line,
                    "{}.{:09} {}:{} > {}:{} Flags [{}], seq {}",
                    t / 1_000_000_000,
                    t % 1_000_000_000,
                    p.ip.src(),
                    s.src_port(),
                    p.ip.dst(),
                    s.dst_port(),
                    s.flags(),
                    s.seq()
                )?;
                if !s.payload().is_empty() {
                    write!(line, ":{}", s.seq().wrapping_add(s.payload().len() as u32))?;
                }
                if s.flags().contains(ackclock_wire::TcpFlags::ACK) {
                    write!(line, ", ack {}", s.ack())?;
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
                            let v: Vec<String> = b
                                .iter()
                                .map(|b| format!("{}:{}", b.left, b.right))
                                .collect();
                            format!("sack {}", v.join(" "))
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
                writeln!(out, "{line}, length {}", s.payload().len())?;
            }
            Err(e) => {
                *bad.entry(reason(&e).to_string()).or_default() += 1;
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
    if let ackclock_wire::pcap::LinkType::Other(v) = link {
        writeln!(
            out,
            "link type {v} is not one decode reads (raw IP 101, IPv4 228, Ethernet 1, Linux cooked 113): no packet was decoded"
        )?;
    }
    match broken {
        Some(e) => Err(anyhow::anyhow!(
            "{e} (after {total} good record{})",
            if total == 1 { "" } else { "s" }
        )),
        None => Ok(()),
    }
}

/// The counter a malformed packet falls under (the error kind, without per-packet values).
fn reason(e: &WireError) -> &'static str {
    match e {
        WireError::Truncated { .. } => "truncated",
        WireError::BadVersion(_) => "not IPv4",
        WireError::BadHeaderLength(_) => "bad IPv4 header length",
        WireError::BadTotalLength { .. } => "bad IPv4 total length",
        WireError::BadIpChecksum => "bad IPv4 header checksum",
        WireError::Fragment { .. } => "IPv4 fragment",
        WireError::NotTcp(_) => "not TCP",
        WireError::BadDataOffset { .. } => "bad TCP data offset",
        WireError::BadOption { .. } => "bad TCP option",
        WireError::BadTcpChecksum => "bad TCP checksum",
        WireError::OptionsTooLong { .. } => "TCP options too long",
        WireError::TooLong(_) => "too long",
        WireError::NotUdp(_) => "not UDP",
        WireError::BadUdpLength { .. } => "bad UDP length",
        WireError::BadUdpChecksum => "bad UDP checksum",
    }
}
