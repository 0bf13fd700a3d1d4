//! RFC 7323: window scaling (§2), timestamps (§3, §4.3) and PAWS (§5).

use ackclock_tcp::{ConnectionError, State, TcpConfig};
use ackclock_testkit::peer::*;

fn ws_cfg(recv: usize) -> TcpConfig {
    TcpConfig {
        window_scale: true,
        recv_buffer_bytes: recv,
        ..cfg_unlimited()
    }
}

fn ts_cfg() -> TcpConfig {
    TcpConfig {
        timestamps: true,
        ..cfg_unlimited()
    }
}

/// Provokes an ACK from the engine (an old duplicate segment) and returns it.
fn provoke_ack(p: &mut Peer) -> Seg {
    let o = p.out(ACK).seq(p.snd_nxt.wrapping_sub(1)).payload(b"z");
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "{out:?}");
    out[0].clone()
}

// ---------------------------------------------------------------------------------------
// Window scale (§2)

#[test]
fn rfc7323_2_2_window_scale_passive_negotiated_only_when_both_syns_carry_it() {
    // 128 KiB needs a shift of 2 to fit 16 bits.
    let (p, synack) = Peer::passive(
        ws_cfg(128 * 1024),
        syn_opts(Some(1460), Some(3), false, false),
    );
    assert_eq!(synack.opts.window_scale, Some(2));
    let st = p.conn().stats();
    assert_eq!((st.snd_wscale, st.rcv_wscale), (3, 2));

    // The peer does not offer it: no option in the SYN,ACK and no scaling either way.
    let (mut p, synack) =
        Peer::passive(ws_cfg(128 * 1024), syn_opts(Some(1460), None, false, false));
    assert_eq!(synack.opts.window_scale, None);
    let st = p.conn().stats();
    assert_eq!((st.snd_wscale, st.rcv_wscale), (0, 0));
    assert_eq!(
        provoke_ack(&mut p).window,
        65535,
        "unscaled window, capped at 65535"
    );

    // We are not configured for it: the peer's offer is not answered.
    let cfg = TcpConfig {
        window_scale: false,
        ..ws_cfg(128 * 1024)
    };
    let (p, synack) = Peer::passive(cfg, syn_opts(Some(1460), Some(3), false, false));
    assert_eq!(synack.opts.window_scale, None);
    let st = p.conn().stats();
    assert_eq!((st.snd_wscale, st.rcv_wscale), (0, 0));
}

#[test]
fn rfc7323_2_2_window_scale_active_requires_it_in_the_syn_ack() {
    let (mut p, syn) = Peer::connect(ws_cfg(128 * 1024));
    assert_eq!(syn.opts.window_scale, Some(2), "our SYN offers the option");
    p.send_synack(syn_opts(Some(1460), None, false, false));
    let st = p.conn().stats();
    assert_eq!((st.snd_wscale, st.rcv_wscale), (0, 0));
    assert_eq!(provoke_ack(&mut p).window, 65535);
    // The peer's windows are taken unscaled.
    let o = p.out(ACK).window(3000);
    p.inject(&o);
    assert_eq!(p.conn().stats().snd_wnd_bytes, 3000);

    let (mut p, _) = Peer::connect(ws_cfg(128 * 1024));
    p.send_synack(syn_opts(Some(1460), Some(5), false, false));
    let st = p.conn().stats();
    assert_eq!((st.snd_wscale, st.rcv_wscale), (5, 2));
    assert_eq!(provoke_ack(&mut p).window, ((128 * 1024) >> 2) as u16);
}

#[test]
fn rfc7323_2_3_shift_above_14_is_treated_as_14() {
    let (mut p, _) = Peer::passive(
        ws_cfg(128 * 1024),
        syn_opts(Some(1460), Some(15), false, false),
    );
    assert_eq!(p.conn().stats().snd_wscale, 14);
    let o = p.out(ACK).window(3);
    p.inject(&o);
    assert_eq!(p.conn().stats().snd_wnd_bytes, 3 << 14);

    let (p, _) = Peer::passive(
        ws_cfg(128 * 1024),
        syn_opts(Some(1460), Some(255), false, false),
    );
    assert_eq!(p.conn().stats().snd_wscale, 14);
}

#[test]
fn rfc7323_2_3_our_shift_never_exceeds_14() {
    let (_, synack) = Peer::passive(ws_cfg(1 << 31), syn_opts(Some(1460), Some(7), false, false));
    assert!(synack.opts.window_scale.unwrap() <= 14);
}

