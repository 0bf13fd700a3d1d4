//! TCP segments (RFC 9293 §3.1): a zero-copy view with a validated data offset, the options
//! of RFC 9293 (EOL, NOP, MSS), RFC 7323 (window scale, timestamps) and RFC 2018
//! (SACK-permitted, SACK), and a header builder.
//!
//! Options are parsed on request ([`TcpSegment::options`]) rather than in `parse`, so the
//! header-prediction path can test "no options other than timestamps" without paying for a
//! general parse. A truncated or malformed option list is an error value, never a panic;
//! unknown kinds are skipped by their length.

use crate::checksum;
use crate::WireError;
use core::fmt;
use core::net::Ipv4Addr;

/// Length of a TCP header without options, in bytes (data offset 5).
pub const HEADER_LEN: usize = 20;
/// Most option bytes a header can carry (data offset 15 words).
pub const MAX_OPTIONS_LEN: usize = 40;

/// Option kinds (IANA "TCP Option Kind Numbers").
pub mod kind {
    /// End of option list (RFC 9293 §3.2): one byte; what follows is padding.
    pub const EOL: u8 = 0;
    /// No-operation (RFC 9293 §3.2): one byte, used to align the next option.
    pub const NOP: u8 = 1;
    /// Maximum segment size (RFC 9293 §3.2, §3.7.1): length 4, the most data bytes per
    /// segment the option's sender can receive; sent only on a SYN.
    pub const MSS: u8 = 2;
    /// Window scale (RFC 7323 §2.2): length 3, a shift count, sent only on a SYN.
    pub const WINDOW_SCALE: u8 = 3;
    /// SACK-permitted (RFC 2018 §2): length 2, sent only on a SYN.
    pub const SACK_PERMITTED: u8 = 4;
    /// SACK (RFC 2018 §3): length 2 + 8n, n blocks of received data.
    pub const SACK: u8 = 5;
    /// Timestamps (RFC 7323 §3.2): length 10, TSval and TSecr.
    pub const TIMESTAMPS: u8 = 8;
}

/// The nine TCP flag bits: FIN..CWR in byte 13, and AE (formerly NS, RFC 3540; now
/// Accurate ECN) in the low bit of byte 12.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TcpFlags(u16);

impl TcpFlags {
    /// No more data from the sender; occupies one sequence number (RFC 9293 §3.1).
    pub const FIN: TcpFlags = TcpFlags(0x001);
    /// Synchronize sequence numbers: opens a connection; occupies one sequence number.
    pub const SYN: TcpFlags = TcpFlags(0x002);
    /// Reset the connection.
    pub const RST: TcpFlags = TcpFlags(0x004);
    /// Push: deliver the data to the application without waiting for more.
    pub const PSH: TcpFlags = TcpFlags(0x008);
    /// The acknowledgment number is significant (RFC 9293: always set once a connection
    /// is established).
    pub const ACK: TcpFlags = TcpFlags(0x010);
    /// The urgent pointer is significant.
    pub const URG: TcpFlags = TcpFlags(0x020);
    /// ECN-Echo (RFC 3168 §6.1): on a SYN (with CWR) or a SYN-ACK, ECN negotiation;
    /// otherwise, the receiver saw a CE-marked packet.
    pub const ECE: TcpFlags = TcpFlags(0x040);
    /// Congestion Window Reduced (RFC 3168 §6.1): the sender answered an ECE.
    pub const CWR: TcpFlags = TcpFlags(0x080);
    /// Accurate ECN (formerly NS, RFC 3540): the low bit of byte 12.
    pub const AE: TcpFlags = TcpFlags(0x100);
    /// No flag set.
    pub const NONE: TcpFlags = TcpFlags(0);
    const ALL: u16 = 0x1ff;
    const NAMES: [(TcpFlags, char); 9] = [
        (Self::SYN, 'S'),
        (Self::FIN, 'F'),
        (Self::RST, 'R'),
        (Self::PSH, 'P'),
        (Self::ACK, '.'),
        (Self::URG, 'U'),
        (Self::ECE, 'E'),
        (Self::CWR, 'W'),
        (Self::AE, 'A'),
    ];

    /// From the nine flag bits; higher bits are ignored.
    #[inline]
    pub const fn from_bits(bits: u16) -> Self {
        TcpFlags(bits & Self::ALL)
    }
    /// The nine flag bits, FIN in bit 0 up to AE in bit 8: header bytes 12 and 13 read as
    /// one big-endian word, the data offset and reserved bits masked off.
    #[inline]
    pub const fn bits(self) -> u16 {
        self.0
    }
    /// True when every flag of `other` is set in `self`.
    #[inline]
    pub const fn contains(self, other: TcpFlags) -> bool {
        self.0 & other.0 == other.0
    }
    /// True when any flag of `other` is set in `self`.
    #[inline]
    pub const fn intersects(self, other: TcpFlags) -> bool {
        self.0 & other.0 != 0
    }
    /// The flags of both (`|`, usable in `const`).
    #[inline]
    pub const fn union(self, other: TcpFlags) -> Self {
        TcpFlags(self.0 | other.0)
    }
    /// `self` with the flags of `other` cleared.
    #[inline]
    pub const fn without(self, other: TcpFlags) -> Self {
        TcpFlags(self.0 & !other.0)
    }
    /// True when no flag is set.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl core::ops::BitOr for TcpFlags {
    type Output = TcpFlags;
    fn bitor(self, o: TcpFlags) -> TcpFlags {
        self.union(o)
    }
}
impl core::ops::BitOrAssign for TcpFlags {
    fn bitor_assign(&mut self, o: TcpFlags) {
        *self = self.union(o);
    }
}
impl core::ops::BitAnd for TcpFlags {
    type Output = TcpFlags;
    fn bitand(self, o: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 & o.0)
    }
}

