//! Delivery-rate estimation, after draft-cheng-iccrg-delivery-rate-estimation-02 (Cheng,
//! Cardwell, Hassas Yeganeh and Jacobson, March 2022; "the draft" below).
//!
//! On every ACK that newly delivers data the sender takes one rate sample: the bytes
//! delivered between the transmission of the most recently sent packet this ACK delivered
//! and the ACK itself, divided by the time that took (§2). The time is the longer of two
//! spans (§3.3): `ack_elapsed`, from the ACK the sender had seen when it sent the packet to
//! this ACK, and `send_elapsed`, from the send of the packet that ACK delivered to the send
//! of this one. Taking the longer keeps ACK compression (ACKs held and released in a bunch,
//! which makes `ack_elapsed` short) from reporting more than the sender sent, and a fast
//! burst (short `send_elapsed`) from reporting more than the network acknowledged; a sample
//! is never faster than the slower of the two rates. Each sample also says whether the
//! application, not the network, limited it (§3.4): such a sample can understate the path's
//! rate, and a controller keeps it only if it is higher than what it has.
//!
//! The module is pure state and arithmetic, like the rest of the engine: no clock (the
//! caller passes `now`), no I/O, no allocation. The connection uses it, for a controller
//! that asks (BBR's bandwidth model and pacing are built on these samples), in three places:
//! - on every transmission of data, new or retransmitted, [`RateSampler::on_send`] returns
//!   the packet's [`TxStamp`], which the transmit log (`crate::rack`) keeps beside the
//!   segment (§3.2);
//! - on an ACK, [`RateSampler::on_delivered`] once for each segment the ACK newly
//!   acknowledges, cumulatively or by SACK, then [`RateSampler::generate_sample`] once for
//!   the whole ACK (§3.3);
//! - when the application writes and at the start of ACK processing,
//!   [`RateSampler::check_app_limited`] (§3.4; the draft also runs it when a timer that may
//!   send fires, which the connection does not: a timeout's resend is not application-
//!   limited, and the next ACK runs the test).
//!
//! Amounts are bytes: `delivered` is cumulative over the connection (u64), a packet's size
//! is a u32. Rates are whole bytes per second, rounded down.
//!
//! Two choices where the draft leaves room:
//! - "the most recently sent packet" among those one ACK delivers is the one with the
//!   largest `P.delivered`; ties (packets sent before any ACK came back in between) go to
//!   the later `P.sent_time`, and packets of a burst sent at one instant to the order of
//!   transmission, which the stamp keeps for that purpose. Comparing `P.delivered` alone
//!   would keep the first packet of such a tie that the caller happens to pass, and a
//!   cumulative ACK passes the oldest first: the sample would count the whole burst's bytes
//!   over the send time of its first packet.
//! - the draft's `P.delivered_time = 0` mark ("already SACKed") is the caller's: it calls
//!   [`RateSampler::on_delivered`] only for packets newly delivered, which its SACK
//!   scoreboard knows, so the stamp stays a plain value.

use ackclock_wire::{Duration, Instant};

/// Nanoseconds in a second, for rates in bytes per second.
const NANOS_PER_SEC: u128 = 1_000_000_000;

/// What the sender remembers of one transmission of a data packet (§3.1.2, "per-packet
/// (P) state"), taken by [`RateSampler::on_send`].
///
/// 48 bytes: four 8-byte fields (`P.delivered`, `P.delivered_time`, `P.first_sent_time`,
/// `P.sent_time`), three 4-byte ones (the order of transmission, and Linux's `P.lost` and
/// `P.tx_in_flight`, which BBR v3 reads) and the `P.is_app_limited` flag. It is `Copy` and kept beside each segment in flight; a retransmission
/// replaces it with a fresh one (§3.2: the draft stamps transmissions and
/// retransmissions alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TxStamp {
    /// `P.delivered`: `C.delivered` when the packet was sent.
    delivered: u64,
    /// `P.delivered_time`: `C.delivered_time` when the packet was sent.
    delivered_time: Instant,
    /// `P.first_sent_time`: `C.first_sent_time` when the packet was sent.
    first_sent_time: Instant,
    /// `P.sent_time`: when the packet was sent.
    sent_time: Instant,
    /// The sampler's count of transmissions when this one was made (wrapping): orders
    /// packets sent at one instant with one `P.delivered`, which only §3.3's choice of the
    /// most recently sent packet needs.
    order: u32,
    /// Linux's `P.lost`: `C.lost` when the packet was sent, kept modulo 2^32 (a sample
    /// spans far less than 4 GB of losses, and the stamp stays at 48 bytes).
    lost: u32,
    /// Linux's `P.tx_in_flight`: the pipe just after the packet was sent, itself included.
    tx_in_flight: u32,
    /// `P.is_app_limited`: whether the connection was in an application-limited phase
    /// (`C.app_limited != 0`) when the packet was sent.
    is_app_limited: bool,
}

// The accessors serve the tests; the sampler reads the fields.
#[cfg(test)]
impl TxStamp {
    /// `P.sent_time`: when this transmission was made.
    pub(crate) fn sent_time(&self) -> Instant {
        self.sent_time
    }

    /// `P.delivered`: the bytes the connection had delivered when this transmission was
    /// made.
    pub(crate) fn delivered(&self) -> u64 {
        self.delivered
    }

    /// `P.is_app_limited`: whether it was sent in an application-limited phase (§3.4).
    pub(crate) fn is_app_limited(&self) -> bool {
        self.is_app_limited
    }
}

