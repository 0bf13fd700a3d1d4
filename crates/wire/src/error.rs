use thiserror::Error;

/// Why a buffer is not a well-formed packet, or why a header does not fit a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum WireError {
    #[error("truncated: need {need} bytes, have {have}")]
    Truncated { need: usize, have: usize },
    #[error("IP version {0}, expected 4")]
    BadVersion(u8),
    #[error("IPv4 header length of {0} words, below the minimum of 5")]
    BadHeaderLength(u8),
    #[error("IPv4 total length {total} is shorter than its {header}-byte header or longer than the {buffer}-byte buffer")]
    BadTotalLength {
        total: u16,
        header: usize,
        buffer: usize,
    },
    #[error("IPv4 header checksum does not verify")]
    BadIpChecksum,
    #[error("IPv4 fragment (offset {offset} bytes, more fragments: {more}); fragments are not reassembled")]
    Fragment { offset: u16, more: bool },
    #[error("IP protocol {0} is not TCP")]
    NotTcp(u8),
    #[error("IP protocol {0} is not UDP")]
    NotUdp(u8),
    #[error(
        "UDP length {udp} is below the 8-byte header or beyond the {ip_payload}-byte IP payload"
    )]
    BadUdpLength { udp: usize, ip_payload: usize },
    #[error("UDP checksum does not verify")]
    BadUdpChecksum,
    #[error("TCP data offset of {offset} words does not fit: minimum 5, segment has {len} bytes")]
    BadDataOffset { offset: u8, len: usize },
    #[error("TCP option kind {kind} at option byte {at}: {reason}")]
    BadOption {
        kind: u8,
        at: usize,
        reason: &'static str,
    },
    #[error("TCP checksum does not verify")]
    BadTcpChecksum,
    #[error("TCP options need {need} bytes, at most 40 fit in a header")]
    OptionsTooLong { need: usize },
    #[error("packet of {0} bytes exceeds the IPv4 maximum of 65535")]
    TooLong(usize),
}
