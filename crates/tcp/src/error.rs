//! Errors, one type per operation, each saying what the application can do next (as
//! quinn-proto's `ReadError`/`WriteError` and smoltcp's `SendError`/`RecvError`), plus
//! [`TcpError`], the sum of them all, for code that handles every error alike (`?` into
//! one type).

/// Why a connection ended abnormally: [`Connection::error`](crate::Connection::error), the
/// `error` of [`Event::Closed`](crate::Event::Closed), and what sending, receiving and
/// closing report afterwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionError {
    /// The peer reset the connection (an acceptable RST, RFC 9293 §3.10.7.4, RFC 5961
    /// §3.2). Data it had acknowledged was delivered; the rest is lost.
    #[error("connection reset by peer")]
    Reset,
    /// The peer answered our SYN with a RST (RFC 9293 §3.10.7.3): nothing listens on that
    /// address and port. Also an acceptable RST in SYN-RECEIVED entered from SYN-SENT (a
    /// simultaneous open: the connection was initiated with an active OPEN, §3.10.7.4).
    #[error("connection refused: nothing listens on that port")]
    Refused,
    /// The connection gave up: more consecutive retransmission timeouts than
    /// [`TcpConfig::max_retransmits`](crate::TcpConfig::max_retransmits)
    /// ([`TcpConfig::max_syn_retransmits`](crate::TcpConfig::max_syn_retransmits) in the
    /// handshake), more unanswered zero-window probes in a row than `max_retransmits`, or
    /// the RFC 5482 user timeout ([`TcpConfig::user_timeout`](crate::TcpConfig::user_timeout)).
    /// A RST tells a synchronized peer.
    #[error("connection timed out: the peer stopped answering")]
    TimedOut,
    /// The application aborted it ([`Connection::abort`](crate::Connection::abort),
    /// [`Endpoint::abort`](crate::Endpoint::abort)).
    #[error("connection aborted by the application")]
    Aborted,
}

/// [`Connection::send`](crate::Connection::send) and
/// [`send_with`](crate::Connection::send_with) could not queue data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// Sending has ended: the application closed its side, or the connection is in no
    /// state that sends (SYN-SENT, SYN-RECEIVED, ESTABLISHED and CLOSE-WAIT do, until the
    /// application closes). Nothing more can be sent on this connection.
    #[error("the connection is not open for sending (closed by us, or not connected): open a new connection to send more")]
    Closed,
    /// The connection ended abnormally; data not yet acknowledged will not be delivered.
    #[error("connection lost: {0}")]
    Lost(#[from] ConnectionError),
}

/// [`Connection::recv`](crate::Connection::recv) and
/// [`recv_with`](crate::Connection::recv_with) returned no data. (The end of the stream is
/// not an error: it reads as `Ok(0)`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecvError {
    /// Nothing to read yet and the stream has not ended: read again after the next
    /// [`Event::Readable`](crate::Event::Readable) (or the next packet).
    #[error("no data available yet: read again after the next Readable event")]
    WouldBlock,
    /// The connection is not connected and ended without an error (it never carried a
    /// stream from the peer, or was closed before the peer's FIN): there is nothing to read.
    #[error("the connection is not connected: nothing to read")]
    NotConnected,
    /// The connection ended abnormally. Data that arrived before is still read first.
    #[error("connection lost: {0}")]
    Lost(#[from] ConnectionError),
}

/// [`Connection::close`](crate::Connection::close) and
/// [`Endpoint::close`](crate::Endpoint::close) had nothing to close.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CloseError {
    /// The handle finds no connection (never valid, or already removed): forget it.
    #[error("no such connection: the handle is stale")]
    NoSuchConnection,
    /// The connection is already CLOSED (or only listening) after a normal end: nothing
    /// to do.
    #[error("the connection is not connected: nothing to close")]
    NotConnected,
    /// The connection had already ended abnormally: nothing to do but forget it.
    #[error("connection already lost: {0}")]
    Lost(#[from] ConnectionError),
}

/// [`Endpoint::listen`](crate::Endpoint::listen),
/// [`Endpoint::connect`](crate::Endpoint::connect) and
/// [`Endpoint::connect_from_port`](crate::Endpoint::connect_from_port) could not take the
/// address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddrError {
    /// `listen` on a port that already has a listener, or `connect_from_port` to a
    /// 4-tuple already in use: pick another port, or close the other user first.
    #[error("address or port in use: pick another port")]
    AddrInUse,
    /// `connect`: every port of
    /// [`EndpointConfig::ephemeral_ports`](crate::EndpointConfig::ephemeral_ports) is in use
    /// toward that remote address and port: wait for connections to close (TIME-WAIT), or
    /// widen the range.
    #[error("no free ephemeral port toward that address: wait for connections to close, or widen ephemeral_ports")]
    NoPorts,
}

/// [`Connection::accept`](crate::Connection::accept) refused the SYN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AcceptError {
    /// The SYN's TCP checksum does not verify: drop it, as the endpoint does.
    #[error("segment checksum does not verify")]
    BadChecksum,
}

/// Every error of the engine, for code that handles them alike: each per-operation error
/// converts into it (`?`). Match on the per-operation types to know what to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TcpError {
    /// A connection ended abnormally.
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    /// Sending failed.
    #[error(transparent)]
    Send(SendError),
    /// Receiving failed.
    #[error(transparent)]
    Recv(RecvError),
    /// Closing failed.
    #[error(transparent)]
    Close(CloseError),
    /// An address or port could not be taken.
    #[error(transparent)]
    Addr(#[from] AddrError),
    /// A SYN was refused.
    #[error(transparent)]
    Accept(#[from] AcceptError),
}

// By hand, so that a lost connection converts to `Connection` whichever call saw it.
impl From<SendError> for TcpError {
    fn from(e: SendError) -> Self {
        match e {
            SendError::Lost(c) => TcpError::Connection(c),
            e => TcpError::Send(e),
        }
    }
}

impl From<RecvError> for TcpError {
    fn from(e: RecvError) -> Self {
        match e {
            RecvError::Lost(c) => TcpError::Connection(c),
            e => TcpError::Recv(e),
        }
    }
}

impl From<CloseError> for TcpError {
    fn from(e: CloseError) -> Self {
        match e {
            CloseError::Lost(c) => TcpError::Connection(c),
            e => TcpError::Close(e),
        }
    }
}

impl TcpError {
    /// The cause, when a connection ended abnormally.
    pub fn connection(&self) -> Option<ConnectionError> {
        match *self {
            TcpError::Connection(c) => Some(c),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_connection_converts_to_its_cause_whichever_call_saw_it() {
        let lost = ConnectionError::Reset;
        for e in [
            TcpError::from(SendError::Lost(lost)),
            TcpError::from(RecvError::Lost(lost)),
            TcpError::from(CloseError::Lost(lost)),
        ] {
            assert_eq!(e, TcpError::Connection(lost));
            assert_eq!(e.connection(), Some(lost));
        }
        assert_eq!(
            TcpError::from(RecvError::WouldBlock),
            TcpError::Recv(RecvError::WouldBlock)
        );
    }

    #[test]
    fn messages_say_what_to_do_next() {
        assert_eq!(
            RecvError::WouldBlock.to_string(),
            "no data available yet: read again after the next Readable event"
        );
        assert_eq!(
            SendError::Lost(ConnectionError::TimedOut).to_string(),
            "connection lost: connection timed out: the peer stopped answering"
        );
        assert_eq!(
            TcpError::from(AddrError::AddrInUse).to_string(),
            "address or port in use: pick another port"
        );
    }
}
