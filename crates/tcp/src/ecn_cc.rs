//! Congestion controllers driven by ECN marks rather than by loss alone:
//!
//! - [`Dctcp`] (RFC 8257): the fraction of bytes marked in each window, smoothed into
//!   `alpha`, sets how far a mark cuts the window: `cwnd * (1 - alpha / 2)`, so a few marks
//!   cut a little and a window of marks halves it. Growth and loss are Reno's ([`Aimd`]).
//! - [`DecBit`]: the binary feedback scheme of Ramakrishnan and Jain (1988) that the seeds
//!   weigh against a dropped packet (seed 000, 16 Nov 1987): the gateway sets a bit when its
//!   average queue is at least one packet; once per two windows the sender looks at the bits
//!   of the last window's ACKs, multiplies the window by 7/8 when at least half were set and
//!   adds one packet otherwise.
//!
//! Both need the receiver to echo each packet's mark ([`EcnEcho::PerPacket`](crate::config::EcnEcho::PerPacket)
//! (crate::config::EcnEcho)); with RFC 3168's latched echo every ACK after a mark would look
//! marked until the sender's CWR.

use crate::cc::{AckEvent, Aimd, AimdConfig, CongestionControl, CongestionEvent};
use crate::seq::SeqNum;

/// Parameters of DCTCP (RFC 8257), [`CongestionAlgorithm::Dctcp`](crate::CongestionAlgorithm::Dctcp).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpConfig {
    /// The gain g of alpha's moving average (RFC 8257 §3.3: 1/16).
    pub g: f64,
    /// alpha before the first window is measured (RFC 8257 §3.3 suggests 1: the first mark
    /// halves, as Reno would).
    pub initial_alpha: f64,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            g: 1.0 / 16.0,
            initial_alpha: 1.0,
        }
    }
}

/// Counts the bytes acknowledged, and those acknowledged with ECE, over windows of data: a
/// window ends when SND.UNA passes SND.MAX as it was when the window began (RFC 8257 §3.3's
/// `DCTCP.WindowEnd`).
#[derive(Clone, Copy, Debug, Default)]
struct MarkCounter {
    acked: u64,
    marked: u64,
    window_end: Option<SeqNum>,
}

impl MarkCounter {
    /// Counts `ev`; returns the window's (acked, marked) bytes when it ended with this ACK,
    /// and starts the next.
    fn on_ack(&mut self, ev: &AckEvent) -> Option<(u64, u64)> {
        self.acked += u64::from(ev.bytes_acked);
        if ev.ece {
            self.marked += u64::from(ev.bytes_acked);
        }
        match self.window_end {
            Some(end) if ev.snd_una <= end => None,
            Some(_) => {
                let done = (self.acked, self.marked);
                *self = MarkCounter {
                    window_end: Some(ev.snd_max),
                    ..MarkCounter::default()
                };
                Some(done)
            }
            None => {
                self.window_end = Some(ev.snd_max);
                None
            }
        }
    }
}

/// DCTCP (RFC 8257): Reno's growth and loss response, and on ECE a cut by `alpha / 2`.
#[derive(Clone, Debug)]
pub(crate) struct Dctcp {
    cfg: DctcpConfig,
    reno: Aimd,
    alpha: f64,
    marks: MarkCounter,
}

impl Dctcp {
    /// A controller with Reno's initial window and ssthresh, in bytes, and alpha at
    /// `cfg.initial_alpha`.
    pub(crate) fn new(cfg: DctcpConfig, initial_window_bytes: u32, initial_ssthresh: u32) -> Self {
        Dctcp {
            cfg,
            reno: Aimd::new(
                AimdConfig::default(),
                initial_window_bytes,
                initial_ssthresh,
            ),
            alpha: cfg.initial_alpha.clamp(0.0, 1.0),
            marks: MarkCounter::default(),
        }
    }

