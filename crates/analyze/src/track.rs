//! The connection tracker: per connection and direction, the state that classifies each
//! segment as it is read (one pass, in capture order).

use crate::model::{Connection, Direction, Limits, WindowScaling};
use crate::ranges::{unwrap, RangeSet};
use crate::stats::Summary;
use crate::{MAX_RECORDS, MAX_SAMPLES, MAX_SERIES};
use ackclock_wire::{SackBlock, TcpFlags, TcpOptions, TcpSegment};
use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddrV4;

/// TSvals remembered per direction for timestamp RTT samples (a window's worth of
/// distinct values is what an echo can name; older ones are dropped first).
const MAX_TSVALS: usize = 1 << 16;
/// Retransmissions searched back for the one a D-SACK reports.
const DSACK_LOOKBACK: usize = 4096;

/// One transmission of a range of data not yet acknowledged.
#[derive(Clone, Copy, Debug)]
struct Rec {
    end: i64,
    /// When sent (the latest transmission of its bytes).
    t: u64,
    /// Some byte of it was sent more than once, or it was partly acknowledged: no RTT
    /// sample (Karn and Partridge 1987; RFC 6298 §3).
    ambiguous: bool,
}

/// A retransmission, kept to match D-SACKs against.
#[derive(Clone, Copy, Debug)]
struct Retx {
    s: i64,
    e: i64,
    spurious: bool,
}

/// The points of one direction's figures, times in seconds since the connection's first
/// packet and sequence numbers relative to the direction's ISN. Each list holds at most
/// [`MAX_SERIES`] points; [`Series::truncated`] says when one was cut.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Data segments: (time, first sequence number, one past the last, retransmission).
    pub segments: Vec<(f64, f64, f64, bool)>,
    /// The other end's ACKs of this data: (time, acknowledgment number, right edge of the
    /// window it advertised).
    pub acks: Vec<(f64, f64, f64)>,
    /// SACK blocks the other end reported: (time, left edge, right edge).
    pub sacks: Vec<(f64, f64, f64)>,
    /// Duplicate ACKs: (time, acknowledgment number).
    pub dup_acks: Vec<(f64, f64)>,
    /// Outstanding data and the other end's window after each change: (time, outstanding,
    /// window), bytes.
    pub outstanding: Vec<(f64, f64, f64)>,
    /// RTT samples from data and ACKs: (time of the ACK, ms).
    pub rtt: Vec<(f64, f64)>,
    /// RTT samples from timestamps: (time of the ACK, ms).
    pub ts_rtt: Vec<(f64, f64)>,
    /// Some list reached [`MAX_SERIES`] points and stopped growing.
    pub truncated: bool,
}

fn push<T>(v: &mut Vec<T>, x: T, truncated: &mut bool) {
    if v.len() < MAX_SERIES {
        v.push(x);
    } else {
        *truncated = true;
    }
}

/// What an ACK says about the data it acknowledges.
struct Ack {
    /// When captured, ns.
    t: u64,
    /// The acknowledgment number, relative to the data's ISN.
    a: i64,
    /// It has the shape of a duplicate as tcptrace's default (BSD) rule asks: no data, the
    /// window of its sender's previous segment, and the acknowledgment number its sender
    /// sent last (which a SYN of the data's sender resets to its ISN).
    dup_shape: bool,
    /// Its TSecr.
    tsecr: Option<u32>,
    /// When captured, s since the connection's first packet.
    t_rel: f64,
}