impl TxStamp {
    /// Whether this transmission was made after `other`'s: §3.3 builds the sample from the
    /// most recently sent packet an ACK delivers. `C.delivered` never decreases, so a later
    /// transmission has a `P.delivered` at least as large; among equals the later
    /// `P.sent_time` wins, and among packets sent at one instant the later transmission.
    /// The order is compared as a wrapping difference, which is right for any two
    /// transmissions fewer than 2^31 apart (two packets of one burst are).
    fn sent_after(&self, other: &TxStamp) -> bool {
        if self.delivered != other.delivered {
            return self.delivered > other.delivered;
        }
        if self.sent_time != other.sent_time {
            return self.sent_time > other.sent_time;
        }
        (self.order.wrapping_sub(other.order) as i32) > 0
    }
}

/// One delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3.1.3, "rate
/// sample (rs) output"), made for one ACK from the most recently sent packet it delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateSample {
    /// `rs.delivery_rate`: `delivered / interval`, in bytes per second, rounded down (and
    /// at most `u64::MAX`). Whole bytes per second are finer than any rate a controller
    /// acts on, and an integer keeps samples exact and comparable in tests.
    pub delivery_rate: u64,
    /// `rs.delivered`: bytes delivered over the interval (`C.delivered` now less the
    /// newest packet's `P.delivered`).
    pub delivered: u64,
    /// `rs.interval`: the longer of `send_elapsed` and `ack_elapsed` (§3.3).
    pub interval: Duration,
    /// `rs.send_elapsed`: the newest packet's `P.sent_time - P.first_sent_time`.
    pub send_elapsed: Duration,
    /// `rs.ack_elapsed`: the time of its delivery less its `P.delivered_time`.
    pub ack_elapsed: Duration,
    /// `rs.prior_delivered`: the newest packet's `P.delivered`.
    pub prior_delivered: u64,
    /// `rs.prior_time`: the newest packet's `P.delivered_time`, where the interval starts.
    pub prior_time: Instant,
    /// `rs.is_app_limited`: the newest packet's `P.is_app_limited`: the application left a
    /// bubble in the pipe during the interval, so the rate may be below what the path can
    /// carry (§3.4).
    pub is_app_limited: bool,
    /// The round-trip time of the newest packet: its delivery less its `P.sent_time`. For
    /// a retransmission that is the time from the retransmission, which is ambiguous by
    /// Karn's argument; a controller's minimum RTT should come from the RTT estimator.
    pub rtt: Duration,
    /// `rs.lost` (Linux's, for BBR v2/v3): bytes taken for lost between the newest
    /// packet's transmission and this ACK (`C.lost` now less its `P.lost`).
    pub lost: u64,
    /// `rs.tx_in_flight` (Linux's): the pipe just after the newest packet was sent, itself
    /// included.
    pub tx_in_flight: u32,
}

/// The inputs of §3.4's test for an application-limited phase, as the connection knows
/// them at the moment of the test. Windows and amounts are bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct AppLimitedInputs {
    /// Bytes the application has written that have not been sent yet (`C.write_seq -
    /// SND.NXT`).
    pub(crate) unsent: u64,
    /// The sender's maximum segment size (`SND.MSS`).
    pub(crate) mss: u32,
    /// Whether packets handed below TCP are still waiting to go out
    /// (`C.pending_transmissions != 0`). The engine writes a packet only when the driver
    /// asks for one, so it holds none; a driver that queues may say otherwise.
    pub(crate) pending_transmissions: bool,
    /// The data in flight (`C.pipe`, RFC 6675's pipe: sent, not SACKed, not marked lost).
    pub(crate) in_flight: u64,
    /// The congestion window.
    pub(crate) cwnd: u64,
    /// Whether segments marked lost are still waiting to be retransmitted (`C.lost_out >
    /// C.retrans_out`).
    pub(crate) lost_awaiting_retransmit: bool,
}

/// The newest packet delivered so far by the ACK being processed: the sample under
/// construction (§3.3's `rs.prior_*`, `rs.send_elapsed`, `rs.ack_elapsed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Newest {
    /// Its stamp.
    stamp: TxStamp,
    /// `C.delivered_time - P.delivered_time` at its delivery.
    ack_elapsed: Duration,
    /// Its delivery less its `P.sent_time`.
    rtt: Duration,
}

/// A connection's delivery-rate state (§3.1.1, "per-connection (C) state") and the sample
/// under construction for the ACK being processed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RateSampler {
    /// `C.delivered`: bytes delivered (cumulatively ACKed or SACKed) over the connection,
    /// retransmissions included.
    delivered: u64,
    /// `C.delivered_time`: when `delivered` last grew, or when a send found nothing in
    /// flight.
    delivered_time: Instant,
    /// `C.first_sent_time`: the send time of the newest packet the last ACK delivered, or
    /// of the first packet sent after the flight was empty.
    first_sent_time: Instant,
    /// `C.app_limited`: 0 outside an application-limited phase; inside one, the value of
    /// `delivered` the phase lasts until (the bubble has left the pipe when `delivered`
    /// passes it).
    app_limited: u64,
    /// Transmissions made, wrapping: the next stamp's `order`.
    next_order: u32,
    /// Linux's `C.lost`: bytes taken for lost over the connection ([`note_lost`]).
    ///
    /// [`note_lost`]: RateSampler::note_lost
    lost: u64,
    /// The newest packet delivered by the ACK being processed, if any yet.
    newest: Option<Newest>,
}

impl RateSampler {
    /// A connection that has sent and delivered nothing.
    pub(crate) const fn new() -> Self {
        RateSampler {
            delivered: 0,
            delivered_time: Instant::ZERO,
            first_sent_time: Instant::ZERO,
            app_limited: 0,
            next_order: 0,
            lost: 0,
            newest: None,
        }
    }

    /// `C.lost`: bytes taken for lost over the connection.
    pub(crate) fn lost(&self) -> u64 {
        self.lost
    }

