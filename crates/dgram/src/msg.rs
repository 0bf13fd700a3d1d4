//! The messages our datagram applications exchange, inside UDP payloads. All integers are
//! big-endian; each message starts with a kind byte; anything shorter than its kind's
//! header, or of an unknown kind, is refused (the receiver counts and drops it).
//!
//! ```text
//! request, response, data:            feedback (RFC 5348 §3.2.2):
//!  0  kind (1 req, 2 resp, 3 data)      0  kind (4)
//!  1  transmission number (1, 2, ..)    1-3 zero
//!  2-3 zero                             4  highest data sequence number received
//!  4  request id / data sequence number 8  timestamp echo (of the last data packet)
//!  8  sender's timestamp, ns            16 t_delay, us (echo held at the receiver)
//!  16 request: response bytes wanted    20 X_recv, bytes/s
//!     response: zero                    24 loss event rate p, in units of 1e-9
//!     data: the sender's RTT, us        28 loss events so far
//!  20 padding to the message's size     32
//! ```

/// Length of the request, response and data headers.
pub const HEADER_LEN: usize = 20;
/// Length of a feedback message.
pub const FEEDBACK_LEN: usize = 32;

const KIND_REQUEST: u8 = 1;
const KIND_RESPONSE: u8 = 2;
const KIND_DATA: u8 = 3;
const KIND_FEEDBACK: u8 = 4;

/// A request, its response, or a data packet of a rate-controlled stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message {
    /// An RPC request: `id`, which transmission of it this is, when it was sent, and how
    /// many bytes the response should carry.
    Request {
        /// The request's number: a client numbers its requests 1, 2, ... (wrapping), and
        /// every transmission of one request carries the same number.
        id: u32,
        /// Which transmission of the request this is: 1 for the first, 2 for the first
        /// retransmission, and so on.
        xmit: u8,
        /// The client's clock when this transmission was sent, in ns since its zero.
        sent_ns: u64,
        /// UDP payload bytes the response should carry (the server holds it between the
        /// 20-byte header and its own largest response).
        response_bytes: u32,
    },
    /// The response to transmission `xmit` of request `id`, echoing its timestamp.
    Response {
        /// The number of the request answered.
        id: u32,
        /// The transmission answered, copied from the request.
        xmit: u8,
        /// The request's `sent_ns`, copied: the client times that transmission's round
        /// trip from it, unambiguously even after retransmissions.
        echo_ns: u64,
    },
    /// A data packet of a rate-controlled stream (RFC 5348 §3.2.1: sequence number,
    /// timestamp and the sender's RTT estimate).
    Data {
        /// The packet's sequence number: 0, 1, ... (wrapping), one per packet.
        seq: u32,
        /// The sender's clock when it was sent, in ns since its zero (the receiver echoes
        /// the latest in its feedback).
        sent_ns: u64,
        /// The sender's smoothed RTT, in us; 0 until it has one. The receiver sends its
        /// feedback once per this RTT (RFC 5348 §6).
        rtt_us: u32,
    },
    /// Receiver feedback (RFC 5348 §3.2.2), plus the count of loss events so a rate-based
    /// AIMD sender can see a new one.
    Feedback(Feedback),
}

/// Receiver feedback of a rate-controlled stream (RFC 5348 §3.2.2), plus its count of loss
/// events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Feedback {
    /// The highest sequence number received so far (in wrapping sequence order).
    pub highest_seq: u32,
    /// The timestamp (`sent_ns`) of the data packet with the highest sequence number.
    pub echo_ns: u64,
    /// Time between that packet's arrival and this feedback, us (t_delay: the sender
    /// subtracts it from its RTT sample).
    pub delay_us: u32,
    /// Rate at which data arrived since the last feedback, IP bytes/s (each packet's UDP
    /// payload plus 28 bytes of IP and UDP header).
    pub x_recv: u32,
    /// Loss event rate, in units of 1e-9.
    pub p_nano: u32,
    /// Loss events seen since the stream began.
    pub loss_events: u32,
}