/// tcpdump's notation: `S`, `F`, `R`, `P`, `.` for ACK, then `U`, `E`, `W`, `A`.
impl fmt::Display for TcpFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        for (flag, c) in Self::NAMES {
            if self.contains(flag) {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}
impl fmt::Debug for TcpFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{self}]")
    }
}

/// One SACK block (RFC 2018 §3): the left edge and the right edge (one past the last byte)
/// of a block of received data, as raw 32-bit sequence numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct SackBlock {
    /// Left Edge: the first sequence number of the block.
    pub left: u32,
    /// Right Edge: the sequence number just past the last byte of the block.
    pub right: u32,
}

/// Up to four SACK blocks, stored inline (no allocation per segment). Equality and hashing
/// look only at the blocks held, not at stale slots past `len`.
#[derive(Clone, Copy, Default)]
pub struct SackBlocks {
    len: u8,
    blocks: [SackBlock; 4],
}

impl SackBlocks {
    /// Most blocks an option can carry: 4 fill the 40 option bytes (RFC 2018 §3); with
    /// timestamps only 3 fit.
    pub const MAX: usize = 4;

    /// No blocks.
    pub const fn new() -> Self {
        SackBlocks {
            len: 0,
            blocks: [SackBlock { left: 0, right: 0 }; 4],
        }
    }
    /// Appends a block; returns false (and changes nothing) when four are held already.
    pub fn push(&mut self, b: SackBlock) -> bool {
        if usize::from(self.len) == Self::MAX {
            return false;
        }
        self.blocks[usize::from(self.len)] = b;
        self.len += 1;
        true
    }
    /// Removes every block.
    pub fn clear(&mut self) {
        self.len = 0;
    }
    /// Keeps only the first `n` blocks (all of them when `n` is at least their number).
    pub fn truncate(&mut self, n: usize) {
        // Compared as usize: `n as u8` wrapped, so truncate(256) kept none.
        if n < usize::from(self.len) {
            self.len = n as u8;
        }
    }
    /// Number of blocks held, 0 to [`MAX`](Self::MAX).
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }
    /// True when no block is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The blocks held, in the order they were pushed (on the wire: the order sent).
    pub fn as_slice(&self) -> &[SackBlock] {
        &self.blocks[..usize::from(self.len)]
    }
    /// Iterates the blocks held, in order.
    pub fn iter(&self) -> core::slice::Iter<'_, SackBlock> {
        self.as_slice().iter()
    }
}

impl PartialEq for SackBlocks {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}
impl Eq for SackBlocks {}
impl core::hash::Hash for SackBlocks {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl fmt::Debug for SackBlocks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl<'a> IntoIterator for &'a SackBlocks {
    type Item = &'a SackBlock;
    type IntoIter = core::slice::Iter<'a, SackBlock>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// The RFC 7323 timestamps option (§3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Timestamps {
    /// TSval: the sender's timestamp clock when the segment was sent, in the sender's
    /// (unspecified) clock units.
    pub tsval: u32,
    /// TSecr: the TSval most recently received from the peer, echoed back (valid only with
    /// ACK set).
    pub tsecr: u32,
}

/// One option as it appears on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpOption<'a> {
    /// End of option list (kind 0): the iterator stops after it.
    EndOfList,
    /// No-operation (kind 1), padding between options.
    Nop,
    /// Maximum segment size in bytes (kind 2, RFC 9293 §3.7.1).
    Mss(u16),
    /// The shift count as sent; RFC 7323 §2.3 says a receiver uses 14 for larger values,
    /// which is the engine's business, not the parser's.
    WindowScale(u8),
    /// SACK-permitted (kind 4, RFC 2018 §2).
    SackPermitted,
    /// SACK blocks (kind 5, RFC 2018 §3), one to four.
    Sack(SackBlocks),
    /// Timestamps (kind 8, RFC 7323 §3.2).
    Timestamps(Timestamps),
    /// A kind we do not interpret, with its data (the bytes after kind and length).
    Unknown {
        /// The option's kind byte.
        kind: u8,
        /// The bytes after the kind and length bytes (length - 2 of them).
        data: &'a [u8],
    },
}

/// Iterator over the options of a segment. After the first error it yields nothing more.
#[derive(Clone, Debug)]
pub struct TcpOptionsIter<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> TcpOptionsIter<'a> {
    /// Iterates an options area (the bytes between the fixed header and the data).
    pub fn new(options: &'a [u8]) -> Self {
        TcpOptionsIter {
            buf: options,
            at: 0,
        }
    }

    fn fail(
        &mut self,
        kind: u8,
        at: usize,
        reason: &'static str,
    ) -> Option<Result<TcpOption<'a>, WireError>> {
        self.at = self.buf.len();
        Some(Err(WireError::BadOption { kind, at, reason }))
    }
}

impl<'a> Iterator for TcpOptionsIter<'a> {
    type Item = Result<TcpOption<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        let at = self.at;
        let kind = *self.buf.get(at)?;
        match kind {
            kind::EOL => {
                // RFC 9293 §3.1: EOL ends the list; what follows is padding.
                self.at = self.buf.len();
                return Some(Ok(TcpOption::EndOfList));
            }
            kind::NOP => {
                self.at += 1;
                return Some(Ok(TcpOption::Nop));
            }
            _ => {}
        }
        let Some(&len) = self.buf.get(at + 1) else {
            return self.fail(kind, at, "length byte missing");
        };
        let len = usize::from(len);
        if len < 2 {
            return self.fail(kind, at, "length below 2");
        }
        let Some(body) = self.buf.get(at + 2..at + len) else {
            return self.fail(kind, at, "runs past the end of the header");
        };
        let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        let opt = match kind {
            kind::MSS => {
                if len != 4 {
                    return self.fail(kind, at, "MSS length is not 4");
                }
                TcpOption::Mss(u16::from_be_bytes([body[0], body[1]]))
            }
            kind::WINDOW_SCALE => {
                if len != 3 {
                    return self.fail(kind, at, "window scale length is not 3");
                }
                TcpOption::WindowScale(body[0])
            }
            kind::SACK_PERMITTED => {
                if len != 2 {
                    return self.fail(kind, at, "SACK-permitted length is not 2");
                }
                TcpOption::SackPermitted
            }
            kind::SACK => {
                let n = body.len() / 8;
                if body.len() % 8 != 0 || n == 0 || n > SackBlocks::MAX {
                    return self.fail(kind, at, "SACK length is not 2 + 8n with n in 1..=4");
                }
                let mut blocks = SackBlocks::new();
                for b in body.chunks_exact(8) {
                    blocks.push(SackBlock {
                        left: be32(&b[0..4]),
                        right: be32(&b[4..8]),
                    });
                }
                TcpOption::Sack(blocks)
            }
            kind::TIMESTAMPS => {
                if len != 10 {
                    return self.fail(kind, at, "timestamps length is not 10");
                }
                TcpOption::Timestamps(Timestamps {
                    tsval: be32(&body[0..4]),
                    tsecr: be32(&body[4..8]),
                })
            }
            _ => TcpOption::Unknown { kind, data: body },
        };
        self.at += len;
        Some(Ok(opt))
    }
}

