use thiserror::Error;

/// Why a buffer is not a well-formed packet, or why a header does not fit a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum WireError {
    /// The buffer is too short: to parse, it ends inside a header; to build, it cannot hold
    /// what would be written.
    #[error("truncated: need {need} bytes, have {have}")]
    Truncated {
        /// Bytes the header or packet needs.
        need: usize,
        /// Bytes the buffer has.
        have: usize,
    },
    /// The IP version field (the high four bits of the first byte) is not 4 (RFC 791 §3.1).
    #[error("IP version {0}, expected 4")]
    BadVersion(u8),
    /// The IHL field, in 32-bit words, is below 5: shorter than the fixed 20-byte header
    /// (RFC 791 §3.1).
    #[error("IPv4 header length of {0} words, below the minimum of 5")]
    BadHeaderLength(u8),
    /// The IPv4 total length does not cover its own header, or exceeds the buffer.
    #[error("IPv4 total length {total} is shorter than its {header}-byte header or longer than the {buffer}-byte buffer")]
    BadTotalLength {
        /// The total length field, in bytes.
        total: u16,
        /// The header length the IHL field gives, in bytes.
        header: usize,
        /// Bytes in the buffer.
        buffer: usize,
    },
    /// The IPv4 header checksum (RFC 791 §3.1, RFC 1071) does not verify.
    #[error("IPv4 header checksum does not verify")]
    BadIpChecksum,
    /// The packet is a fragment (MF set or a non-zero offset). Nothing in ackclock
    /// reassembles, so the whole-packet parsers refuse it.
    #[error("IPv4 fragment (offset {offset} bytes, more fragments: {more}); fragments are not reassembled")]
    Fragment {
        /// The fragment offset, in bytes.
        offset: u16,
        /// The More Fragments flag.
        more: bool,
    },
    /// The IP protocol field is not 6 (TCP); it holds the protocol found.
    #[error("IP protocol {0} is not TCP")]
    NotTcp(u8),
    /// The IP protocol field is not 17 (UDP); it holds the protocol found.
    #[error("IP protocol {0} is not UDP")]
    NotUdp(u8),
    /// The UDP length field (RFC 768) is below the 8-byte header or beyond the IP payload.
    #[error(
        "UDP length {udp} is below the 8-byte header or beyond the {ip_payload}-byte IP payload"
    )]
    BadUdpLength {
        /// The UDP length field, in bytes.
        udp: usize,
        /// Bytes of IP payload that carry the datagram.
        ip_payload: usize,
    },
    /// The UDP checksum over the pseudo-header and the datagram (RFC 768) does not verify.
    #[error("UDP checksum does not verify")]
    BadUdpChecksum,
    /// The TCP data offset (RFC 9293 §3.1) is below 5 words or points past the segment.
    #[error("TCP data offset of {offset} words does not fit: minimum 5, segment has {len} bytes")]
    BadDataOffset {
        /// The data offset field, in 32-bit words.
        offset: u8,
        /// Bytes in the segment.
        len: usize,
    },
    /// A TCP option is malformed: its length byte is missing, below 2, runs past the
    /// options area, or is wrong for its kind.
    #[error("TCP option kind {kind} at option byte {at}: {reason}")]
    BadOption {
        /// The option's kind byte.
        kind: u8,
        /// Offset of the option's kind byte within the options area (0 is the first byte
        /// after the fixed header).
        at: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The TCP checksum over the pseudo-header and the segment (RFC 9293 §3.1) does not
    /// verify.
    #[error("TCP checksum does not verify")]
    BadTcpChecksum,
    /// The options to write take more than the 40 bytes a TCP header has room for (data
    /// offset at most 15 words).
    #[error("TCP options need {need} bytes, at most 40 fit in a header")]
    OptionsTooLong {
        /// Bytes the options would take, padding included.
        need: usize,
    },
    /// The packet (or, for [`tcp::fill_checksum`](crate::tcp::fill_checksum), the segment)
    /// is longer than the 65535 bytes a 16-bit length field can say; it holds that length
    /// in bytes.
    #[error("packet of {0} bytes exceeds the IPv4 maximum of 65535")]
    TooLong(usize),
}

impl WireError {
    /// The kind of error, without its per-packet values: the counter a malformed packet
    /// falls under (`ackclock decode`'s summary, `ackclock analyze`'s `malformed`).
    pub fn kind(&self) -> &'static str {
        match self {
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
}