    /// `bytes` more were taken for lost: as Linux, when RACK marks a segment lost or a
    /// timeout takes the flight for lost; without RACK's marks, when the connection resends
    /// a segment to repair a loss.
    pub(crate) fn note_lost(&mut self, bytes: u32) {
        self.lost = self.lost.saturating_add(u64::from(bytes));
    }

    /// `C.delivered`: bytes delivered over the connection (cumulatively ACKed or SACKed,
    /// retransmissions included). BBR counts its round trips with it.
    pub(crate) fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Whether the connection is in an application-limited phase (`C.app_limited != 0`,
    /// §3.4): packets sent now will give application-limited samples.
    pub(crate) fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// §3.2, "Transmitting a data packet": stamps a transmission, new data or a
    /// retransmission, made at `now`. `flight_was_empty`: nothing was in flight before it
    /// (SND.NXT == SND.UNA). `in_flight`: the pipe just after it, itself included (for
    /// `P.tx_in_flight`).
    ///
    /// After an idle period the last ACK is old, and measuring from it would stretch the
    /// first sample over the idle time; so a send into an empty pipe starts the interval
    /// afresh at `now` (`C.first_sent_time = C.delivered_time = now`): any ACK from here on
    /// shows what the network delivered since this send.
    pub(crate) fn on_send(
        &mut self,
        now: Instant,
        flight_was_empty: bool,
        in_flight: u32,
    ) -> TxStamp {
        if flight_was_empty {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let order = self.next_order;
        self.next_order = self.next_order.wrapping_add(1);
        TxStamp {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            order,
            lost: self.lost as u32,
            tx_in_flight: in_flight,
            is_app_limited: self.app_limited != 0,
        }
    }

    /// §3.3, `UpdateRateSample`: one packet of `bytes` (its stamp `stamp`) is newly
    /// delivered, cumulatively ACKed or SACKed, by the ACK being processed at `now`. The
    /// caller calls it once for each such packet, and only once per packet: a segment
    /// SACKed earlier and now passed by the cumulative ACK was delivered then (the draft's
    /// "P already SACKed").
    ///
    /// If the packet is the most recently sent of those this ACK has delivered so far, the
    /// sample is built from its stamp, and `C.first_sent_time` moves to its send time: the
    /// next packets sent measure their `send_elapsed` from it.
    pub(crate) fn on_delivered(&mut self, now: Instant, stamp: &TxStamp, bytes: u32) {
        self.delivered = self.delivered.saturating_add(u64::from(bytes));
        self.delivered_time = now;
        let newer = match &self.newest {
            None => true,
            Some(n) => stamp.sent_after(&n.stamp),
        };
        if newer {
            self.newest = Some(Newest {
                stamp: *stamp,
                ack_elapsed: now.saturating_since(stamp.delivered_time),
                rtt: now.saturating_since(stamp.sent_time),
            });
            self.first_sent_time = stamp.sent_time;
        }
    }

    /// §3.3, `GenerateRateSample`: once per ACK, after [`on_delivered`] for every packet it
    /// delivered; starts the next ACK's sample afresh. `min_rtt` is the connection's
    /// minimum RTT including this ACK's measurement, `None` before there is one.
    ///
    /// `None` when the ACK delivered nothing, when the interval is zero (packets sent and
    /// acknowledged at one instant: no rate), or when it is shorter than `min_rtt`: a packet
    /// cannot be sent and acknowledged faster than the path's round trip, so such an
    /// interval is wrong (the draft's case: the ACK was for the original of a spurious
    /// retransmission, timed from the retransmission), and the rate it gives is too high.
    ///
    /// Whatever the sample, the application-limited phase ends here once `C.delivered`
    /// passes `C.app_limited`: the bubble has left the pipe.
    ///
    /// [`on_delivered`]: RateSampler::on_delivered
    pub(crate) fn generate_sample(&mut self, min_rtt: Option<Duration>) -> Option<RateSample> {
        let newest = self.newest.take();
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let n = newest?;
        let send_elapsed = n.stamp.sent_time.saturating_since(n.stamp.first_sent_time);
        let interval = send_elapsed.max(n.ack_elapsed);
        let delivered = self.delivered.saturating_sub(n.stamp.delivered);
        if interval == Duration::ZERO || min_rtt.is_some_and(|m| interval < m) {
            return None;
        }
        let rate = u128::from(delivered) * NANOS_PER_SEC / u128::from(interval.as_nanos());
        Some(RateSample {
            delivery_rate: u64::try_from(rate).unwrap_or(u64::MAX),
            delivered,
            interval,
            send_elapsed,
            ack_elapsed: n.ack_elapsed,
            prior_delivered: n.stamp.delivered,
            prior_time: n.stamp.delivered_time,
            is_app_limited: n.stamp.is_app_limited,
            rtt: n.rtt,
            lost: u64::from((self.lost as u32).wrapping_sub(n.stamp.lost)),
            tx_in_flight: n.stamp.tx_in_flight,
        })
    }

    /// §3.4, "Detecting application-limited phases": the connection could send (the window
    /// is open, nothing waits below TCP, no lost segment waits for its retransmission) but
    /// has less than a segment to send. The pipe then runs partly empty, and every sample
    /// until the packets now in flight are delivered can understate the path's rate; the
    /// phase is marked to last until `C.delivered` passes what it will be when they are.
    /// Returns whether the connection is application-limited now.
    ///
    /// The draft runs the test when the application writes (before the data is queued),
    /// at the start of ACK processing (before the pipe and the window change) and at the
    /// start of a timer that may send (RTO, TLP, RACK's reordering timer, zero-window
    /// probe).
    pub(crate) fn check_app_limited(&mut self, s: &AppLimitedInputs) -> bool {
        let limited = s.unsent < u64::from(s.mss)
            && !s.pending_transmissions
            && s.in_flight < s.cwnd
            && !s.lost_awaiting_retransmit;
        if limited {
            self.mark_app_limited(s.in_flight);
        }
        self.is_app_limited()
    }

    /// §3.4's marking, `C.app_limited = (C.delivered + C.pipe) ? : 1`: an application-
    /// limited phase that lasts until the `in_flight` bytes now in flight are delivered. At
    /// least 1, since 0 means no phase. BBR marks one directly while it drains the pipe to
    /// probe the RTT, so that its low samples do not count.
    pub(crate) fn mark_app_limited(&mut self, in_flight: u64) {
        self.app_limited = self.delivered.saturating_add(in_flight).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packets of 1000 bytes in the worked examples: rates come out in round numbers.
    const SIZE: u32 = 1000;

    fn ms(t: u64) -> Instant {
        Instant::from_nanos(t * 1_000_000)
    }

    fn us(t: u64) -> Instant {
        Instant::from_nanos(t * 1_000)
    }

    fn dur_ms(t: u64) -> Duration {
        Duration::from_millis(t)
    }

    /// One ACK at `at` that delivers `stamps`, in the order given, then its sample.
    fn ack(
        s: &mut RateSampler,
        at: Instant,
        stamps: &[TxStamp],
        min_rtt: Option<Duration>,
    ) -> Option<RateSample> {
        for st in stamps {
            s.on_delivered(at, st, SIZE);
        }
        s.generate_sample(min_rtt)
    }

    #[test]
    fn tx_stamp_is_48_bytes() {
        // Kept with every segment in flight: its size is per-segment memory.
        assert_eq!(core::mem::size_of::<TxStamp>(), 48);
    }

    #[test]
    fn draft_cheng_3_2_stamp_snapshots_the_connection_state() {
        let mut s = RateSampler::new();
        let a = s.on_send(ms(0), true, 0);
        let b = s.on_send(ms(1), false, 0);
        assert_eq!(a.delivered(), 0);
        assert_eq!(b.first_sent_time, ms(0));
        assert_eq!(b.delivered_time, ms(0));
        assert_eq!(b.sent_time(), ms(1));
        assert!(!b.is_app_limited());
        ack(&mut s, ms(10), &[a], None);
        // The ACK moved C.delivered, C.delivered_time and C.first_sent_time (to A's send).
        let c = s.on_send(ms(10), false, 0);
        assert_eq!(c.delivered(), 1000);
        assert_eq!(c.delivered_time, ms(10));
        assert_eq!(c.first_sent_time, ms(0));
    }

    #[test]
    fn draft_cheng_3_2_send_after_idle_restarts_the_interval() {
        let mut s = RateSampler::new();
        let a = s.on_send(ms(0), true, 0);
        let rs = ack(&mut s, ms(10), &[a], None).expect("a sample");
        assert_eq!(rs.delivery_rate, 100_000); // 1000 B / 10 ms
                                               // A second of silence, then B into an empty pipe at 1010 ms, ACKed 10 ms later.
        let b = s.on_send(ms(1010), true, 0);
        assert_eq!((b.first_sent_time, b.delivered_time), (ms(1010), ms(1010)));
        let rs = ack(&mut s, ms(1020), &[b], None).expect("a sample");
        // Timed from B's send, not from A's ACK at 10 ms: 1000 B / 10 ms, not / 1010 ms.
        assert_eq!(rs.interval, dur_ms(10));
        assert_eq!(rs.delivery_rate, 100_000);
        // Had the send not restarted the interval: ack_elapsed 1010 ms, 990 B/s.
        let mut stale = RateSampler::new();
        let a = stale.on_send(ms(0), true, 0);
        ack(&mut stale, ms(10), &[a], None);
        let b = stale.on_send(ms(1010), false, 0);
        let rs = ack(&mut stale, ms(1020), &[b], None).expect("a sample");
        assert_eq!((rs.interval, rs.delivery_rate), (dur_ms(1010), 990));
    }

    #[test]
    fn draft_cheng_3_3_interval_is_max_of_send_and_ack_elapsed() {
        // A at 0 into an empty pipe, B at 4 ms: both stamped (0 delivered, at 0, first 0).
        let mut s = RateSampler::new();
        let a = s.on_send(ms(0), true, 0);
        let b = s.on_send(ms(4), false, 0);
        // One ACK for both at 10 ms: the newest is B, send_elapsed = 4 - 0 = 4 ms,
        // ack_elapsed = 10 - 0 = 10 ms; interval 10 ms, 2000 B / 10 ms = 200 000 B/s.
        let rs = ack(&mut s, ms(10), &[a, b], None).expect("a sample");
        assert_eq!(rs.send_elapsed, dur_ms(4));
        assert_eq!(rs.ack_elapsed, dur_ms(10));
        assert_eq!(rs.interval, dur_ms(10));
        assert_eq!(rs.delivered, 2000);
        assert_eq!(rs.delivery_rate, 200_000);
        assert_eq!(rs.rtt, dur_ms(6));
        // C sent at 30 ms (first_sent = B's 4 ms, last ACK at 10 ms), ACKed at 35 ms:
        // send_elapsed 26 ms beats ack_elapsed 25 ms; 1000 B / 26 ms = 38 461.5 B/s.
        let c = s.on_send(ms(30), false, 0);
        let rs = ack(&mut s, ms(35), &[c], None).expect("a sample");
        assert_eq!((rs.send_elapsed, rs.ack_elapsed), (dur_ms(26), dur_ms(25)));
        assert_eq!(rs.interval, dur_ms(26));
        assert_eq!(rs.delivery_rate, 38_461);
    }

    /// A paced sender (1000 B every 1 ms, 1 MB/s) on a path that returns each packet's ACK
    /// 10.5 ms after its send, except that a middlebox holds the ACKs of packets 0 to 6 and
    /// releases them together at 17 ms (their own times were 10.5 to 16.5 ms).
    #[test]
    fn draft_cheng_3_3_ack_compression_uses_send_elapsed() {
        let mut s = RateSampler::new();
        let mut stamps = [None; 17];
        for (i, st) in stamps.iter_mut().enumerate() {
            *st = Some(s.on_send(ms(i as u64), i == 0, 0));
        }
        let sent: Vec<TxStamp> = stamps.iter().flatten().copied().collect();
        // The compressed ACK at 17 ms delivers 0..=6; the newest is 6, stamped (0, at 0,
        // first 0, sent 6 ms): 7000 B over max(6, 17) ms = 411 764.7 B/s.
        let rs = ack(&mut s, ms(17), &sent[..7], None).expect("a sample");
        assert_eq!((rs.delivered, rs.interval), (7000, dur_ms(17)));
        assert_eq!(rs.delivery_rate, 411_764);
        // Packet 17 goes at 17 ms, after that ACK: 7000 delivered, at 17 ms, first_sent
        // = packet 6's send at 6 ms.
        let p17 = s.on_send(ms(17), false, 0);
        // Packets 7..=16 are ACKed on time, one ACK each at i + 10.5 ms.
        for (i, st) in sent.iter().enumerate().skip(7) {
            let rs = ack(&mut s, us(i as u64 * 1000 + 10_500), &[*st], None).expect("sample");
            assert!(rs.delivery_rate <= 1_000_000, "{rs:?}");
        }
        // Packet 17's ACK at 27.5 ms: 11 packets (7..=17) delivered since its stamp.
        // ack_elapsed = 27.5 - 17 = 10.5 ms (the late release made the start late), but
        // they took send_elapsed = 17 - 6 = 11 ms to send: 11 000 B / 11 ms = 1 MB/s, the
        // rate the sender sent at. By ack_elapsed alone: 11 000 / 10.5 ms = 1.047 MB/s.
        let rs = ack(&mut s, us(27_500), &[p17], None).expect("a sample");
        assert_eq!(rs.delivered, 11_000);
        assert_eq!(rs.ack_elapsed, Duration::from_micros(10_500));
        assert_eq!(rs.send_elapsed, dur_ms(11));
        assert_eq!(rs.interval, dur_ms(11));
        assert_eq!(rs.delivery_rate, 1_000_000);
    }

    #[test]
    fn draft_cheng_3_3_samples_shorter_than_min_rtt_are_discarded() {
        // X into an empty pipe at 100 ms; an ACK 4 ms later while the path's minimum RTT
        // is 10 ms cannot be for this transmission (e.g. it acknowledges the original of a
        // spurious retransmission): 1000 B / 4 ms would claim 250 000 B/s.
        let run = |min_rtt| {
            let mut s = RateSampler::new();
            let x = s.on_send(ms(100), true, 0);
            ack(&mut s, ms(104), &[x], min_rtt)
        };
        assert_eq!(run(Some(dur_ms(10))), None);
        // Equal to min_rtt is not shorter; unknown min_rtt filters nothing.
        assert_eq!(run(Some(dur_ms(4))).map(|r| r.delivery_rate), Some(250_000));
        assert_eq!(run(None).map(|r| r.delivery_rate), Some(250_000));
        // The delivery still counts, sample or not.
        let mut s = RateSampler::new();
        let x = s.on_send(ms(100), true, 0);
        assert_eq!(ack(&mut s, ms(104), &[x], Some(dur_ms(10))), None);
        assert_eq!(s.delivered(), 1000);
    }

    #[test]
    fn draft_cheng_3_3_zero_interval_or_nothing_delivered_gives_no_sample() {
        let mut s = RateSampler::new();
        // Sent and ACKed at one instant: no time, no rate (and no division by zero).
        let a = s.on_send(ms(5), true, 0);
        assert_eq!(ack(&mut s, ms(5), &[a], None), None);
        assert_eq!(s.delivered(), 1000);
        // An ACK that delivers nothing (a duplicate ACK, a window update).
        let b = s.on_send(ms(6), true, 0);
        assert_eq!(s.generate_sample(None), None);
        // And the empty ACK left nothing behind for the next one.
        let rs = ack(&mut s, ms(16), &[b], None).expect("a sample");
        assert_eq!((rs.delivered, rs.interval), (1000, dur_ms(10)));
    }

    #[test]
    fn draft_cheng_3_3_sack_of_several_packets_uses_the_most_recently_sent() {
        // A..D at 0..3 ms (A into an empty pipe: all four stamped 0 delivered, at 0, first
        // 0). A is ACKed at 10 ms; E and F go at 10 and 11 ms (stamped 1000, at 10 ms, first
        // 0). C is lost. One ACK at 14 ms SACKs B, D, E and F, in whatever order the
        // caller walks its scoreboard.
        let orders: [[usize; 4]; 5] = [
            [0, 1, 2, 3],
            [3, 2, 1, 0],
            [1, 3, 0, 2],
            [2, 0, 3, 1],
            [0, 3, 1, 2],
        ];
        for order in orders {
            let mut s = RateSampler::new();
            let a = s.on_send(ms(0), true, 0);
            let b = s.on_send(ms(1), false, 0);
            let _c = s.on_send(ms(2), false, 0);
            let d = s.on_send(ms(3), false, 0);
            ack(&mut s, ms(10), &[a], None);
            let e = s.on_send(ms(10), false, 0);
            let f = s.on_send(ms(11), false, 0);
            let sacked = [b, d, e, f];
            let walk = order.map(|i| sacked[i]);
            let rs = ack(&mut s, ms(14), &walk, None).expect("a sample");
            // The newest is F: 5000 - 1000 = 4000 B; send_elapsed 11 - 0 = 11 ms beats
            // ack_elapsed 14 - 10 = 4 ms; 4000 B / 11 ms = 363 636.4 B/s.
            assert_eq!(rs.prior_delivered, 1000, "{order:?}");
            assert_eq!(rs.delivered, 4000);
            assert_eq!(rs.interval, dur_ms(11));
            assert_eq!(rs.delivery_rate, 363_636);
            assert_eq!(rs.rtt, dur_ms(3));
            // C.first_sent_time is now F's send time.
            assert_eq!(s.on_send(ms(15), false, 0).first_sent_time, ms(11));
        }
    }

    #[test]
    fn draft_cheng_3_3_equal_delivered_is_broken_by_sent_time_then_by_order() {
        // A at 0 ms, B at 5 ms: both stamped with 0 delivered. Whichever the ACK passes
        // first, B is the newest: send_elapsed 5 ms, rtt 5 ms.
        for swap in [false, true] {
            let mut s = RateSampler::new();
            let a = s.on_send(ms(0), true, 0);
            let b = s.on_send(ms(5), false, 0);
            let walk = if swap { [b, a] } else { [a, b] };
            let rs = ack(&mut s, ms(10), &walk, None).expect("a sample");
            assert_eq!((rs.send_elapsed, rs.rtt), (dur_ms(5), dur_ms(5)));
        }
        // A burst at one instant, the phase marked application-limited between its two
        // packets: the sample is the later packet's, application-limited.
        for swap in [false, true] {
            let mut s = RateSampler::new();
            let a = s.on_send(ms(0), true, 0);
            s.mark_app_limited(1000);
            let b = s.on_send(ms(0), false, 0);
            assert!(!a.is_app_limited() && b.is_app_limited());
            let walk = if swap { [b, a] } else { [a, b] };
            let rs = ack(&mut s, ms(10), &walk, None).expect("a sample");
            assert!(rs.is_app_limited, "swap {swap}");
        }
    }

    #[test]
    fn draft_cheng_3_3_a_retransmitted_packet_gets_a_fresh_stamp() {
        // A at 0 ms (empty pipe), B at 1 ms. A is lost; B is SACKed at 11 ms: 1000 B over
        // max(1, 11) ms = 90 909 B/s.
        let mut s = RateSampler::new();
        let a = s.on_send(ms(0), true, 0);
        let b = s.on_send(ms(1), false, 0);
        let rs = ack(&mut s, ms(11), &[b], None).expect("a sample");
        assert_eq!(rs.delivery_rate, 90_909);
        // A is retransmitted at 30 ms (A is still outstanding: the pipe is not empty). The
        // new stamp: 1000 delivered, at 11 ms, first_sent 1 ms (B's send).
        let a2 = s.on_send(ms(30), false, 0);
        assert_ne!(a2, a);
        assert_eq!(
            (a2.delivered(), a2.delivered_time, a2.first_sent_time),
            (1000, ms(11), ms(1))
        );
        // ACKed at 40 ms: 1000 B (A only) over max(30 - 1, 40 - 11) = 29 ms = 34 482.7 B/s,
        // and the RTT of the retransmission, 10 ms. The first transmission's stamp would
        // have given 2000 B / 40 ms = 50 000 B/s and an RTT of 40 ms.
        let rs = ack(&mut s, ms(40), &[a2], None).expect("a sample");
        assert_eq!((rs.delivered, rs.interval), (1000, dur_ms(29)));
        assert_eq!(rs.delivery_rate, 34_482);
        assert_eq!(rs.rtt, dur_ms(10));
    }

    /// A flight of 1000-byte packets through a 500 000 B/s bottleneck (2 ms a packet), with
    /// 10 ms of path besides: packet i leaves the bottleneck at d_i = max(sent_i, d_{i-1}) +
    /// 2 ms and its ACK arrives at d_i + 10 ms. The sender paces the first 8 packets at
    /// 1 ms (0..=7 ms), then sends one packet per ACK. 8 packets exceed the path's
    /// 6-packet BDP (500 000 B/s x 12 ms), so the queue never empties and, once the
    /// samples are timed from ACKs of the steady state, they show the bottleneck's rate.
    /// The packets after 11 (one per later ACK) change none of the samples listed, so the
    /// table stops there.
    #[test]
    fn draft_cheng_3_3_ack_clocked_flight_samples_match_hand_computed_rates() {
        // (packet, sent ms, acked ms, delivered, interval ms, rate B/s). All of 0..=7 are
        // stamped (0 delivered, at 0, first_sent 0): the first ACK is at 12 ms. Packet i of
        // them: send_elapsed i ms, ack_elapsed 12 + 2i ms, delivered 1000 (i + 1).
        // Packet 8 goes at ACK 0 (12 ms): stamped 1000 delivered, at 12 ms, first_sent 0
        // (packet 0's send); d_8 = max(12, 16) + 2 = 18, acked 28 ms: send_elapsed 12,
        // ack_elapsed 16, 9000 - 1000 = 8000 B / 16 ms. Likewise 9, 10, 11 (each a packet
        // and 2 ms later, first_sent 1, 2, 3 ms).
        let table: [(usize, u64, u64, u64, u64, u64); 12] = [
            (0, 0, 12, 1000, 12, 83_333),  // 1000 / 12 ms = 83 333.3
            (1, 1, 14, 2000, 14, 142_857), // 2000 / 14 ms = 142 857.1
            (2, 2, 16, 3000, 16, 187_500), // 3000 / 16 ms
            (3, 3, 18, 4000, 18, 222_222), // 4000 / 18 ms = 222 222.2
            (4, 4, 20, 5000, 20, 250_000), // 5000 / 20 ms
            (5, 5, 22, 6000, 22, 272_727), // 6000 / 22 ms = 272 727.3
            (6, 6, 24, 7000, 24, 291_666), // 7000 / 24 ms = 291 666.7
            (7, 7, 26, 8000, 26, 307_692), // 8000 / 26 ms = 307 692.3
            (8, 12, 28, 8000, 16, 500_000),
            (9, 14, 30, 8000, 16, 500_000),
            (10, 16, 32, 8000, 16, 500_000),
            (11, 18, 34, 8000, 16, 500_000),
        ];
        let mut s = RateSampler::new();
        let mut stamps = [None; 12];
        let (mut sent, mut acked) = (0, 0);
        // Events in time order, an ACK before a send at the same instant.
        while acked < table.len() {
            let (_, _, ack_at, delivered, interval, rate) = table[acked];
            if sent < table.len() && table[sent].1 < ack_at {
                stamps[sent] = Some(s.on_send(ms(table[sent].1), sent == acked, 0));
                sent += 1;
                continue;
            }
            let stamp = stamps[acked].expect("sent before its ACK");
            // The path's minimum RTT is packet 0's 12 ms; no interval is shorter.
            let rs = ack(&mut s, ms(ack_at), &[stamp], Some(dur_ms(12))).expect("a sample");
            assert_eq!(
                (rs.delivered, rs.interval, rs.delivery_rate),
                (delivered, dur_ms(interval), rate),
                "packet {acked}"
            );
            assert!(!rs.is_app_limited);
            acked += 1;
        }
    }

    #[test]
    fn draft_cheng_3_4_app_limited_marks_samples_until_delivered_passes_the_bubble() {
        let mut s = RateSampler::new();
        // Packets 0..=13 at 0..=13 ms, 0..=9 ACKed at 20..=29 ms: 10 000 B delivered and
        // 4000 in flight when the application runs out of data at 29.5 ms.
        let mut p = [None; 14];
        for (i, st) in p.iter_mut().enumerate() {
            *st = Some(s.on_send(ms(i as u64), i == 0, 0));
        }
        let p: Vec<TxStamp> = p.iter().flatten().copied().collect();
        for (i, st) in p.iter().enumerate().take(10) {
            ack(&mut s, ms(20 + i as u64), &[*st], None);
        }
        let idle = AppLimitedInputs {
            unsent: 0,
            mss: SIZE,
            pending_transmissions: false,
            in_flight: 4000,
            cwnd: 10_000,
            lost_awaiting_retransmit: false,
        };
        assert!(s.check_app_limited(&idle));
        // The bubble lasts until C.delivered passes 10 000 + 4000.
        assert_eq!(s.app_limited, 14_000);
        // The application writes one packet, E, at 30 ms: sent into the bubble.
        let e = s.on_send(ms(30), false, 0);
        assert!(e.is_app_limited());
        // Packets 10..=13, sent before the bubble, give samples that are not marked.
        for (i, st) in p.iter().enumerate().skip(10) {
            let rs = ack(&mut s, ms(20 + i as u64), &[*st], None).expect("a sample");
            assert!(!rs.is_app_limited);
        }
        // 14 000 delivered: not past the bubble yet, so F at 33 ms is marked too.
        assert!(s.is_app_limited());
        let f = s.on_send(ms(33), false, 0);
        assert!(f.is_app_limited());
        // E's ACK takes C.delivered to 15 000 > 14 000: its sample is marked (its stamp
        // was), and the phase ends with this ACK.
        let rs = ack(&mut s, ms(50), &[e], None).expect("a sample");
        assert!(rs.is_app_limited);
        assert!(!s.is_app_limited());
        // G, sent after the bubble, is not; F's sample still is.
        let g = s.on_send(ms(50), false, 0);
        assert!(!g.is_app_limited());
        assert!(
            ack(&mut s, ms(53), &[f], None)
                .expect("a sample")
                .is_app_limited
        );
        assert!(
            !ack(&mut s, ms(70), &[g], None)
                .expect("a sample")
                .is_app_limited
        );
    }

    #[test]
    fn draft_cheng_3_4_every_condition_is_needed() {
        let open = AppLimitedInputs {
            unsent: 999,
            mss: SIZE,
            pending_transmissions: false,
            in_flight: 3000,
            cwnd: 10_000,
            lost_awaiting_retransmit: false,
        };
        let not_limited = [
            // A full segment to send: the sender is not short of data.
            AppLimitedInputs {
                unsent: 1000,
                ..open
            },
            // Packets still queued below TCP: the pipe is not running dry.
            AppLimitedInputs {
                pending_transmissions: true,
                ..open
            },
            // The window is full: the congestion controller limits, not the application.
            AppLimitedInputs {
                in_flight: 10_000,
                ..open
            },
            // Lost segments wait for their retransmission: loss recovery limits.
            AppLimitedInputs {
                lost_awaiting_retransmit: true,
                ..open
            },
        ];
        for inputs in not_limited {
            let mut s = RateSampler::new();
            assert!(!s.check_app_limited(&inputs), "{inputs:?}");
            assert_eq!(s, RateSampler::new());
        }
        let mut s = RateSampler::new();
        assert!(s.check_app_limited(&open));
        assert_eq!(s.app_limited, 3000);
    }

    #[test]
    fn draft_cheng_3_4_the_bubble_is_at_least_one_byte() {
        // Nothing delivered and nothing in flight: 0 + 0 would read as "not limited".
        let mut s = RateSampler::new();
        let idle = AppLimitedInputs {
            mss: SIZE,
            cwnd: 10_000,
            ..AppLimitedInputs::default()
        };
        assert!(s.check_app_limited(&idle));
        assert_eq!(s.app_limited, 1);
        let a = s.on_send(ms(0), true, 0);
        assert!(a.is_app_limited());
        let rs = ack(&mut s, ms(10), &[a], None).expect("a sample");
        assert!(rs.is_app_limited);
        assert!(!s.is_app_limited());
    }

    /// A deterministic generator for the schedules (Knuth's MMIX LCG).
    struct Lcg(u64);

    impl Lcg {
        /// A value in 0..n.
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }

    /// The bottleneck of the property checks: 1 000 000 B/s, 1 µs a byte.
    const BOTTLENECK: u64 = 1_000_000;
    const N: usize = 200;

    /// Packets (size, sent ns, acked ns) through a FIFO bottleneck of [`BOTTLENECK`] with 5
    /// ms of path each way, ACKed cumulatively in order. `paced`: 1000-byte packets at no
    /// more than the bottleneck rate, and ACKs delayed by 0 to 8 ms at random (bunched:
    /// an ACK never overtakes an earlier one). Otherwise: sizes of 100 to 1500 bytes, gaps
    /// of 0 to 3 ms (bursts faster than the bottleneck) and ACKs on time. Both idle now and
    /// then for 50 ms.
    fn schedule(seed: u64, paced: bool) -> Vec<(u32, u64, u64)> {
        let mut rng = Lcg(seed);
        let path = 5_000_000;
        let (mut t, mut left, mut acked) = (0, 0, 0);
        let mut out = Vec::with_capacity(N);
        for i in 0..N {
            let size = if paced {
                SIZE
            } else {
                100 * (1 + rng.below(15) as u32)
            };
            let serialize = u64::from(size) * 1_000;
            if i > 0 {
                t += if rng.below(20) == 0 {
                    50_000_000
                } else if paced {
                    serialize + rng.below(500) * 1_000
                } else {
                    rng.below(3_000) * 1_000
                };
            }
            left = (t + path).max(left) + serialize;
            let jitter = if paced { rng.below(8_000) * 1_000 } else { 0 };
            acked = (left + path + jitter).max(acked);
            out.push((size, t, acked));
        }
        out
    }

    /// Runs a schedule through a sampler (ACKs before sends at one instant; packets ACKed
    /// at one instant are one ACK) and returns its samples.
    fn samples(sched: &[(u32, u64, u64)]) -> Vec<RateSample> {
        let mut s = RateSampler::new();
        let mut stamps = Vec::with_capacity(sched.len());
        let mut out = Vec::new();
        let mut acked = 0;
        while acked < sched.len() {
            let at = sched[acked].2;
            if stamps.len() < sched.len() && sched[stamps.len()].1 < at {
                let now = Instant::from_nanos(sched[stamps.len()].1);
                stamps.push(s.on_send(now, stamps.len() == acked, 0));
                continue;
            }
            while acked < sched.len() && sched[acked].2 == at {
                s.on_delivered(Instant::from_nanos(at), &stamps[acked], sched[acked].0);
                acked += 1;
            }
            out.extend(s.generate_sample(None));
        }
        out
    }

    /// §2: the sample is the slower of the send rate and the ACK rate over the interval.
    /// On a path that keeps the spacing of the ACKs, the ACK rate cannot beat the
    /// bottleneck whatever the sender does; with ACKs bunched, the send rate of a sender
    /// that paces at or below the bottleneck cannot. Either way no sample may exceed the
    /// bottleneck, and none may exceed the delivered bytes over either elapsed time.
    #[test]
    fn draft_cheng_2_no_sample_exceeds_the_bottleneck_or_the_send_and_ack_rates() {
        let mut ack_rate_overshot = 0;
        for seed in 1..=40 {
            for paced in [false, true] {
                let all = samples(&schedule(seed, paced));
                assert!(all.len() > N / 3, "seed {seed}: {} samples", all.len());
                for rs in &all {
                    assert!(
                        rs.delivery_rate <= BOTTLENECK,
                        "seed {seed} {paced}: {rs:?}"
                    );
                    let rate_over = |d: Duration| {
                        u128::from(rs.delivered) * NANOS_PER_SEC / u128::from(d.as_nanos())
                    };
                    for elapsed in [rs.send_elapsed, rs.ack_elapsed] {
                        if elapsed > Duration::ZERO {
                            assert!(u128::from(rs.delivery_rate) <= rate_over(elapsed));
                        }
                    }
                    if rs.ack_elapsed > Duration::ZERO
                        && rate_over(rs.ack_elapsed) > u128::from(BOTTLENECK)
                    {
                        ack_rate_overshot += 1;
                    }
                }
            }
        }
        // The bunched ACKs did make the ACK rate alone overshoot: send_elapsed mattered.
        assert!(ack_rate_overshot > 0);
    }

    #[test]
    fn no_input_panics_and_counts_saturate() {
        let mut s = RateSampler::new();
        // Time running backwards: elapsed times are zero, so no sample.
        let a = s.on_send(ms(100), true, 0);
        assert_eq!(ack(&mut s, ms(50), &[a], None), None);
        // Delivered near the end of u64: saturates, and a rate from 1 ns does not overflow.
        let b = s.on_send(Instant::ZERO, true, 0);
        s.delivered = u64::MAX - 10;
        s.on_delivered(Instant::from_nanos(1), &b, u32::MAX);
        assert_eq!(s.delivered(), u64::MAX);
        let rs = s.generate_sample(Some(Duration::ZERO)).expect("a sample");
        assert_eq!(rs.delivery_rate, u64::MAX);
        s.mark_app_limited(u64::MAX);
        assert_eq!(s.app_limited, u64::MAX);
        // The transmission counter wraps without upsetting the order of a burst.
        s.next_order = u32::MAX;
        let c = s.on_send(ms(0), false, 0);
        let d = s.on_send(ms(0), false, 0);
        assert!(d.sent_after(&c) && !c.sent_after(&d));
    }
}