#[test]
fn rfc7323_2_2_configured_shift_is_offered_whatever_the_buffer_and_scales_our_windows() {
    // FreeBSD offers the shift its largest socket buffer would need (6 for 2 MiB) while the
    // buffer is 65700 bytes, which alone would need a shift of 1.
    let cfg = TcpConfig {
        window_scale_shift: Some(6),
        ..ws_cfg(65700)
    };
    // Active open: the SYN offers 6; once the peer answers with its own shift, every
    // window we advertise is the free buffer >> 6 (RFC 7323 §2.3).
    let (mut p, syn) = Peer::connect(cfg.clone());
    assert_eq!(syn.opts.window_scale, Some(6));
    assert_eq!(syn.window, 65535, "a SYN's window is never scaled");
    p.send_synack(syn_opts(Some(1460), Some(0), false, false));
    let st = p.conn().stats();
    assert_eq!((st.snd_wscale, st.rcv_wscale), (0, 6));
    assert_eq!(provoke_ack(&mut p).window, (65700 >> 6) as u16);
    // 799 bytes received and unread: (65700 - 799) >> 6.
    p.send_data(&data(799));
    assert_eq!(provoke_ack(&mut p).window, ((65700 - 799) >> 6) as u16);

    // Passive open: the SYN-ACK answers the peer's offer with 6, its own window unscaled.
    let (mut p, synack) = Peer::passive(cfg.clone(), syn_opts(Some(1460), Some(2), false, false));
    assert_eq!(synack.opts.window_scale, Some(6));
    assert_eq!(synack.window, 65535);
    assert_eq!(p.conn().stats().rcv_wscale, 6);
    assert_eq!(provoke_ack(&mut p).window, (65700 >> 6) as u16);

    // Offered but not negotiated (the peer's SYN has no window scale): no scaling at all.
    let (mut p, syn) = Peer::connect(cfg);
    assert_eq!(syn.opts.window_scale, Some(6));
    p.send_synack(syn_opts(Some(1460), None, false, false));
    assert_eq!(p.conn().stats().rcv_wscale, 0);
    assert_eq!(provoke_ack(&mut p).window, 65535);
}

#[test]
fn rfc7323_2_3_configured_shift_above_14_is_offered_as_14() {
    let cfg = TcpConfig {
        window_scale_shift: Some(20),
        ..ws_cfg(1 << 20)
    };
    let (p, synack) = Peer::passive(cfg, syn_opts(Some(1460), Some(0), false, false));
    assert_eq!(synack.opts.window_scale, Some(14));
    assert_eq!(p.conn().stats().rcv_wscale, 14);
}

#[test]
fn rfc7323_2_2_syn_window_is_never_scaled_in_our_syn_ack() {
    // 1 MiB needs a shift of 5. The SYN,ACK window field is not scaled: 65535, not 32768.
    let (mut p, synack) =
        Peer::passive(ws_cfg(1 << 20), syn_opts(Some(1460), Some(0), false, false));
    assert_eq!(synack.opts.window_scale, Some(5));
    assert_eq!(synack.window, 65535);
    // Later segments are scaled: 1 MiB >> 5.
    assert_eq!(provoke_ack(&mut p).window, 32768);
}

#[test]
fn rfc7323_2_2_syn_window_is_never_scaled_in_their_syn() {
    // Active open: the SYN,ACK's window is taken as is even though it carries WS = 7.
    let (mut p, _) = Peer::connect(ws_cfg(128 * 1024));
    p.window = 1000;
    p.send_synack(syn_opts(Some(1460), Some(7), false, false));
    assert_eq!(p.state(), State::Established);
    assert_eq!(p.conn().stats().snd_wnd_bytes, 1000);
    let out = p.app_send(&data(5000));
    let sent: usize = out.iter().map(|s| s.payload.len()).sum();
    assert!(sent <= 1000, "sent {sent} bytes into a 1000-byte window");

    // Passive open: before the third ACK the send window is the SYN's, unscaled.
    let mut p = Peer::new();
    p.window = 1000;
    p.syn_to_listener(
        ws_cfg(128 * 1024),
        syn_opts(Some(1460), Some(7), false, false),
    );
    assert_eq!(p.conn().stats().snd_wnd_bytes, 1000);
}