/// One direction's state.
#[derive(Default)]
struct Dir {
    out: Direction,
    /// The ISN (or one less than the first sequence number seen); `None` before the first
    /// segment.
    base: Option<u32>,
    syn_t: Option<u64>,
    wscale: Option<u8>,
    /// Highest sequence number sent plus one (SYN and FIN count), relative.
    snd_max: i64,
    first_data: Option<i64>,
    /// The end of the highest data byte sent.
    data_end: i64,
    /// Every sequence number sent so far: data bytes, SYN and FIN.
    sent: RangeSet,
    /// Unacknowledged transmissions by first sequence number.
    recs: BTreeMap<i64, Rec>,
    /// Latest transmission time of any acknowledged data (tcptrace's collapsed record): an
    /// RTT sample needs its segment sent after every covered segment.
    acked_max_t: u64,
    highest_ack: Option<i64>,
    fin_sent: bool,
    /// The window of this side's last segment, any flags (tcptrace's `win_last`).
    win_last: Option<u64>,
    /// The acknowledgment number this side sent last, relative to the other side's ISN;
    /// the other side's SYN sets it to that ISN (0), as tcptrace does.
    last_ack_sent: Option<i64>,
    /// This side has sent a segment, not a SYN, retransmission or out-of-order one, after
    /// the other side acknowledged something or with data (tcptrace's outstanding-window
    /// sample): a duplicate ACK of its data needs one.
    owin_seen: bool,
    /// Retransmitted SYN and FIN sequence numbers, in `rexmt_bytes` as tcptrace counts
    /// them but not data.
    flag_rexmt_bytes: u64,
    dup_run: u32,
    /// What the other end has reported by SACK above the cumulative ACK.
    sacked: RangeSet,
    retx: Vec<Retx>,
    rtt: Vec<f64>,
    ts_rtt: Vec<f64>,
    /// (TSval, first time sent), TSvals increasing.
    tsvals: VecDeque<(u32, u64)>,
    last_echo: Option<u32>,
    /// The window this side advertised last, bytes, scaled.
    window: Option<u64>,
    limits: Limits,
    series: Series,
    last_outstanding: Option<(i64, u64)>,
}

impl Dir {
    fn rel(&self, v: u32) -> i64 {
        let near = self.snd_max.max(self.highest_ack.unwrap_or(0));
        unwrap(self.base.unwrap_or(v), v, near)
    }

    /// A SYN from this side: the ISN and the options that matter later.
    fn syn(&mut self, t: u64, seq: u32, o: &TcpOptions) {
        self.out.syns += 1;
        if self.out.syns == 1 {
            self.syn_t = Some(t);
        } else {
            // A retransmitted SYN: the handshake's RTT is ambiguous (Karn).
            self.syn_t = None;
        }
        self.base = Some(seq);
        self.snd_max = self.snd_max.max(1);
        self.wscale = o.window_scale.map(|s| s.min(14)); // RFC 7323 §2.3: at most 14
        self.out.mss_option = o.mss;
    }

    /// A data segment of this direction: retransmission, reordering, the transmission
    /// record for RTT samples.
    fn data(&mut self, t: u64, s: i64, len: u32, peer_window_zero: bool, t_rel: f64) -> bool {
        let e = s + i64::from(len);
        let o = &mut self.out;
        o.data_pkts += 1;
        o.data_bytes += u64::from(len);
        o.max_segment = o.max_segment.max(u64::from(len));
        o.min_segment = if o.min_segment == 0 {
            u64::from(len)
        } else {
            o.min_segment.min(u64::from(len))
        };
        self.first_data.get_or_insert(s);
        // tcptrace's zero-window probe: data sent while the other end's last window was
        // zero (RFC 9293 §3.8.6.1 probes a closed window). Kept out of the sequence record,
        // so neither it nor its bytes' later regular sending count as retransmissions.
        if peer_window_zero {
            self.out.zwnd_probe_pkts += 1;
            self.out.zwnd_probe_bytes += u64::from(len);
            return false;
        }
        // Out of order (tcptrace's rule): it starts before bytes sent already and ends
        // before their end; new bytes filling a hole, or a resend that stops short of the
        // data after it, which then also counts as a retransmission.
        if self.sent.out_of_order(s, e) {
            self.out.out_of_order_pkts += 1;
        }
        let overlap = self.sent.insert(s, e);
        let rexmit = overlap > 0;
        if rexmit {
            self.retransmission(t, s, e, overlap);
        } else if self.recs.len() < MAX_RECORDS {
            self.recs.insert(
                s,
                Rec {
                    end: e,
                    t,
                    ambiguous: false,
                },
            );
        } else {
            self.out.bounded += 1;
        }
        self.data_end = self.data_end.max(e);
        self.snd_max = self.snd_max.max(e);
        let tr = &mut self.series.truncated;
        push(
            &mut self.series.segments,
            (t_rel, s as f64, e as f64, rexmit),
            tr,
        );
        rexmit
    }

