//! SYN cookies (RFC 4987 §3.6): when a listener's backlog is full, the SYN,ACK carries an
//! initial sequence number that encodes what the handshake must remember, authenticated by
//! a keyed hash, and nothing is kept until the ACK comes back with it plus one. A SYN flood
//! then costs a hash and a reply per SYN, not memory, and legitimate clients still connect.
//!
//! The layout is FreeBSD's (tcp_syncache.c): 24 bits of MAC, then one bit that says which
//! of the two latest time periods made the cookie, three bits of MSS index, three of
//! window-scale index and one for SACK-permitted. Timestamps need no bit: a client that
//! offered them sends them on its ACK, which says so. A cookie is valid for one to two
//! periods of 16 seconds (the SYN,ACK's round trip must fit), and a guess succeeds with
//! probability 2^-24 per segment.

use crate::seq::SeqNum;
use core::hash::Hasher;
use core::net::SocketAddrV4;

/// Seconds per time period: a cookie is accepted during the period that made it and the
/// next one.
pub(crate) const PERIOD_S: u64 = 16;

/// Seconds after a listener last sent a cookie during which an ACK may return one: a
/// cookie made at time t is accepted until the end of the next period, so at most two
/// periods later.
pub(crate) const VALID_S: u64 = 2 * PERIOD_S;

/// The MSS values a cookie can carry (FreeBSD's table); the largest not above the peer's.
const MSS: [u16; 8] = [216, 536, 1200, 1360, 1400, 1440, 1452, 1460];
/// Window-scale shifts a cookie can carry; index 0 means the peer offered no scaling.
const WSCALE: [Option<u8>; 8] = [
    None,
    Some(0),
    Some(2),
    Some(4),
    Some(6),
    Some(8),
    Some(10),
    Some(14),
];

/// What a cookie remembers of the SYN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CookieOptions {
    /// The peer's MSS, rounded down to the table (536 when it sent none, RFC 9293).
    pub mss: u16,
    /// The peer's window-scale shift, rounded down to the table; `None`: not offered.
    pub window_scale: Option<u8>,
    /// The peer offered SACK (RFC 2018).
    pub sack_permitted: bool,
}

impl CookieOptions {
    /// What a SYN offered, rounded down to what a cookie can carry.
    pub(crate) fn from_syn(
        mss: Option<u16>,
        window_scale: Option<u8>,
        sack_permitted: bool,
    ) -> Self {
        let mss = mss.unwrap_or(536);
        let m = MSS.iter().rposition(|&v| v <= mss).unwrap_or(0);
        let w = match window_scale {
            None => 0,
            Some(s) => WSCALE
                .iter()
                .rposition(|&v| v.is_some_and(|v| v <= s))
                .unwrap_or(1),
        };
        CookieOptions {
            mss: MSS[m],
            window_scale: WSCALE[w],
            sack_permitted,
        }
    }

    fn bits(self) -> u32 {
        let m = MSS.iter().position(|&v| v == self.mss).unwrap_or(0) as u32;
        let w = WSCALE
            .iter()
            .position(|&v| v == self.window_scale)
            .unwrap_or(0) as u32;
        m << 4 | w << 1 | u32::from(self.sack_permitted)
    }

    fn from_bits(b: u32) -> Self {
        CookieOptions {
            mss: MSS[(b >> 4 & 7) as usize],
            window_scale: WSCALE[(b >> 1 & 7) as usize],
            sack_permitted: b & 1 != 0,
        }
    }
}

fn period(now_s: u64) -> u64 {
    now_s / PERIOD_S
}

/// The 24-bit MAC of a connection's 4-tuple, the peer's ISN, a period and the option bits.
fn mac(
    key: &[u8; 16],
    local: SocketAddrV4,
    remote: SocketAddrV4,
    irs: SeqNum,
    period: u64,
    low: u32,
) -> u32 {
    let mut h = siphasher::sip::SipHasher24::new_with_key(key);
    h.write(&local.ip().octets());
    h.write(&local.port().to_be_bytes());
    h.write(&remote.ip().octets());
    h.write(&remote.port().to_be_bytes());
    h.write(&irs.get().to_be_bytes());
    h.write(&period.to_be_bytes());
    h.write(&low.to_be_bytes());
    (h.finish() as u32) & 0x00ff_ffff
}