/// How [`TcpOptions::emit_with`] orders the options and pads them to whole words. Every
/// layout parses the same (RFC 9293 §3.1: options may begin on any octet, NOP aligns them,
/// EOL ends the list); the choice matters only where packets are compared byte for byte
/// with another stack's, as packetdrill scripts do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OptionLayout {
    /// Linux's `tcp_options_write` order: MSS; SACK-permitted and timestamps sharing
    /// a word (`sackOK, TS`, else `nop, nop, TS` or `nop, nop, sackOK`); `nop, wscale`;
    /// `nop, nop, SACK`. Padding, when any were needed, would be NOPs. A SYN with everything
    /// is `mss, sackOK, TS, nop, wscale`. The default: what [`TcpOptions::emit`] writes.
    #[default]
    Linux,
    /// FreeBSD's `tcp_addoptions()` (sys/netinet/tcp_output.c): MSS; window scale after
    /// NOPs until the length is odd (at least one NOP); SACK-permitted after NOPs until it
    /// is even; timestamps, then SACK blocks, each after NOPs until the length is 2 modulo 4
    /// (at least one NOP); then EOL and zero padding to a whole word. A SYN with everything
    /// is `mss, nop, wscale, sackOK, TS` (20 bytes); MSS with SACK-permitted is
    /// `mss, sackOK, eol, eol`; SACK blocks alone are `nop, nop, SACK`.
    FreeBsd,
}

/// Writes option bytes into `buf` while counting them: with an empty `buf` it only counts,
/// so one function gives both [`TcpOptions::encoded_len_with`] and
/// [`TcpOptions::emit_with`] for layouts computed byte by byte.
struct OptionWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl OptionWriter<'_> {
    fn put(&mut self, bytes: &[u8]) {
        if let Some(dst) = self.buf.get_mut(self.len..self.len + bytes.len()) {
            dst.copy_from_slice(bytes);
        }
        self.len += bytes.len();
    }
    /// NOPs until `done(len)` holds.
    fn nops_until(&mut self, done: impl Fn(usize) -> bool) {
        while !done(self.len) {
            self.put(&[kind::NOP]);
        }
    }
}

/// The options we understand, gathered from one segment. When an option appears twice the
/// last one wins (as Linux does); unknown options are dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TcpOptions {
    /// Maximum segment size in bytes (RFC 9293 §3.7.1), meaningful on a SYN.
    pub mss: Option<u16>,
    /// Window scale shift count (RFC 7323 §2.2), meaningful on a SYN. As sent: values above
    /// 14 are the engine's to clamp.
    pub window_scale: Option<u8>,
    /// SACK-permitted (RFC 2018 §2), meaningful on a SYN.
    pub sack_permitted: bool,
    /// Timestamps (RFC 7323 §3).
    pub timestamps: Option<Timestamps>,
    /// SACK blocks (RFC 2018 §3); empty when there is no SACK option.
    pub sack: SackBlocks,
}

impl TcpOptions {
    /// No options: a bare 20-byte header.
    pub const NONE: TcpOptions = TcpOptions {
        mss: None,
        window_scale: None,
        sack_permitted: false,
        timestamps: None,
        sack: SackBlocks::new(),
    };

    /// Parses an options area (the bytes between the fixed header and the data).
    pub fn parse(options: &[u8]) -> Result<Self, WireError> {
        let mut o = TcpOptions::NONE;
        for opt in TcpOptionsIter::new(options) {
            match opt? {
                TcpOption::Mss(v) => o.mss = Some(v),
                TcpOption::WindowScale(v) => o.window_scale = Some(v),
                TcpOption::SackPermitted => o.sack_permitted = true,
                TcpOption::Sack(b) => o.sack = b,
                TcpOption::Timestamps(t) => o.timestamps = Some(t),
                TcpOption::EndOfList | TcpOption::Nop | TcpOption::Unknown { .. } => {}
            }
        }
        Ok(o)
    }

    /// Bytes [`emit_with`](Self::emit_with) writes in `layout`, a multiple of 4.
    #[inline]
    pub fn encoded_len_with(&self, layout: OptionLayout) -> usize {
        match layout {
            OptionLayout::Linux => self.encoded_len(),
            OptionLayout::FreeBsd => self.write_freebsd(&mut []),
        }
    }

    /// Writes the options in `layout` into the front of `buf`; returns the bytes written
    /// (a multiple of 4). The errors of [`emit`](Self::emit).
    #[inline]
    pub fn emit_with(&self, layout: OptionLayout, buf: &mut [u8]) -> Result<usize, WireError> {
        match layout {
            OptionLayout::Linux => self.emit(buf),
            OptionLayout::FreeBsd => {
                let need = self.write_freebsd(&mut []);
                if need > MAX_OPTIONS_LEN {
                    return Err(WireError::OptionsTooLong { need });
                }
                let Some(out) = buf.get_mut(..need) else {
                    return Err(WireError::Truncated {
                        need,
                        have: buf.len(),
                    });
                };
                let n = self.write_freebsd(out);
                debug_assert_eq!(n, need);
                Ok(n)
            }
        }
    }