    /// The sequence number a SYN or FIN occupies, at `pos`: sent before, it makes its
    /// segment a retransmission (tcptrace counts SYN and FIN in "rexmt data pkts" and their
    /// sequence number in "rexmt data bytes"), unless the segment's data already did
    /// (`counted`). Returns whether it was sent before.
    fn flag_byte(&mut self, pos: i64, counted: bool) -> bool {
        if self.sent.insert(pos, pos + 1) == 0 {
            return false;
        }
        self.flag_rexmt_bytes += 1;
        self.out.rexmt_bytes += 1;
        if !counted {
            self.out.rexmt_pkts += 1;
        }
        true
    }

    /// A FIN at sequence number `f`. It occupies one sequence number (RFC 9293 §3.4), so
    /// the ACK that names `f + 1` times it as it would a data byte (tcptrace counts the
    /// FIN in its segment the same way); a second FIN makes that sample ambiguous (Karn).
    fn fin(&mut self, t: u64, f: i64, counted: bool) {
        self.out.fins += 1;
        self.flag_byte(f, counted);
        self.snd_max = self.snd_max.max(f + 1);
        let before = self.recs.range_mut(..=f).next_back();
        if self.fin_sent {
            if let Some((_, r)) = before.filter(|(_, r)| r.end > f) {
                r.ambiguous = true;
                r.t = t;
            }
            return;
        }
        self.fin_sent = true;
        match before {
            // The FIN came with this record's data.
            Some((_, r)) if r.end == f && r.t == t => r.end = f + 1,
            _ => {
                self.recs.insert(
                    f,
                    Rec {
                        end: f + 1,
                        t,
                        ambiguous: false,
                    },
                );
            }
        }
    }

    fn retransmission(&mut self, t: u64, s: i64, e: i64, overlap: u64) {
        self.out.rexmt_pkts += 1;
        self.out.rexmt_bytes += overlap;
        let una = self.highest_ack.unwrap_or(i64::MIN);
        // Spurious when sent: the other end had acknowledged every byte of it already.
        let acked = una >= e || self.sacked.covers(s.max(una), e);
        if acked {
            self.out.spurious.already_acked += 1;
            self.out.spurious.total += 1;
        }
        if self.retx.len() < MAX_RECORDS {
            self.retx.push(Retx {
                s,
                e,
                spurious: acked,
            });
        } else {
            self.out.bounded += 1;
        }
        // Karn: no RTT sample from any transmission of these bytes. The unacknowledged
        // records it overlaps become one ambiguous record, sent now.
        let (mut lo, mut hi) = (s.max(una), e);
        while let Some((&rs, r)) = self.recs.range(..e).next_back() {
            if r.end <= s {
                break;
            }
            lo = lo.min(rs);
            hi = hi.max(r.end);
            self.recs.remove(&rs);
        }
        if hi > lo {
            self.recs.insert(
                lo,
                Rec {
                    end: hi,
                    t,
                    ambiguous: true,
                },
            );
        }
        if s < una {
            // Acknowledged bytes sent again: as tcptrace, their transmission time becomes
            // now, so no segment sent before now yields a sample from a later ACK.
            self.acked_max_t = self.acked_max_t.max(t);
        }
    }