impl Feedback {
    /// The loss event rate as a fraction (0 to 1), from [`p_nano`](Self::p_nano).
    pub fn p(&self) -> f64 {
        f64::from(self.p_nano) * 1e-9
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(x)
}

impl Message {
    /// Parses a message; `None` for anything too short or of an unknown kind.
    pub fn parse(b: &[u8]) -> Option<Message> {
        let kind = *b.first()?;
        if kind == KIND_FEEDBACK {
            if b.len() < FEEDBACK_LEN {
                return None;
            }
            return Some(Message::Feedback(Feedback {
                highest_seq: u32_at(b, 4),
                echo_ns: u64_at(b, 8),
                delay_us: u32_at(b, 16),
                x_recv: u32_at(b, 20),
                p_nano: u32_at(b, 24),
                loss_events: u32_at(b, 28),
            }));
        }
        if b.len() < HEADER_LEN {
            return None;
        }
        let (xmit, id, ts, word) = (b[1], u32_at(b, 4), u64_at(b, 8), u32_at(b, 16));
        match kind {
            KIND_REQUEST => Some(Message::Request {
                id,
                xmit,
                sent_ns: ts,
                response_bytes: word,
            }),
            KIND_RESPONSE => Some(Message::Response {
                id,
                xmit,
                echo_ns: ts,
            }),
            KIND_DATA => Some(Message::Data {
                seq: id,
                sent_ns: ts,
                rtt_us: word,
            }),
            _ => None,
        }
    }

    /// Writes the message into `buf`, padded with zeros to `buf`'s length (at least the
    /// message's header; a shorter buffer is a caller's bug and writes nothing), and
    /// returns the length written.
    pub fn write(&self, buf: &mut [u8]) -> usize {
        let need = match self {
            Message::Feedback(_) => FEEDBACK_LEN,
            _ => HEADER_LEN,
        };
        if buf.len() < need {
            debug_assert!(false, "message buffer of {} bytes", buf.len());
            return 0;
        }
        buf.fill(0);
        match *self {
            Message::Request {
                id,
                xmit,
                sent_ns,
                response_bytes,
            } => head(buf, KIND_REQUEST, xmit, id, sent_ns, response_bytes),
            Message::Response { id, xmit, echo_ns } => {
                head(buf, KIND_RESPONSE, xmit, id, echo_ns, 0)
            }
            Message::Data {
                seq,
                sent_ns,
                rtt_us,
            } => head(buf, KIND_DATA, 0, seq, sent_ns, rtt_us),
            Message::Feedback(f) => {
                buf[0] = KIND_FEEDBACK;
                buf[4..8].copy_from_slice(&f.highest_seq.to_be_bytes());
                buf[8..16].copy_from_slice(&f.echo_ns.to_be_bytes());
                buf[16..20].copy_from_slice(&f.delay_us.to_be_bytes());
                buf[20..24].copy_from_slice(&f.x_recv.to_be_bytes());
                buf[24..28].copy_from_slice(&f.p_nano.to_be_bytes());
                buf[28..32].copy_from_slice(&f.loss_events.to_be_bytes());
            }
        }
        buf.len()
    }
}

fn head(buf: &mut [u8], kind: u8, xmit: u8, id: u32, ts: u64, word: u32) {
    buf[0] = kind;
    buf[1] = xmit;
    buf[4..8].copy_from_slice(&id.to_be_bytes());
    buf[8..16].copy_from_slice(&ts.to_be_bytes());
    buf[16..20].copy_from_slice(&word.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_and_padding_is_ignored() {
        let msgs = [
            Message::Request {
                id: 7,
                xmit: 2,
                sent_ns: 123_456_789_000,
                response_bytes: 1024,
            },
            Message::Response {
                id: u32::MAX,
                xmit: 1,
                echo_ns: 42,
            },
            Message::Data {
                seq: 99,
                sent_ns: 1,
                rtt_us: 100_000,
            },
            Message::Feedback(Feedback {
                highest_seq: 5,
                echo_ns: 6,
                delay_us: 7,
                x_recv: 8,
                p_nano: 9,
                loss_events: 10,
            }),
        ];
        for m in msgs {
            let mut buf = [0xaau8; 300];
            let n = m.write(&mut buf);
            assert_eq!(n, 300);
            assert_eq!(Message::parse(&buf), Some(m));
        }
    }

    #[test]
    fn short_or_unknown_messages_are_refused() {
        assert_eq!(Message::parse(&[]), None);
        assert_eq!(Message::parse(&[1; 19]), None);
        assert_eq!(Message::parse(&[4; 31]), None);
        assert_eq!(Message::parse(&[9; 40]), None);
    }
}