    /// The estimate of the fraction of bytes marked, in [0, 1].
    #[cfg(test)]
    pub(crate) fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }
    fn cwnd(&self) -> u32 {
        self.reno.cwnd()
    }
    fn ssthresh(&self) -> u32 {
        self.reno.ssthresh()
    }
    fn on_ack(&mut self, ev: &AckEvent) {
        // RFC 8257 §3.3: at the end of each window, alpha = (1 - g) alpha + g F.
        if let Some((acked, marked)) = self.marks.on_ack(ev) {
            if acked > 0 {
                let f = marked as f64 / acked as f64;
                self.alpha = (1.0 - self.cfg.g) * self.alpha + self.cfg.g * f;
            }
        }
        self.reno.on_ack(ev);
    }
    fn on_congestion(&mut self, ev: &CongestionEvent) {
        // RFC 8257 §3.5: loss is answered as a conventional TCP answers it.
        self.reno.on_congestion(ev);
    }
    fn on_ece(&mut self, ev: &CongestionEvent) -> bool {
        // RFC 8257 §3.3: cwnd = cwnd * (1 - alpha / 2), once per window (the connection's
        // rule), and slow start ends there.
        let mss = ev.mss.max(1);
        let cwnd = (f64::from(self.reno.cwnd()) * (1.0 - self.alpha / 2.0)) as u32;
        let cwnd = cwnd.max(mss);
        self.reno.set_ssthresh(cwnd);
        self.reno.set_cwnd(cwnd);
        true
    }
    fn on_rto(&mut self, ev: &CongestionEvent, first: bool) {
        self.reno.on_rto(ev, first);
    }
    fn set_cwnd(&mut self, cwnd: u32) {
        self.reno.set_cwnd(cwnd);
    }
    fn undo(&mut self, cwnd: u32, ssthresh: u32) {
        self.reno.undo(cwnd, ssthresh);
    }
}

/// Parameters of the DEC-bit window (Ramakrishnan and Jain),
/// [`CongestionAlgorithm::DecBit`](crate::CongestionAlgorithm::DecBit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DecBitConfig {
    /// The window after a decision to decrease, as a fraction of the window before (7/8).
    pub decrease: f64,
    /// The share of set bits, of the bytes acknowledged in the counted window, at or above
    /// which the window decreases (one half).
    pub threshold: f64,
}

impl Default for DecBitConfig {
    fn default() -> Self {
        DecBitConfig {
            decrease: 0.875,
            threshold: 0.5,
        }
    }
}

/// Jain and Ramakrishnan's binary feedback (DEC-bit) window: no slow start, one packet more
/// per two windows, 7/8 when the bits say the gateway's queue averaged one packet or more.
/// The window's decision waits a window after each change: the ACKs of the window sent
/// before the change still describe the old window, so only the next window's bits count.
#[derive(Clone, Debug)]
pub(crate) struct DecBit {
    cfg: DecBitConfig,
    cwnd: u32,
    mss: u32,
    marks: MarkCounter,
    /// The window now being acknowledged was sent before the last change: not counted.
    skipping: bool,
}

impl DecBit {
    /// A controller with cwnd = `initial_window_bytes`, adding `mss` bytes at a time.
    pub(crate) fn new(cfg: DecBitConfig, initial_window_bytes: u32, mss: u32) -> Self {
        DecBit {
            cfg,
            cwnd: initial_window_bytes.max(1),
            mss: mss.max(1),
            marks: MarkCounter::default(),
            skipping: false,
        }
    }

    fn decrease(&mut self) {
        self.cwnd = ((f64::from(self.cwnd) * self.cfg.decrease) as u32).max(self.mss);
    }
}