    /// An ACK of this direction's data, sent by the other end: RTT samples, duplicate
    /// ACKs. Returns whether it acknowledged new data.
    fn ack(&mut self, k: &Ack) -> bool {
        let (t, a, t_rel) = (k.t, k.a, k.t_rel);
        if let Some(syn_t) = self.syn_t.take() {
            if a >= 1 {
                self.out.handshake_rtt_ms = Some(t.saturating_sub(syn_t) as f64 / 1e6);
            } else {
                self.syn_t = Some(syn_t);
            }
        }
        let advanced = match self.highest_ack {
            Some(h) if a < h => {
                self.dup_run = 0;
                return false;
            }
            Some(h) if a == h => {
                // It names the end of something acknowledged already (the SYN counts), not
                // beyond what was sent; and this direction has had data outstanding.
                let lowest = if self.out.syns > 0 {
                    0
                } else {
                    self.first_data.unwrap_or(i64::MAX)
                };
                if h > lowest && a <= self.snd_max && k.dup_shape && self.owin_seen {
                    self.out.dup_acks += 1;
                    self.dup_run += 1;
                    if self.dup_run == 3 {
                        self.out.triple_dup_acks += 1;
                    }
                    let tr = &mut self.series.truncated;
                    push(&mut self.series.dup_acks, (t_rel, a as f64), tr);
                } else {
                    // Anything else ends a run of duplicates (RFC 5681 §3.2 counts them
                    // in a row).
                    self.dup_run = 0;
                }
                false
            }
            _ => true,
        };
        if !advanced {
            return false;
        }
        self.highest_ack = Some(a);
        self.dup_run = 0;
        self.sacked.remove_below(a);
        self.cover(t, a, t_rel);
        if let Some(ecr) = k.tsecr {
            self.ts_sample(t, ecr, t_rel);
        }
        true
    }

    /// Retires the transmissions `a` covers, sampling the RTT of the one it ends exactly.
    fn cover(&mut self, t: u64, a: i64, t_rel: f64) {
        let mut last_xmit = self.acked_max_t;
        while let Some(entry) = self.recs.first_entry() {
            let s = *entry.key();
            if s >= a {
                break;
            }
            let r = entry.remove();
            last_xmit = last_xmit.max(r.t);
            if r.end > a {
                // An ACK inside a segment: the rest stays, without a sample.
                self.recs.insert(
                    a,
                    Rec {
                        ambiguous: true,
                        ..r
                    },
                );
                break;
            }
            self.acked_max_t = self.acked_max_t.max(r.t);
            // A sample only when the ACK names this segment's end, the segment went once,
            // and nothing it covers went later (tcptrace's rule: a retransmission of an
            // earlier hole would make the ACK's wait the hole's, not this segment's).
            if r.end == a && !r.ambiguous && last_xmit <= r.t {
                // A capture can go back in time (records out of order): no negative RTT.
                let ms = t.saturating_sub(r.t) as f64 / 1e6;
                if self.rtt.len() < MAX_SAMPLES {
                    self.rtt.push(ms);
                } else {
                    self.out.bounded += 1;
                }
                let tr = &mut self.series.truncated;
                push(&mut self.series.rtt, (t_rel, ms), tr);
            }
        }
    }

    /// RFC 7323 §4.1: the echoed TSval gives the time since the segment that carried it.
    fn ts_sample(&mut self, t: u64, ecr: u32, t_rel: f64) {
        if ecr == 0 || self.last_echo == Some(ecr) {
            return;
        }
        let i = self
            .tsvals
            .partition_point(|&(v, _)| (v.wrapping_sub(ecr) as i32) < 0);
        if let Some(&(v, sent)) = self.tsvals.get(i) {
            if v == ecr {
                self.last_echo = Some(ecr);
                let ms = t.saturating_sub(sent) as f64 / 1e6;
                if self.ts_rtt.len() < MAX_SAMPLES {
                    self.ts_rtt.push(ms);
                } else {
                    self.out.bounded += 1;
                }
                let tr = &mut self.series.truncated;
                push(&mut self.series.ts_rtt, (t_rel, ms), tr);
            }
        }
        self.tsvals.drain(..i);
    }

