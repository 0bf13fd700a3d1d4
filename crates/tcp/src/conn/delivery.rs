//! The connection's side of a model-based controller (one whose
//! [`wants_delivery`](crate::cc::CongestionControl::wants_delivery) is true: BBR): every
//! transmission is stamped in the transmit log (`crate::rack`'s record, kept for it with or
//! without RACK's loss detection), every acceptable ACK yields a [`Delivery`] with a
//! delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation), and the controller
//! hears of every ACK after loss detection has run, as Linux's `cong_control` does.

use super::*;
use crate::cc::{Delivery, RecoveryPhase};
use crate::rate::AppLimitedInputs;

impl Connection {
    /// draft-cheng §3.4: marks an application-limited phase when the sender could send but
    /// has less than a segment to (run at the start of ACK processing and when the
    /// application writes).
    pub(super) fn rate_check_app_limited(&mut self) {
        let mss = self.snd_mss;
        let data_end = self.buf_seq + self.send_buf.len();
        let inputs = AppLimitedInputs {
            unsent: u64::from(data_end.since(self.snd_nxt)),
            mss,
            pending_transmissions: false,
            in_flight: u64::from(self.recovery_pipe(mss)),
            cwnd: u64::from(self.cc.cwnd()),
            // Segments taken for lost wait for their resend during a recovery, and after a
            // timeout until go-back-N has resent them.
            lost_awaiting_retransmit: self.rec.in_recovery() || self.snd_nxt < self.snd_max,
        };
        if let Some(s) = self.rack.as_deref_mut().and_then(Rack::sampler) {
            s.check_app_limited(&inputs);
        }
    }

    /// Before an ACK is processed, with a model-based controller: the application-limited
    /// test (draft-cheng §3.4, before the pipe and the window change) and the pipe, which
    /// the controller's event reports as `prior_in_flight`. Zero otherwise.
    #[inline]
    pub(super) fn model_before_ack(&mut self) -> u32 {
        if !self.cc_model {
            return 0;
        }
        self.rate_check_app_limited();
        self.recovery_pipe(self.snd_mss)
    }

    /// Data goes out with nothing in flight: the controller hears of it (Linux's
    /// `CA_EVENT_TX_START`), with whether the idle time was the application's.
    #[cold]
    pub(super) fn model_send_from_idle(&mut self, now: Instant) {
        let app_limited = self
            .rack
            .as_deref_mut()
            .and_then(Rack::sampler)
            .is_some_and(|s| s.is_app_limited());
        self.cc.on_send_from_idle(now, app_limited);
    }

    /// Where the loss recovery stands, as a model-based controller sees it.
    fn recovery_phase(&self) -> RecoveryPhase {
        if self.rec.in_recovery() {
            RecoveryPhase::Fast
        } else if self.rec.in_rto_recovery(self.snd_una) {
            RecoveryPhase::Timeout
        } else {
            RecoveryPhase::Open
        }
    }

    /// The controller's ACK event for an acceptable ACK that moved SND.UNA from `prev_una`
    /// (or not), after loss detection: the rate sample and the counters of the transmit
    /// log. `prior_in_flight`: the pipe before the ACK; `ece`: the ACK echoed a CE mark.
    #[inline(never)]
    pub(super) fn model_on_ack(
        &mut self,
        now: Instant,
        prev_una: SeqNum,
        prior_in_flight: u32,
        ece: bool,
    ) {
        let mss = self.snd_mss;
        let in_flight = self.recovery_pipe(mss);
        let recovery = self.recovery_phase();
        let Some(r) = self.rack.as_deref_mut() else {
            return;
        };
        // RTTs on the engine's clock, not the timestamp option's whole milliseconds: a
        // minimum rounded up would refuse the samples whose interval is one round trip.
        let (rtt, min_rtt) = r.take_ack_rtt();
        let Some(s) = r.sampler() else {
            return;
        };
        let sample = s.generate_sample(min_rtt);
        let (delivered, lost) = (s.delivered(), s.lost());
        let app_limited = s.is_app_limited();
        let (seen_delivered, seen_lost) = self.model_seen;
        self.model_seen = (delivered, lost);
        let delivery = Delivery {
            delivered,
            newly_delivered: u32::try_from(delivered - seen_delivered).unwrap_or(u32::MAX),
            lost,
            newly_lost: u32::try_from(lost - seen_lost).unwrap_or(u32::MAX),
            prior_in_flight,
            in_flight,
            app_limited,
            recovery,
            sample,
        };
        let ev = AckEvent {
            now,
            bytes_acked: self.snd_una.since(prev_una),
            mss,
            flight_bytes: self.snd_max.since(prev_una),
            rtt,
            srtt: self.rtt.srtt(),
            min_rtt,
            in_recovery: recovery == RecoveryPhase::Fast,
            ece,
            snd_una: self.snd_una,
            snd_max: self.snd_max,
            delivery: Some(delivery),
        };
        self.cc.on_ack(&ev);
        self.update_pacing_rate();
    }
}