impl CongestionControl for DecBit {
    fn name(&self) -> &'static str {
        "dec_bit"
    }
    fn cwnd(&self) -> u32 {
        self.cwnd
    }
    fn ssthresh(&self) -> u32 {
        // No slow start: the window only ever moves by the two rules.
        self.cwnd
    }
    fn in_slow_start(&self) -> bool {
        false
    }
    fn on_ack(&mut self, ev: &AckEvent) {
        self.mss = ev.mss.max(1);
        let Some((acked, marked)) = self.marks.on_ack(ev) else {
            return;
        };
        if std::mem::take(&mut self.skipping) {
            return;
        }
        if acked > 0 && marked as f64 >= self.cfg.threshold * acked as f64 {
            self.decrease();
        } else {
            self.cwnd = self.cwnd.saturating_add(self.mss);
        }
        self.skipping = true;
    }
    fn on_congestion(&mut self, _ev: &CongestionEvent) {
        // A loss is a strong signal of the same kind: the same decrease.
        self.decrease();
        self.skipping = true;
    }
    fn on_ece(&mut self, _ev: &CongestionEvent) -> bool {
        // The bits are counted per window in `on_ack`, not answered one by one.
        false
    }
    fn on_rto(&mut self, ev: &CongestionEvent, _first: bool) {
        self.cwnd = ev.mss.max(1);
        self.skipping = true;
    }
    fn set_cwnd(&mut self, cwnd: u32) {
        self.cwnd = cwnd.max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackclock_wire::{Duration, Instant};

    const MSS: u32 = 1000;

    fn ack(una: u32, max: u32, bytes: u32, ece: bool) -> AckEvent {
        AckEvent {
            now: Instant::ZERO,
            bytes_acked: bytes,
            mss: MSS,
            flight_bytes: max - una + bytes,
            rtt: None,
            srtt: Duration::from_millis(10),
            min_rtt: None,
            in_recovery: false,
            ece,
            snd_una: SeqNum::new(una),
            snd_max: SeqNum::new(max),
            delivery: None,
        }
    }

    fn cong() -> CongestionEvent {
        CongestionEvent {
            now: Instant::ZERO,
            mss: MSS,
            flight_bytes: 10 * MSS,
            snd_wnd: u32::MAX,
        }
    }

    /// Acknowledges `n` segments one by one, ACK-clocked: at each ACK the sender has a
    /// window in flight (SND.MAX = SND.UNA + cwnd). `marked(k)` says whether ACK k carries
    /// ECE. Returns the new SND.UNA.
    fn drive(
        cc: &mut dyn CongestionControl,
        una: u32,
        n: usize,
        marked: impl Fn(usize) -> bool,
    ) -> u32 {
        let mut u = una;
        for k in 0..n {
            u += MSS;
            let max = u + cc.cwnd();
            cc.on_ack(&ack(u, max, MSS, marked(k)));
        }
        u
    }

    #[test]
    fn rfc8257_3_3_alpha_is_the_smoothed_fraction_of_marked_bytes() {
        // Congestion avoidance from the start (ssthresh = cwnd): the window grows slowly.
        let mut d = Dctcp::new(DctcpConfig::default(), 10 * MSS, 10 * MSS);
        assert_eq!(d.alpha(), 1.0);
        // Two windows without marks: the first ends the opening window, then alpha decays.
        let mut una = drive(&mut d, 0, 25, |_| false);
        assert!(d.alpha() < 1.0 && d.alpha() >= 0.85, "{}", d.alpha());
        // Then a quarter of the ACKs (and bytes) marked: alpha tends to 1/4.
        una = drive(&mut d, una, 20_000, |k| k % 4 == 0);
        assert!((d.alpha() - 0.25).abs() < 0.03, "{}", d.alpha());
        // A mark now cuts cwnd by alpha / 2 (about 1/8), not by half.
        let before = d.cwnd();
        assert!(d.on_ece(&cong()));
        let cut = 1.0 - f64::from(d.cwnd()) / f64::from(before);
        assert!((cut - 0.125).abs() < 0.02, "cut {cut}");
        assert_eq!(d.ssthresh(), d.cwnd());
        // No marks for a long time: alpha decays towards 0, and a mark then barely cuts.
        drive(&mut d, una, 20_000, |_| false);
        assert!(d.alpha() < 0.01, "{}", d.alpha());
    }

    #[test]
    fn rfc8257_3_5_dctcp_answers_loss_as_reno() {
        let mut d = Dctcp::new(DctcpConfig::default(), 20 * MSS, u32::MAX);
        d.on_congestion(&cong());
        // RFC 5681 eq. 4: half the flight of 10 segments.
        assert_eq!((d.cwnd(), d.ssthresh()), (5 * MSS, 5 * MSS));
    }

    #[test]
    fn dec_bit_adds_a_packet_per_two_windows_without_bits_and_cuts_to_7_8_with_them() {
        let mut b = DecBit::new(DecBitConfig::default(), 8 * MSS, MSS);
        assert!(!b.in_slow_start());
        // No bits: one packet more every second window of about cwnd bytes. Over ten
        // windows of about 8-12 segments, four to six increases.
        let mut una = drive(&mut b, 0, 100, |_| false);
        let grown = b.cwnd() / MSS;
        assert!((12..=14).contains(&grown), "{grown} segments");
        // Every bit set: 7/8 per two windows (one decision per two windows of ACKs).
        let w = b.cwnd();
        una = drive(&mut b, una, 3 * grown as usize, |_| true);
        let cuts = (f64::from(w) / f64::from(b.cwnd())).ln() / (8.0f64 / 7.0).ln();
        assert!((0.9..=2.1).contains(&cuts), "{cuts} cuts");
        // Under half the bits: still growth.
        let w = b.cwnd();
        drive(&mut b, una, 100, |k| k % 3 == 0);
        assert!(b.cwnd() > w);
        // ECE alone changes nothing; bits are counted per window.
        let w = b.cwnd();
        assert!(!b.on_ece(&cong()));
        assert_eq!(b.cwnd(), w);
    }
}