    /// A TSval this side sent: remembered with the first time it was sent.
    fn tsval(&mut self, t: u64, v: u32) {
        let newer = self
            .tsvals
            .back()
            .is_none_or(|&(p, _)| (v.wrapping_sub(p) as i32) > 0);
        if newer {
            if self.tsvals.len() == MAX_TSVALS {
                self.tsvals.pop_front();
            }
            self.tsvals.push_back((v, t));
        }
    }

    /// SACK blocks the other end sent about this direction's data; `ack` is that
    /// segment's acknowledgment number. Returns whether the first block is a D-SACK.
    fn sack(&mut self, blocks: &[SackBlock], ack: i64, t_rel: f64) -> bool {
        let mut dsack = false;
        for (i, b) in blocks.iter().enumerate() {
            let (l, r) = (self.rel(b.left), self.rel(b.right));
            if r <= l || r - l >= 1 << 31 {
                continue;
            }
            let tr = &mut self.series.truncated;
            push(&mut self.series.sacks, (t_rel, l as f64, r as f64), tr);
            // RFC 2883 §4: the first block reports a duplicate when it starts below the
            // cumulative ACK, or lies inside the second block; tcptrace also takes a first
            // block that overlaps the second.
            let by_second = blocks.get(1).is_some_and(|b1| {
                let (l1, r1) = (self.rel(b1.left), self.rel(b1.right));
                (l1 <= l && r <= r1) || (l < r1 && l1 < r)
            });
            if i == 0 && (l < ack || by_second) {
                dsack = true;
                self.dsack(l, r);
            } else {
                self.sacked.insert(l.max(ack), r);
            }
        }
        self.out.bounded = self.out.bounded.max(self.sacked.merged_gaps());
        dsack
    }

    /// A D-SACK for `[l, r)`: the latest retransmission of those bytes was unnecessary.
    fn dsack(&mut self, l: i64, r: i64) {
        let n = self.retx.len();
        let from = n.saturating_sub(DSACK_LOOKBACK);
        match self.retx[from..]
            .iter_mut()
            .rev()
            .find(|x| x.s < r && l < x.e)
        {
            Some(x) if !x.spurious => {
                x.spurious = true;
                self.out.spurious.dsack += 1;
                self.out.spurious.total += 1;
            }
            Some(_) => {}
            None => self.out.spurious.dsack_unmatched += 1,
        }
    }

    fn outstanding(&self) -> Option<i64> {
        let una = self.highest_ack?;
        self.first_data?;
        Some((self.snd_max - una).max(0))
    }
}

/// One connection's state.
pub(crate) struct Conn {
    a: SocketAddrV4,
    b: SocketAddrV4,
    first_t: u64,
    last_t: u64,
    packets: u64,
    reset: bool,
    dirs: [Dir; 2],
    /// The capture's first packet, for the times in the result.
    t0: u64,
}

impl Conn {
    pub(crate) fn new(a: SocketAddrV4, b: SocketAddrV4, t: u64, t0: u64) -> Conn {
        Conn {
            a,
            b,
            first_t: t,
            last_t: t,
            packets: 0,
            reset: false,
            dirs: [Dir::default(), Dir::default()],
            t0,
        }
    }

    /// Which direction a segment from `src` belongs to.
    pub(crate) fn dir_of(&self, src: SocketAddrV4) -> usize {
        usize::from(src != self.a)
    }

    /// Closed: both FINs seen, or a RST. A SYN after it starts another connection.
    pub(crate) fn closed(&self) -> bool {
        self.reset || (self.dirs[0].out.fins > 0 && self.dirs[1].out.fins > 0)
    }

    fn scaling_in_effect(&self) -> bool {
        self.dirs[0].wscale.is_some() && self.dirs[1].wscale.is_some()
    }