#[test]
fn rfc7323_2_3_scaled_windows_apply_to_later_segments() {
    let mut p = Peer::new();
    p.syn_to_listener(
        ws_cfg(128 * 1024),
        syn_opts(Some(1000), Some(4), false, false),
    );
    // Third ACK: window field 125 << 4 = 2000 bytes: two full segments.
    p.window = 125;
    p.send_ack();
    p.id = p.ep.accept(SERVER_PORT);
    assert_eq!(p.conn().stats().snd_wnd_bytes, 2000);
    let out = p.app_send(&data(10_000));
    let sent: usize = out.iter().map(|s| s.payload.len()).sum();
    assert_eq!(sent, 2000, "{out:?}");
    // The engine's own window field is scaled by its shift (2 for 128 KiB).
    let o = p.out(ACK | PSH).payload(&data(100));
    p.snd_nxt += 100;
    p.inject(&o);
    let out = p.advance(secs(1));
    let (_, a) = out.first().expect("an ACK of the data");
    assert_eq!(a.ack, p.snd_nxt);
    assert_eq!(u32::from(a.window), (128 * 1024 - 100) >> 2);
}

// ---------------------------------------------------------------------------------------
// Timestamps (§3, §4)

#[test]
fn rfc7323_3_2_timestamps_negotiated_only_if_both_syns_carry_them() {
    // Passive, offered: the SYN,ACK echoes the SYN's TSval.
    let mut p = Peer::new();
    let synack = p.syn_to_listener(ts_cfg(), syn_opts(Some(1460), None, false, true));
    let ts = synack.opts.timestamps.expect("SYN,ACK carries TS");
    assert_eq!(ts.tsecr, p.ts_now());
    assert!(p.conn().stats().timestamps_enabled);

    // Passive, not offered: no TS in the SYN,ACK nor later.
    let (mut p, synack) = Peer::passive(ts_cfg(), syn_opts(Some(1460), None, false, false));
    assert_eq!(synack.opts.timestamps, None);
    assert!(!p.conn().stats().timestamps_enabled);
    let out = p.app_send(b"hello");
    assert_eq!(out[0].opts.timestamps, None);

    // Passive, offered but we are not configured for it.
    let (p, synack) = Peer::passive(cfg_unlimited(), syn_opts(Some(1460), None, false, true));
    assert_eq!(synack.opts.timestamps, None);
    assert!(!p.conn().stats().timestamps_enabled);

    // Active: our SYN offers TS with TSecr 0; a SYN,ACK without TS turns them off.
    let (mut p, syn) = Peer::connect(ts_cfg());
    assert_eq!(syn.opts.timestamps.map(|t| t.tsecr), Some(0));
    let out = p.send_synack(syn_opts(Some(1460), None, false, false));
    assert_eq!(out[0].opts.timestamps, None);
    assert!(!p.conn().stats().timestamps_enabled);
    let out = p.app_send(b"hello");
    assert_eq!(out[0].opts.timestamps, None);
}

#[test]
fn rfc7323_3_2_every_non_rst_segment_carries_timestamps() {
    let (mut p, _) = Peer::passive(ts_cfg(), syn_opts(Some(1460), None, false, true));
    assert!(p.ts);
    let mut seen = Vec::new();
    // Data, a retransmission, pure ACKs, a delayed ACK, a window update, a FIN.
    seen.extend(p.app_send(&data(3000)));
    seen.extend(p.advance(secs(2)).into_iter().map(|(_, s)| s));
    p.absorb(&seen);
    seen.extend(p.send_ack());
    seen.extend(p.send_data(&data(10)));
    seen.extend(p.advance(secs(1)).into_iter().map(|(_, s)| s));
    seen.extend(p.send_data(&data(1460)));
    seen.extend(p.send_data(&data(1460)));
    p.app_read();
    seen.extend(p.drain());
    p.conn_mut().close().unwrap();
    seen.extend(p.drain());
    assert!(seen.iter().any(|s| s.has(FIN)));
    assert!(seen.iter().any(|s| s.is_pure_ack()));
    assert!(seen.len() >= 6);
    for s in &seen {
        assert!(s.opts.timestamps.is_some(), "segment without TS: {s:?}");
    }
}

#[test]
fn rfc7323_4_3_tsecr_echoes_ts_recent() {
    let (mut p, _) = Peer::passive(ts_cfg(), syn_opts(Some(1460), None, false, true));
    p.now += ms(50);
    let tsval = p.ts_now();
    p.send_data(&data(100));
    let out = p.advance(secs(1));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].1.tsecr(), Some(tsval));
    // And the engine's data segments echo it too.
    let out = p.app_send(b"reply");
    assert_eq!(out[0].tsecr(), Some(tsval));
}

