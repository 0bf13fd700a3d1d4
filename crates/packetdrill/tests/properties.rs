//! Scripts are input: whatever the text, parsing and running end with a result or an error
//! that names a line, never a panic or a hang.

use ackclock_packetdrill::profile::Profile;
use ackclock_packetdrill::{run, RunOptions, Script};
use proptest::prelude::*;

/// Lines made of the language's own pieces, shuffled and damaged: most parse, many run.
fn line() -> impl Strategy<Value = String> {
    let time = prop_oneof![
        Just("0".to_string()),
        Just("+0".to_string()),
        (0u32..3000).prop_map(|ms| format!("+{}.{:03}", ms / 1000, ms % 1000)),
        (0u32..5000).prop_map(|ms| format!("{}.{:03}", ms / 1000, ms % 1000)),
    ];
    let flags = prop::sample::select(vec!["S", "S.", ".", "F.", "R", "R.", "SF", "P.", "F"]);
    let opts = prop::sample::select(vec![
        "",
        "<mss 1460,sackOK,eol,eol>",
        "<mss 1460,nop,wscale 6,sackOK,TS val 100 ecr 0>",
        "<nop,nop,sack 1:100 200:300>",
        "<nop,nop,TS val 5 ecr 7>",
        "<eol>",
    ]);
    let packet = (
        time.clone(),
        prop::bool::ANY,
        flags,
        any::<u32>(),
        0u32..2000,
        prop::option::of(any::<u32>()),
        any::<u16>(),
        opts,
    )
        .prop_map(|(t, inbound, f, seq, len, ack, win, o)| {
            let ack = ack.map(|a| format!(" ack {a}")).unwrap_or_default();
            format!(
                "{t} {} {f} {seq}:{}({len}){ack} win {win} {o}",
                if inbound { "<" } else { ">" },
                seq.wrapping_add(len)
            )
        });
    let call = (
        time.clone(),
        prop::sample::select(vec![
            "socket(..., SOCK_STREAM, IPPROTO_TCP) = 3",
            "fcntl(3, F_SETFL, O_RDWR | O_NONBLOCK) = 0",
            "bind(3, ..., ...) = 0",
            "listen(3, 1) = 0",
            "accept(3, ..., ...) = 4",
            "connect(3, ..., ...) = -1 EINPROGRESS",
            "recv(4, ..., 1024, MSG_PEEK) = 0",
            "read(4, ..., 10) = -1 EWOULDBLOCK",
            "write(4, ..., 1000) = 1000",
            "shutdown(4, SHUT_WR) = 0",
            "close(4) = 0",
            "close(3) = 0",
            "getsockopt(3, SOL_SOCKET, SO_ERROR, [0], [4]) = 0",
            "getsockopt(4, SOL_SOCKET, SO_RCVBUF, [65700], [4]) = 0",
            "`sysctl -w net.inet.tcp.sack.enable=1`",
            "`sockstat -4 -P tcp -s | grep -c TIME_WAIT | grep 0`",
            "%{ assert tcpi_state == TCPI_LISTEN }%",
            // Profile L's forms: google/packetdrill's defaults line, sysctl -q, TCP_INFO
            // blocks on one line or several (an unclosed one too).
            "`../common/defaults.sh`",
            "`sysctl -q net.ipv4.tcp_sack=1 net.ipv4.tcp_frto=2`",
            "%{ assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd }%",
            "%{\nassert tcpi_ca_state == TCP_CA_Open\nassert 0 <= tcpi_unacked <= 4\n}%",
            "%{ assert tcpi_snd_ssthresh >= 2; assert tcpi_total_retrans == 0 }%",
            "%{\nassert tcpi_retransmits == 0",
        ]),
    )
        .prop_map(|(t, c)| format!("{t} {c}"));
    let junk = "[ -~]{0,40}";
    prop_oneof![4 => packet, 4 => call, 1 => junk]
}

proptest! {
    #![proptest_config(ackclock_testkit::proptest_config(500))]

    #[test]
    fn any_script_parses_or_fails_with_a_line_and_runs_to_an_outcome(
        lines in prop::collection::vec(line(), 0..30),
        cut in any::<prop::sample::Index>(),
        linux in any::<bool>(),
    ) {
        let mut text = lines.join("\n");
        // Sometimes cut the text anywhere (on a character boundary).
        if cut.index(4) == 0 && !text.is_empty() {
            let mut at = cut.index(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text.truncate(at);
        }
        match Script::parse("prop.pkt", &text, &["STANDARD"]) {
            Err(e) => prop_assert!(e.line >= 1 && e.line <= text.lines().count().max(1)),
            Ok(s) => {
                let opts = RunOptions {
                    profile: if linux { Profile::Linux } else { Profile::FreeBsd },
                    ..RunOptions::default()
                };
                if let Err(f) = run(&s, &opts) {
                    prop_assert!(f.line >= 1);
                }
            }
        }
    }
}