    /// Adds the time since the last packet to each direction's limit in force.
    fn account(&mut self, t: u64) {
        let dt = t.saturating_sub(self.last_t) as f64 / 1e9;
        for d in 0..2 {
            let Some(out) = self.dirs[d].outstanding() else {
                continue;
            };
            let win = self.dirs[1 - d].window;
            let mss = self.dirs[d].out.max_segment as i64;
            let l = &mut self.dirs[d].limits;
            if out == 0 {
                l.idle_s += dt;
            } else if win.is_some_and(|w| out >= w as i64 - mss) {
                l.rwnd_limited_s += dt;
            } else {
                l.cwnd_limited_inferred_s += dt;
            }
        }
    }

    /// One segment from direction `d` at time `t` (ns) with `payload` data bytes.
    pub(crate) fn segment(
        &mut self,
        t: u64,
        d: usize,
        seg: &TcpSegment<'_>,
        payload: u32,
        bad_opts: &mut u64,
    ) {
        self.account(t);
        self.last_t = self.last_t.max(t);
        self.packets += 1;
        let t_rel = t.saturating_sub(self.first_t) as f64 / 1e9;
        let flags = seg.flags();
        let opts = seg.options().unwrap_or_else(|_| {
            *bad_opts += 1;
            TcpOptions::NONE
        });
        let syn = flags.contains(TcpFlags::SYN);
        let fin = flags.contains(TcpFlags::FIN);
        let rst = flags.contains(TcpFlags::RST);
        let has_ack = flags.contains(TcpFlags::ACK);
        let (me, _) = split(&mut self.dirs, d);
        me.out.packets += 1;
        if syn {
            me.syn(t, seg.seq(), &opts);
        } else if me.base.is_none() {
            me.base = Some(seg.seq().wrapping_sub(1));
        }
        if rst {
            me.out.rsts += 1;
            self.reset = true;
        }
        let (me, peer) = split(&mut self.dirs, d);
        if syn {
            peer.last_ack_sent = Some(0);
        }
        let s = me.rel(seg.seq()) + i64::from(syn);
        let mut counted = syn && me.flag_byte(s - 1, false);
        let ooo_before = me.out.out_of_order_pkts;
        if payload > 0 {
            let peer_zero = peer.win_last == Some(0) && !syn;
            counted |= me.data(t, s, payload, peer_zero, t_rel);
        }
        if fin {
            me.fin(t, s + i64::from(payload), counted);
        }
        if !syn
            && !counted
            && me.out.out_of_order_pkts == ooo_before
            && (peer.last_ack_sent.is_some() || payload > 0 || fin)
        {
            me.owin_seen = true;
        }
        if let Some(ts) = opts.timestamps {
            me.tsval(t, ts.tsval);
        }
        if has_ack {
            me.out.ack_pkts += 1;
            if payload == 0 && !(syn || fin || rst) {
                me.out.pure_acks += 1;
            }
        }
        // This side's window: scaled except on a SYN (RFC 7323 §2.2).
        let in_effect = self.scaling_in_effect();
        let (me, peer) = split(&mut self.dirs, d);
        let shift = if syn || !in_effect {
            0
        } else {
            me.wscale.unwrap_or(0)
        };
        let w = u64::from(seg.window()) << shift;
        let same_window = me.win_last == Some(w);
        me.win_last = Some(w);
        if has_ack && !rst {
            me.window = Some(w);
            me.out.max_window = me.out.max_window.max(w);
            me.out.min_window = if me.out.ack_pkts == 1 {
                w
            } else {
                me.out.min_window.min(w)
            };
            if w == 0 {
                me.out.zero_window_adv += 1;
            }
        }
        if !opts.sack.is_empty() {
            me.out.sack_pkts += 1;
            me.out.max_sack_blocks = me.out.max_sack_blocks.max(opts.sack.len() as u64);
        }
        if has_ack && peer.base.is_some() {
            let a = peer.rel(seg.ack());
            let tsecr = opts.timestamps.map(|t| t.tsecr);
            peer.ack(&Ack {
                t,
                a,
                dup_shape: payload == 0 && same_window && me.last_ack_sent == Some(a),
                tsecr,
                t_rel,
            });
            me.last_ack_sent = Some(a);
            if !opts.sack.is_empty() && peer.sack(opts.sack.as_slice(), a, t_rel) {
                me.out.dsack_pkts += 1;
            }
            let edge = a + me.window.unwrap_or(0) as i64;
            let tr = &mut peer.series.truncated;
            push(&mut peer.series.acks, (t_rel, a as f64, edge as f64), tr);
        }
        self.record_outstanding(t_rel);
    }

