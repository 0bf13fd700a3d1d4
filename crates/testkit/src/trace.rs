//! Queries over a connection's trace (`Connection::set_tracing`, `take_trace`): where an
//! event happened, what was sent between two events. The engine's scenario tests ask the
//! same questions of the seeds' algorithms ("the amount actually sent between the loss
//! detection and the recovery ack", 30 Apr 1990); written once here.

use ackclock_tcp::{TraceEvent, TraceKind};

/// A trace, or a stretch of one.
#[derive(Clone, Copy, Debug)]
pub struct Trace<'a>(pub &'a [TraceEvent]);

impl<'a> Trace<'a> {
    /// Index of the first event of `kind` (compared whole, so for kinds with fields use
    /// [`position_where`](Self::position_where)).
    pub fn position(&self, kind: TraceKind) -> Option<usize> {
        self.0.iter().position(|e| e.kind == kind)
    }

    /// Index of the first event that `f` accepts.
    pub fn position_where(&self, f: impl Fn(&TraceEvent) -> bool) -> Option<usize> {
        self.0.iter().position(f)
    }

    /// The events from index `from` up to, not including, `to`.
    pub fn between(&self, from: usize, to: usize) -> Trace<'a> {
        Trace(&self.0[from..to])
    }

    /// The events from index `from` on.
    pub fn from(&self, from: usize) -> Trace<'a> {
        Trace(&self.0[from..])
    }

    /// Segments sent carrying new data (first transmissions with at least one byte).
    pub fn new_data_sends(&self) -> usize {
        self.count(|e| matches!(e.kind, TraceKind::Send { retransmit: false, len, .. } if len > 0))
    }

    /// Retransmitted segments.
    pub fn retransmissions(&self) -> usize {
        self.count(|e| {
            matches!(
                e.kind,
                TraceKind::Send {
                    retransmit: true,
                    ..
                }
            )
        })
    }

    /// Events that `f` accepts.
    pub fn count(&self, f: impl Fn(&TraceEvent) -> bool) -> usize {
        self.0.iter().filter(|e| f(e)).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackclock_tcp::SeqNum;
    use ackclock_wire::{Duration, Instant};

    fn ev(kind: TraceKind) -> TraceEvent {
        TraceEvent {
            time: Instant::ZERO,
            kind,
            cwnd: 0,
            ssthresh: 0,
            srtt: Duration::ZERO,
            rttvar: Duration::ZERO,
            rto: Duration::ZERO,
            snd_una: SeqNum::new(0),
            snd_nxt: SeqNum::new(0),
            snd_max: SeqNum::new(0),
            flight: 0,
        }
    }

    fn send(len: u32, retransmit: bool) -> TraceEvent {
        ev(TraceKind::Send {
            seq: SeqNum::new(0),
            len,
            retransmit,
        })
    }

    #[test]
    fn sends_between_two_events_are_counted_by_kind() {
        let t = [
            send(100, false),
            ev(TraceKind::FastRetransmit),
            send(100, true),
            send(100, false),
            send(0, false),
            send(100, false),
            ev(TraceKind::RecoveryExit),
            send(100, false),
        ];
        let t = Trace(&t);
        let fr = t.position(TraceKind::FastRetransmit).unwrap();
        let exit = t.position(TraceKind::RecoveryExit).unwrap();
        assert_eq!((fr, exit), (1, 6));
        let during = t.between(fr, exit);
        assert_eq!(during.new_data_sends(), 2, "a pure ACK is not data");
        assert_eq!(during.retransmissions(), 1);
        assert_eq!(t.from(exit).new_data_sends(), 1);
        assert_eq!(t.position(TraceKind::IdleRestart), None);
    }
}