/// The ISN of a SYN,ACK answering a SYN (`irs` its sequence number) at `now_s` seconds.
pub(crate) fn encode(
    key: &[u8; 16],
    now_s: u64,
    local: SocketAddrV4,
    remote: SocketAddrV4,
    irs: SeqNum,
    opts: CookieOptions,
) -> SeqNum {
    let p = period(now_s);
    let low = ((p & 1) as u32) << 7 | opts.bits();
    SeqNum::new(mac(key, local, remote, irs, p, low) << 8 | low)
}

/// The options a valid cookie carries, if `ack` (the ACK field of the handshake's third
/// segment, the cookie plus one) answers a SYN with sequence number `irs` from `remote` made
/// in this period or the last.
pub(crate) fn decode(
    key: &[u8; 16],
    now_s: u64,
    local: SocketAddrV4,
    remote: SocketAddrV4,
    irs: SeqNum,
    ack: SeqNum,
) -> Option<CookieOptions> {
    let cookie = (ack - 1u32).get();
    let low = cookie & 0xff;
    let odd = u64::from(low >> 7);
    let now = period(now_s);
    // The period with the cookie's parity: this one or the one before.
    let p = if now & 1 == odd {
        now
    } else {
        now.checked_sub(1)?
    };
    (mac(key, local, remote, irs, p, low) == cookie >> 8).then(|| CookieOptions::from_bits(low))
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::Ipv4Addr;

    const KEY: [u8; 16] = [9; 16];
    fn ends() -> (SocketAddrV4, SocketAddrV4) {
        (
            SocketAddrV4::new(Ipv4Addr::new(198, 18, 0, 1), 80),
            SocketAddrV4::new(Ipv4Addr::new(198, 18, 0, 2), 40000),
        )
    }

    #[test]
    fn rfc4987_3_6_a_cookie_round_trips_its_options_within_two_periods() {
        let (l, r) = ends();
        let irs = SeqNum::new(123_456);
        for (mss, ws, sack) in [
            (Some(1460), Some(7), true),
            (None, None, false),
            (Some(9000), Some(14), true),
            (Some(100), Some(0), false),
        ] {
            let o = CookieOptions::from_syn(mss, ws, sack);
            let iss = encode(&KEY, 1000, l, r, irs, o);
            for later in [0, 5, PERIOD_S] {
                assert_eq!(decode(&KEY, 1000 + later, l, r, irs, iss + 1u32), Some(o));
            }
            // Two periods on, or from elsewhere, or for another SYN: refused.
            assert_eq!(
                decode(&KEY, 1000 + 2 * PERIOD_S + 1, l, r, irs, iss + 1u32),
                None
            );
            let other = SocketAddrV4::new(*r.ip(), 40001);
            assert_eq!(decode(&KEY, 1000, l, other, irs, iss + 1u32), None);
            assert_eq!(decode(&KEY, 1000, l, r, irs + 1u32, iss + 1u32), None);
            assert_eq!(decode(&[8; 16], 1000, l, r, irs, iss + 1u32), None);
        }
    }

    #[test]
    fn options_round_down_to_what_a_cookie_carries() {
        let o = CookieOptions::from_syn(Some(1400), Some(7), true);
        assert_eq!((o.mss, o.window_scale), (1400, Some(6)));
        let o = CookieOptions::from_syn(Some(1459), Some(3), false);
        assert_eq!((o.mss, o.window_scale), (1452, Some(2)));
        let o = CookieOptions::from_syn(Some(64), None, false);
        assert_eq!((o.mss, o.window_scale), (216, None));
    }

    #[test]
    fn guessing_a_cookie_almost_never_succeeds() {
        let (l, r) = ends();
        let irs = SeqNum::new(7);
        let hits = (0..200_000u32)
            .filter(|&g| {
                decode(
                    &KEY,
                    500,
                    l,
                    r,
                    irs,
                    SeqNum::new(g.wrapping_mul(2654435761)),
                )
                .is_some()
            })
            .count();
        // 2^-24 per guess: about 0.01 expected in 200,000.
        assert!(hits <= 1, "{hits} guesses accepted");
    }
}