    fn record_outstanding(&mut self, t_rel: f64) {
        for d in 0..2 {
            let win = self.dirs[1 - d].window.unwrap_or(0);
            let dir = &mut self.dirs[d];
            let Some(out) = dir.outstanding() else {
                continue;
            };
            dir.limits.max_outstanding = dir.limits.max_outstanding.max(out as u64);
            if dir.last_outstanding != Some((out, win)) {
                dir.last_outstanding = Some((out, win));
                let tr = &mut dir.series.truncated;
                push(
                    &mut dir.series.outstanding,
                    (t_rel, out as f64, win as f64),
                    tr,
                );
            }
        }
    }

    /// The result.
    pub(crate) fn finish(self, index: usize) -> Connection {
        let secs = |t: u64| t.saturating_sub(self.t0) as f64 / 1e9;
        let duration = self.last_t.saturating_sub(self.first_t) as f64 / 1e9;
        let both_syns = self.dirs.iter().all(|d| d.out.syns > 0);
        let both_fins = self.dirs.iter().all(|d| d.out.fins > 0);
        let window_scaling = WindowScaling {
            known: both_syns,
            in_effect: self.scaling_in_effect(),
            a_shift: self.dirs[0].wscale,
            b_shift: self.dirs[1].wscale,
        };
        let names = [self.a.to_string(), self.b.to_string()];
        let [d0, d1] = self.dirs;
        let mut series: [Series; 2] = Default::default();
        let directions = [d0, d1].map(|mut d| {
            let mut o = std::mem::take(&mut d.out);
            let data_rexmt = o.rexmt_bytes - d.flag_rexmt_bytes;
            o.unique_bytes = o.data_bytes - data_rexmt.min(o.data_bytes);
            o.unique_bytes = o.unique_bytes.saturating_sub(o.zwnd_probe_bytes);
            o.goodput_bps = if duration > 0.0 {
                o.unique_bytes as f64 * 8.0 / duration
            } else {
                0.0
            };
            o.rtt_ms = Summary::of(&d.rtt);
            o.ts_rtt_ms = Summary::of(&d.ts_rtt);
            o.limits = d.limits.clone();
            o.bounded += d.sent.merged_gaps();
            (o, std::mem::take(&mut d.series))
        });
        let [(mut o0, s0), (mut o1, s1)] = directions;
        (o0.from, o0.to) = (names[0].clone(), names[1].clone());
        (o1.from, o1.to) = (names[1].clone(), names[0].clone());
        series[0] = s0;
        series[1] = s1;
        Connection {
            index,
            a: names[0].clone(),
            b: names[1].clone(),
            first_s: secs(self.first_t),
            last_s: secs(self.last_t),
            duration_s: duration,
            packets: self.packets,
            complete: (both_syns && both_fins) || self.reset,
            reset: self.reset,
            window_scaling,
            directions: [o0, o1],
            series,
        }
    }
}

fn split(dirs: &mut [Dir; 2], d: usize) -> (&mut Dir, &mut Dir) {
    let [x, y] = dirs;
    if d == 0 {
        (x, y)
    } else {
        (y, x)
    }
}