    /// [`OptionLayout::FreeBsd`]: writes what fits of the options into `buf` (nothing when
    /// it is empty) and returns their length. The NOP rules are FreeBSD's
    /// `tcp_addoptions()`, option by option, in its order (MSS, window scale,
    /// SACK-permitted, timestamps, SACK).
    fn write_freebsd(&self, buf: &mut [u8]) -> usize {
        let mut w = OptionWriter { buf, len: 0 };
        if let Some(mss) = self.mss {
            let m = mss.to_be_bytes();
            w.nops_until(|n| n % 4 == 0);
            w.put(&[kind::MSS, 4, m[0], m[1]]);
        }
        if let Some(ws) = self.window_scale {
            w.nops_until(|n| n != 0 && n % 2 == 1);
            w.put(&[kind::WINDOW_SCALE, 3, ws]);
        }
        if self.sack_permitted {
            w.nops_until(|n| n % 2 == 0);
            w.put(&[kind::SACK_PERMITTED, 2]);
        }
        if let Some(ts) = self.timestamps {
            w.nops_until(|n| n != 0 && n % 4 == 2);
            w.put(&[kind::TIMESTAMPS, 10]);
            w.put(&ts.tsval.to_be_bytes());
            w.put(&ts.tsecr.to_be_bytes());
        }
        if !self.sack.is_empty() {
            w.nops_until(|n| n != 0 && n % 4 == 2);
            w.put(&[kind::SACK, 2 + 8 * self.sack.len() as u8]);
            for b in &self.sack {
                w.put(&b.left.to_be_bytes());
                w.put(&b.right.to_be_bytes());
            }
        }
        // "Terminate and pad TCP options to a 4 byte boundary": one EOL, then zeros, which
        // are EOLs too (RFC 9293 §3.1: the padding is composed of zeros).
        while w.len % 4 != 0 {
            w.put(&[kind::EOL]);
        }
        w.len
    }

    /// Bytes [`emit`](Self::emit) writes, a multiple of 4.
    pub fn encoded_len(&self) -> usize {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        // SACK-permitted and timestamps share a word-aligned 12 bytes when both are present
        // (the layout Linux sends on a SYN); each alone is padded with two NOPs.
        n += match (self.sack_permitted, self.timestamps.is_some()) {
            (true, true) => 12,
            (false, true) => 12,
            (true, false) => 4,
            (false, false) => 0,
        };
        if self.window_scale.is_some() {
            n += 4;
        }
        if !self.sack.is_empty() {
            n += 4 + 8 * self.sack.len();
        }
        n
    }

    /// Writes the options, NOP-padded to a 4-byte boundary, into the front of `buf`; returns
    /// the bytes written. Errors when they exceed 40 bytes (e.g. 4 SACK blocks with
    /// timestamps: the engine must send at most 3, RFC 2018 §3) or `buf` is too short.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let need = self.encoded_len();
        if need > MAX_OPTIONS_LEN {
            return Err(WireError::OptionsTooLong { need });
        }
        let Some(out) = buf.get_mut(..need) else {
            return Err(WireError::Truncated {
                need,
                have: buf.len(),
            });
        };
        let mut i = 0;
        let mut put = |bytes: &[u8]| {
            out[i..i + bytes.len()].copy_from_slice(bytes);
            i += bytes.len();
        };
        if let Some(mss) = self.mss {
            let m = mss.to_be_bytes();
            put(&[kind::MSS, 4, m[0], m[1]]);
        }
        match (self.sack_permitted, self.timestamps) {
            (true, Some(_)) => put(&[kind::SACK_PERMITTED, 2]),
            (false, Some(_)) => put(&[kind::NOP, kind::NOP]),
            (true, None) => put(&[kind::NOP, kind::NOP, kind::SACK_PERMITTED, 2]),
            (false, None) => {}
        }
        if let Some(ts) = self.timestamps {
            put(&[kind::TIMESTAMPS, 10]);
            put(&ts.tsval.to_be_bytes());
            put(&ts.tsecr.to_be_bytes());
        }
        if let Some(ws) = self.window_scale {
            put(&[kind::NOP, kind::WINDOW_SCALE, 3, ws]);
        }
        if !self.sack.is_empty() {
            put(&[
                kind::NOP,
                kind::NOP,
                kind::SACK,
                2 + 8 * self.sack.len() as u8,
            ]);
            for b in &self.sack {
                put(&b.left.to_be_bytes());
                put(&b.right.to_be_bytes());
            }
        }
        debug_assert_eq!(i, need);
        Ok(need)
    }
}

/// A view over a TCP segment (header, options, data) with a validated data offset. The
/// checksum is verified by [`verify_checksum`](Self::verify_checksum) or by
/// [`crate::parse_ipv4_tcp`], which knows the addresses.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TcpSegment<'a> {
    buf: &'a [u8],
    /// The fixed header, `buf[..20]`, as an array: the field accessors then need no bounds
    /// checks (they run on every segment).
    hdr: &'a [u8; HEADER_LEN],
}

impl fmt::Debug for TcpSegment<'_> {
    // As derived before `hdr` existed: `hdr` repeats the start of `buf`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpSegment")
            .field("buf", &self.buf)
            .finish()
    }
}

impl<'a> TcpSegment<'a> {
    /// Checks that the buffer holds a fixed header and that the data offset is at least 5
    /// words and within the buffer. Options are not parsed here.
    #[inline]
    pub fn parse(buf: &'a [u8]) -> Result<Self, WireError> {
        let Some(hdr) = buf.first_chunk::<HEADER_LEN>() else {
            return Err(WireError::Truncated {
                need: HEADER_LEN,
                have: buf.len(),
            });
        };
        let offset = hdr[12] >> 4;
        if offset < 5 || usize::from(offset) * 4 > buf.len() {
            return Err(WireError::BadDataOffset {
                offset,
                len: buf.len(),
            });
        }
        Ok(TcpSegment { buf, hdr })
    }