#[test]
fn rfc7323_4_3_delayed_ack_echoes_the_earliest_unacknowledged_tsval() {
    let (mut p, _) = Peer::passive(ts_cfg(), syn_opts(Some(1460), None, false, true));
    let full = p.conn().stats().snd_mss as usize;
    assert_eq!(full, 1448);
    let t1 = p.ts_now() + 10;
    let o = p.out(ACK).payload(&data(full)).tsval(t1);
    p.snd_nxt += full as u32;
    assert!(
        p.inject(&o).is_empty(),
        "the first segment's ACK is delayed"
    );
    let o = p.out(ACK).payload(&data(full)).tsval(t1 + 50);
    p.snd_nxt += full as u32;
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "ACK of two full segments: {out:?}");
    assert_eq!(out[0].ack, p.snd_nxt);
    assert_eq!(
        out[0].tsecr(),
        Some(t1),
        "(2): TS.Recent is the earliest unACKed TSval"
    );
}

#[test]
fn rfc7323_4_3_out_of_order_segment_does_not_update_ts_recent() {
    let (mut p, _) = Peer::passive(ts_cfg(), syn_opts(Some(1460), None, false, true));
    let recent = p.ts_now();
    // A segment past a hole with a much newer TSval: the duplicate ACK echoes the old one.
    let o = p
        .out(ACK)
        .seq(p.snd_nxt + 1000)
        .payload(&data(100))
        .tsval(recent + 1_000);
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].ack, p.snd_nxt);
    assert_eq!(out[0].tsecr(), Some(recent));
}

#[test]
fn rfc7323_5_3_paws_drops_old_tsval_and_acks() {
    let (mut p, _) = Peer::passive(ts_cfg(), syn_opts(Some(1460), None, false, true));
    p.now += ms(100);
    p.send_data(&data(10));
    p.advance(secs(1));
    let recent = p.ts_now() - 1000;
    let rcv = p.engine_rcv_nxt();
    // An in-window segment whose TSval is older than TS.Recent: R1, send an ACK and drop.
    let o = p
        .out(ACK | PSH)
        .payload(b"old duplicate")
        .tsval(recent - 50);
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].is_pure_ack());
    assert_eq!(out[0].ack, rcv);
    assert_eq!(p.engine_rcv_nxt(), rcv, "the segment was dropped");
    assert_eq!(p.app_read(), data(10));
    assert_eq!(p.conn().stats().paws_drops, 1);
    // The same bytes with a current TSval are accepted.
    let o = p.out(ACK | PSH).payload(b"new");
    p.snd_nxt += 3;
    p.inject(&o);
    assert_eq!(p.engine_rcv_nxt(), rcv + 3);
}

#[test]
fn rfc7323_5_3_paws_does_not_apply_to_rst() {
    let (mut p, _) = Peer::passive(ts_cfg(), syn_opts(Some(1460), None, false, true));
    p.now += ms(100);
    p.send_data(&data(10));
    let o = p.out(RST).tsval(1);
    p.inject(&o);
    assert_eq!(p.state(), State::Closed);
    assert_eq!(p.conn().error(), Some(ConnectionError::Reset));
}

#[test]
fn rfc7323_3_2_non_rst_segment_without_timestamps_is_dropped() {
    let (mut p, _) = Peer::passive(ts_cfg(), syn_opts(Some(1460), None, false, true));
    let rcv = p.engine_rcv_nxt();
    let o = p.out(ACK | PSH).payload(b"no timestamps").no_ts();
    let out = p.inject(&o);
    assert!(out.is_empty(), "silently dropped: {out:?}");
    assert_eq!(p.engine_rcv_nxt(), rcv);
    assert!(p.app_read().is_empty());
    // A FIN without TS is not processed either.
    let o = p.out(FIN | ACK).no_ts();
    p.inject(&o);
    assert_eq!(p.state(), State::Established);
}

#[test]
fn rfc7323_3_2_rst_without_timestamps_is_processed() {
    let (mut p, _) = Peer::passive(ts_cfg(), syn_opts(Some(1460), None, false, true));
    let o = p.out(RST).no_ts();
    p.inject(&o);
    assert_eq!(p.state(), State::Closed);
    assert_eq!(p.conn().error(), Some(ConnectionError::Reset));
}

#[test]
fn rfc7323_3_2_syn_ack_tsecr_is_the_syn_tsval() {
    let mut p = Peer::new();
    let o = syn_opts(Some(1460), None, false, true);
    p.now += ms(1234);
    let synack = p.syn_to_listener(ts_cfg(), o);
    assert_eq!(
        synack.opts.timestamps.map(|t| t.tsecr),
        Some(p.ts_now()),
        "{:?}",
        synack.opts
    );
}