    /// The fixed 20-byte header (options excluded).
    #[inline]
    pub fn fixed_header(&self) -> &'a [u8; HEADER_LEN] {
        self.hdr
    }

    /// The whole segment: header, options and data.
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.buf
    }
    /// The source port.
    #[inline]
    pub fn src_port(&self) -> u16 {
        u16::from_be_bytes([self.hdr[0], self.hdr[1]])
    }
    /// The destination port.
    #[inline]
    pub fn dst_port(&self) -> u16 {
        u16::from_be_bytes([self.hdr[2], self.hdr[3]])
    }
    /// The sequence number: of the first data byte, or of the SYN itself when SYN is set.
    #[inline]
    pub fn seq(&self) -> u32 {
        u32::from_be_bytes([self.hdr[4], self.hdr[5], self.hdr[6], self.hdr[7]])
    }
    /// The acknowledgment number: the next sequence number the sender expects (meaningful
    /// when ACK is set).
    #[inline]
    pub fn ack(&self) -> u32 {
        u32::from_be_bytes([self.hdr[8], self.hdr[9], self.hdr[10], self.hdr[11]])
    }
    /// Header length in bytes (data offset * 4).
    #[inline]
    pub fn header_len(&self) -> usize {
        usize::from(self.hdr[12] >> 4) * 4
    }
    /// The three reserved bits (RFC 9293: must be zero when sent, ignored when received).
    #[inline]
    pub fn reserved(&self) -> u8 {
        (self.hdr[12] >> 1) & 0x07
    }
    /// The nine flag bits, AE included.
    #[inline]
    pub fn flags(&self) -> TcpFlags {
        TcpFlags::from_bits((u16::from(self.hdr[12] & 1) << 8) | u16::from(self.hdr[13]))
    }
    /// The window field as sent, in bytes before window scaling (RFC 7323 §2.3: the
    /// receiver shifts it, except on a SYN).
    #[inline]
    pub fn window(&self) -> u16 {
        u16::from_be_bytes([self.hdr[14], self.hdr[15]])
    }
    /// The checksum field as received.
    #[inline]
    pub fn checksum(&self) -> u16 {
        u16::from_be_bytes([self.hdr[16], self.hdr[17]])
    }
    /// The urgent pointer: an offset from [`seq`](Self::seq), meaningful when URG is set.
    #[inline]
    pub fn urgent(&self) -> u16 {
        u16::from_be_bytes([self.hdr[18], self.hdr[19]])
    }
    /// The raw options area.
    #[inline]
    pub fn options_bytes(&self) -> &'a [u8] {
        &self.buf[HEADER_LEN..self.header_len()]
    }
    /// Iterates the options one by one, as they are on the wire.
    pub fn options_iter(&self) -> TcpOptionsIter<'a> {
        TcpOptionsIter::new(self.options_bytes())
    }
    /// Parses the options we understand.
    pub fn options(&self) -> Result<TcpOptions, WireError> {
        TcpOptions::parse(self.options_bytes())
    }
    /// The data after the header and options.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buf[self.header_len()..]
    }
    /// Sequence space the segment occupies: data plus one for each of SYN and FIN.
    #[inline]
    pub fn seq_len(&self) -> u32 {
        let f = self.flags();
        self.payload().len() as u32
            + u32::from(f.contains(TcpFlags::SYN))
            + u32::from(f.contains(TcpFlags::FIN))
    }
    /// Verifies the checksum over the pseudo-header (RFC 9293 §3.1) and the segment.
    pub fn verify_checksum(&self, src: Ipv4Addr, dst: Ipv4Addr) -> bool {
        let Ok(len) = u16::try_from(self.buf.len()) else {
            return false;
        };
        let ph = checksum::pseudo_header_sum(src, dst, crate::IPPROTO_TCP, len);
        checksum::add(ph, checksum::sum(self.buf)) == 0xffff
    }
}

/// The fields of a TCP header we build. Data offset and checksum are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TcpHeader {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number of the first data byte (or of the SYN).
    pub seq: u32,
    /// Acknowledgment number: the next sequence number expected from the peer.
    pub ack: u32,
    /// The flag bits, AE included.
    pub flags: TcpFlags,
    /// The window field as written, already shifted right by the window scale where one
    /// is in use (RFC 7323 §2.3).
    pub window: u16,
    /// Urgent pointer, an offset from `seq` (with URG).
    pub urgent: u16,
    /// The options, written in the layout the emit call asks for.
    pub options: TcpOptions,
}

impl TcpHeader {
    /// The header of a parsed segment. Fails only if its options are malformed.
    pub fn from_segment(s: &TcpSegment<'_>) -> Result<Self, WireError> {
        Ok(TcpHeader {
            src_port: s.src_port(),
            dst_port: s.dst_port(),
            seq: s.seq(),
            ack: s.ack(),
            flags: s.flags(),
            window: s.window(),
            urgent: s.urgent(),
            options: s.options()?,
        })
    }

    /// Header length in bytes, options included.
    pub fn header_len(&self) -> usize {
        HEADER_LEN + self.options.encoded_len()
    }

    /// Header length in bytes with the options in `layout`.
    pub fn header_len_with(&self, layout: OptionLayout) -> usize {
        HEADER_LEN + self.options.encoded_len_with(layout)
    }

    /// Writes the header into the front of `buf` with a zero checksum field; returns its
    /// length. Use [`fill_checksum`] once the data follows it, or
    /// [`crate::write_ipv4_tcp`] to do both with checksum-and-copy.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        self.emit_with(OptionLayout::Linux, buf)
    }

    /// As [`emit`](Self::emit), with the options in `layout`.
    pub fn emit_with(&self, layout: OptionLayout, buf: &mut [u8]) -> Result<usize, WireError> {
        let opt_len = self.options.encoded_len_with(layout);
        if opt_len > MAX_OPTIONS_LEN {
            return Err(WireError::OptionsTooLong { need: opt_len });
        }
        let len = HEADER_LEN + opt_len;
        if buf.len() < len {
            return Err(WireError::Truncated {
                need: len,
                have: buf.len(),
            });
        }
        let h = &mut buf[..len];
        h[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        h[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        h[4..8].copy_from_slice(&self.seq.to_be_bytes());
        h[8..12].copy_from_slice(&self.ack.to_be_bytes());
        let bits = self.flags.bits();
        h[12] = ((len / 4) as u8) << 4 | (bits >> 8) as u8;
        h[13] = bits as u8;
        h[14..16].copy_from_slice(&self.window.to_be_bytes());
        h[16..18].fill(0);
        h[18..20].copy_from_slice(&self.urgent.to_be_bytes());
        self.options.emit_with(layout, &mut h[HEADER_LEN..])?;
        Ok(len)
    }
}

/// Computes and writes the checksum of a complete segment (header and data) whose checksum
/// field may hold anything.
pub fn fill_checksum(segment: &mut [u8], src: Ipv4Addr, dst: Ipv4Addr) -> Result<(), WireError> {
    if segment.len() < HEADER_LEN {
        return Err(WireError::Truncated {
            need: HEADER_LEN,
            have: segment.len(),
        });
    }
    let len = u16::try_from(segment.len()).map_err(|_| WireError::TooLong(segment.len()))?;
    segment[16..18].fill(0);
    let ph = checksum::pseudo_header_sum(src, dst, crate::IPPROTO_TCP, len);
    let ck = !checksum::add(ph, checksum::sum(segment));
    segment[16..18].copy_from_slice(&ck.to_be_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sack_blocks_truncate_keeps_all_when_asked_for_more_than_there_are() {
        let mut b = SackBlocks::new();
        b.push(SackBlock { left: 1, right: 2 });
        b.push(SackBlock { left: 5, right: 9 });
        for n in [2, 3, 255, 256, 257, usize::MAX] {
            let mut c = b;
            c.truncate(n);
            assert_eq!(c.len(), 2, "truncate({n})");
        }
        b.truncate(1);
        assert_eq!(b.len(), 1);
    }

    const A: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
    const B: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);

    #[test]
    fn flags_display_like_tcpdump() {
        assert_eq!((TcpFlags::SYN | TcpFlags::ACK).to_string(), "S.");
        assert_eq!(
            (TcpFlags::FIN | TcpFlags::PSH | TcpFlags::ACK).to_string(),
            "FP."
        );
        assert_eq!(TcpFlags::NONE.to_string(), "none");
        assert_eq!(TcpFlags::from_bits(0xffff).bits(), 0x1ff);
    }

    #[test]
    fn linux_syn_options_parse() {
        // The option bytes of a Linux SYN: MSS 1460, SACK-permitted, TS, NOP, WS 7.
        let opts = [
            2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
        ];
        let o = TcpOptions::parse(&opts).unwrap();
        assert_eq!(o.mss, Some(1460));
        assert!(o.sack_permitted);
        assert_eq!(o.timestamps, Some(Timestamps { tsval: 1, tsecr: 0 }));
        assert_eq!(o.window_scale, Some(7));
        assert!(o.sack.is_empty());
        // Our own layout of the same set is the same 20 bytes.
        let mut out = [0u8; 40];
        let n = o.emit(&mut out).unwrap();
        assert_eq!(&out[..n], &opts);
    }

    fn ts(tsval: u32, tsecr: u32) -> Option<Timestamps> {
        Some(Timestamps { tsval, tsecr })
    }

    fn freebsd(o: &TcpOptions) -> Vec<u8> {
        let mut out = [0xa5u8; 40];
        let n = o.emit_with(OptionLayout::FreeBsd, &mut out).unwrap();
        assert_eq!(n, o.encoded_len_with(OptionLayout::FreeBsd), "{o:?}");
        assert_eq!(n % 4, 0, "{o:?}");
        out[..n].to_vec()
    }

    #[test]
    fn freebsd_layout_syn_with_everything_is_mss_nop_wscale_sackok_ts() {
        // tcp_addoptions(): MSS at 0; one NOP makes the length odd for the window scale (at
        // 5..8); SACK-permitted at an even length (8..10); timestamps at 2 mod 4 (10..20).
        let o = TcpOptions {
            mss: Some(1460),
            window_scale: Some(6),
            sack_permitted: true,
            timestamps: ts(100, 0),
            sack: SackBlocks::new(),
        };
        assert_eq!(
            freebsd(&o),
            [2, 4, 0x05, 0xb4, 1, 3, 3, 6, 4, 2, 8, 10, 0, 0, 0, 100, 0, 0, 0, 0]
        );
        assert_eq!(TcpOptions::parse(&freebsd(&o)).unwrap(), o);
    }

    #[test]
    fn freebsd_layout_synack_with_mss_and_sackok_is_padded_with_eol() {
        // packetdrill's `<mss 1460,sackOK,eol,eol>`: the list ends at 6 bytes and is
        // terminated and padded with EOL (kind 0), not NOPs.
        let o = TcpOptions {
            mss: Some(1460),
            sack_permitted: true,
            ..TcpOptions::NONE
        };
        assert_eq!(freebsd(&o), [2, 4, 0x05, 0xb4, 4, 2, 0, 0]);
        // Linux writes the same set as `mss, nop, nop, sackOK`.
        let mut out = [0u8; 40];
        let n = o.emit(&mut out).unwrap();
        assert_eq!(&out[..n], &[2, 4, 0x05, 0xb4, 1, 1, 4, 2]);
        // The parser stops at the EOL and finds the same options.
        assert_eq!(TcpOptions::parse(&freebsd(&o)).unwrap(), o);
        // MSS alone needs no padding at all.
        let o = TcpOptions {
            mss: Some(1460),
            ..TcpOptions::NONE
        };
        assert_eq!(freebsd(&o), [2, 4, 0x05, 0xb4]);
    }

    #[test]
    fn freebsd_layout_sack_blocks_follow_two_nops() {
        // `<nop,nop,sack 50:100 600:700>`: without timestamps the SACK option starts at 2.
        let mut o = TcpOptions::NONE;
        o.sack.push(SackBlock {
            left: 50,
            right: 100,
        });
        o.sack.push(SackBlock {
            left: 600,
            right: 700,
        });
        assert_eq!(
            freebsd(&o),
            [1, 1, 5, 18, 0, 0, 0, 50, 0, 0, 0, 100, 0, 0, 2, 0x58, 0, 0, 2, 0xbc]
        );
        assert_eq!(TcpOptions::parse(&freebsd(&o)).unwrap(), o);
        // With timestamps: `nop, nop, TS, nop, nop, SACK` (both start at 2 mod 4), the
        // bytes Linux writes too.
        o.timestamps = ts(7, 9);
        let mut linux = [0u8; 40];
        let n = o.emit(&mut linux).unwrap();
        assert_eq!(freebsd(&o), &linux[..n]);
        assert_eq!(&freebsd(&o)[..4], &[1, 1, 8, 10]);
        assert_eq!(&freebsd(&o)[12..16], &[1, 1, 5, 18]);
    }

    #[test]
    fn freebsd_layout_other_combinations() {
        let mss = Some(1460);
        let cases: &[(TcpOptions, &[u8])] = &[
            // Timestamps alone: `nop, nop, TS`, what the connection template writes.
            (
                TcpOptions {
                    timestamps: ts(1, 2),
                    ..TcpOptions::NONE
                },
                &[1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2],
            ),
            // A SYN-ACK to a peer offering window scale and SACK without timestamps.
            (
                TcpOptions {
                    mss,
                    window_scale: Some(6),
                    sack_permitted: true,
                    ..TcpOptions::NONE
                },
                &[2, 4, 0x05, 0xb4, 1, 3, 3, 6, 4, 2, 0, 0],
            ),
            // MSS, window scale and timestamps: two NOPs bring 8 to 2 mod 4.
            (
                TcpOptions {
                    mss,
                    window_scale: Some(0),
                    timestamps: ts(3, 4),
                    ..TcpOptions::NONE
                },
                &[
                    2, 4, 5, 0xb4, 1, 3, 3, 0, 1, 1, 8, 10, 0, 0, 0, 3, 0, 0, 0, 4,
                ],
            ),
            // MSS, SACK-permitted and timestamps: no NOP between them.
            (
                TcpOptions {
                    mss,
                    sack_permitted: true,
                    timestamps: ts(3, 4),
                    ..TcpOptions::NONE
                },
                &[2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 3, 0, 0, 0, 4],
            ),
            // Window scale first still gets its NOP ("while (!optlen || ...)").
            (
                TcpOptions {
                    window_scale: Some(14),
                    ..TcpOptions::NONE
                },
                &[1, 3, 3, 14],
            ),
            (
                TcpOptions {
                    sack_permitted: true,
                    ..TcpOptions::NONE
                },
                &[4, 2, 0, 0],
            ),
            (TcpOptions::NONE, &[]),
        ];
        for (o, want) in cases {
            assert_eq!(freebsd(o), *want, "{o:?}");
            assert_eq!(TcpOptions::parse(want).unwrap(), *o);
        }
    }

    #[test]
    fn layouts_agree_on_length_and_both_parse_back() {
        // Every combination: both layouts parse back to the same options and fail alike.
        // Those a TCP sends (SYN options without SACK blocks, or timestamps and SACK blocks
        // on other segments) take the same room in both, so room reserved for options does
        // not depend on the layout.
        for bits in 0..16u32 {
            for blocks in 0..=4u32 {
                let mut o = TcpOptions {
                    mss: (bits & 1 != 0).then_some(1460),
                    window_scale: (bits & 2 != 0).then_some(7),
                    sack_permitted: bits & 4 != 0,
                    timestamps: if bits & 8 != 0 { ts(11, 12) } else { None },
                    sack: SackBlocks::new(),
                };
                for b in 0..blocks {
                    o.sack.push(SackBlock {
                        left: 1000 * b,
                        right: 1000 * b + 10,
                    });
                }
                let n = o.encoded_len();
                assert_eq!(o.encoded_len_with(OptionLayout::Linux), n, "{o:?}");
                let sent_by_tcp = blocks == 0 || bits & 7 == 0;
                if sent_by_tcp {
                    assert_eq!(o.encoded_len_with(OptionLayout::FreeBsd), n, "{o:?}");
                }
                let mut out = [0u8; 60];
                let r = o.emit_with(OptionLayout::FreeBsd, &mut out);
                if sent_by_tcp {
                    assert_eq!(r, o.emit(&mut [0u8; 60]), "{o:?}");
                }
                match r {
                    Ok(n) => {
                        assert_eq!(n, o.encoded_len_with(OptionLayout::FreeBsd));
                        assert_eq!(TcpOptions::parse(&out[..n]).unwrap(), o, "{o:?}");
                    }
                    Err(e) => assert!(matches!(e, WireError::OptionsTooLong { .. }), "{e:?}"),
                }
            }
        }
        // A short buffer is the same error as in the Linux layout.
        let o = TcpOptions {
            mss: Some(1460),
            ..TcpOptions::NONE
        };
        assert_eq!(
            o.emit_with(OptionLayout::FreeBsd, &mut [0u8; 3]),
            Err(WireError::Truncated { need: 4, have: 3 })
        );
    }

    #[test]
    fn header_emit_with_freebsd_layout_sets_the_data_offset() {
        let h = TcpHeader {
            src_port: 8080,
            dst_port: 40000,
            seq: 1,
            ack: 2,
            flags: TcpFlags::SYN | TcpFlags::ACK,
            window: 65535,
            urgent: 0,
            options: TcpOptions {
                mss: Some(1460),
                sack_permitted: true,
                ..TcpOptions::NONE
            },
        };
        let mut buf = [0u8; 60];
        let n = h.emit_with(OptionLayout::FreeBsd, &mut buf).unwrap();
        assert_eq!(n, 28);
        assert_eq!(h.header_len_with(OptionLayout::FreeBsd), 28);
        let s = TcpSegment::parse(&buf[..n]).unwrap();
        assert_eq!(s.options_bytes(), &[2, 4, 0x05, 0xb4, 4, 2, 0, 0]);
        assert_eq!(TcpHeader::from_segment(&s).unwrap(), h);
    }

    #[test]
    fn unknown_options_are_skipped_by_length() {
        let opts = [1, 30, 4, 0xaa, 0xbb, 2, 4, 0x02, 0x18, 0, 0, 0];
        let items: Vec<_> = TcpOptionsIter::new(&opts)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            items,
            vec![
                TcpOption::Nop,
                TcpOption::Unknown {
                    kind: 30,
                    data: &[0xaa, 0xbb]
                },
                TcpOption::Mss(536),
                TcpOption::EndOfList
            ]
        );
    }

    #[test]
    fn malformed_options_are_errors() {
        let cases: &[&[u8]] = &[
            &[2],                      // length byte missing
            &[2, 4, 5],                // runs past the end
            &[2, 3, 5],                // MSS with bad length
            &[3, 4, 1, 1],             // WS with bad length
            &[4, 3, 0],                // SACK-permitted with bad length
            &[8, 8, 0, 0, 0, 0, 0, 0], // TS with bad length
            &[5, 2],                   // SACK with no blocks
            &[5, 6, 0, 0, 0, 0],       // SACK with a partial block
            &[99, 1],                  // unknown with length 1
            &[99, 0],                  // unknown with length 0
        ];
        for c in cases {
            assert!(
                matches!(TcpOptions::parse(c), Err(WireError::BadOption { .. })),
                "{c:?}"
            );
        }
        let mut five = vec![5u8, 42];
        five.extend_from_slice(&[0; 40]);
        assert!(TcpOptions::parse(&five).is_err(), "five SACK blocks");
    }

    #[test]
    fn iterator_stops_after_error() {
        let mut it = TcpOptionsIter::new(&[1, 2, 9, 1]);
        assert_eq!(it.next(), Some(Ok(TcpOption::Nop)));
        assert!(matches!(
            it.next(),
            Some(Err(WireError::BadOption { kind: 2, at: 1, .. }))
        ));
        assert_eq!(it.next(), None);
    }

    #[test]
    fn sack_blocks_round_trip_and_limit() {
        let mut o = TcpOptions::NONE;
        for i in 0..4u32 {
            assert!(o.sack.push(SackBlock {
                left: 1000 * i,
                right: 1000 * i + 500
            }));
        }
        assert!(!o.sack.push(SackBlock::default()));
        let mut out = [0u8; 40];
        let n = o.emit(&mut out).unwrap();
        assert_eq!(n, 36);
        assert_eq!(TcpOptions::parse(&out[..n]).unwrap(), o);
        // With timestamps, four blocks do not fit (RFC 2018 §3: at most three).
        o.timestamps = Some(Timestamps { tsval: 5, tsecr: 6 });
        assert_eq!(
            o.emit(&mut out),
            Err(WireError::OptionsTooLong { need: 48 })
        );
        o.sack.truncate(3);
        let n = o.emit(&mut out).unwrap();
        assert_eq!(n, 40);
        assert_eq!(TcpOptions::parse(&out[..n]).unwrap(), o);
    }

    #[test]
    fn data_offset_is_validated() {
        let mut b = [0u8; 24];
        b[12] = 4 << 4;
        assert!(matches!(
            TcpSegment::parse(&b),
            Err(WireError::BadDataOffset { offset: 4, .. })
        ));
        b[12] = 7 << 4; // 28 bytes claimed in a 24-byte buffer
        assert!(matches!(
            TcpSegment::parse(&b),
            Err(WireError::BadDataOffset { offset: 7, .. })
        ));
        b[12] = 6 << 4;
        let s = TcpSegment::parse(&b).unwrap();
        assert_eq!(s.header_len(), 24);
        assert!(s.payload().is_empty());
        assert!(matches!(
            TcpSegment::parse(&b[..19]),
            Err(WireError::Truncated { .. })
        ));
    }

    #[test]
    fn build_fill_checksum_and_parse() {
        let h = TcpHeader {
            src_port: 40000,
            dst_port: 9,
            seq: 0xfffffff0,
            ack: 12345,
            flags: TcpFlags::ACK | TcpFlags::PSH | TcpFlags::AE,
            window: 65535,
            urgent: 0,
            options: TcpOptions {
                timestamps: Some(Timestamps { tsval: 7, tsecr: 9 }),
                ..TcpOptions::NONE
            },
        };
        let mut buf = [0u8; 100];
        let hl = h.emit(&mut buf).unwrap();
        assert_eq!(hl, 32);
        buf[hl..hl + 5].copy_from_slice(b"hello");
        fill_checksum(&mut buf[..hl + 5], A, B).unwrap();
        let s = TcpSegment::parse(&buf[..hl + 5]).unwrap();
        assert!(s.verify_checksum(A, B));
        assert!(!s.verify_checksum(B, Ipv4Addr::new(198, 18, 0, 3)));
        assert_eq!(TcpHeader::from_segment(&s).unwrap(), h);
        assert_eq!(s.payload(), b"hello");
        assert_eq!(s.seq_len(), 5);
        assert_eq!(s.reserved(), 0);
    }
}
