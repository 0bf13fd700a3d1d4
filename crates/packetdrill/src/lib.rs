//! A packetdrill interpreter for the ackclock TCP engine.
//!
//! [packetdrill](https://github.com/google/packetdrill) scripts say, line by line and in
//! time, what a peer sends, what the stack must answer and which system calls the
//! application makes. This crate runs the subset of the language that the FreeBSD TCP
//! test suite (Michael Tüxen's, BSD-2-Clause) uses against a fresh [`ackclock_tcp::Endpoint`]
//! per script, in virtual time: no sockets, no sleeping, a script of 2 s runs in
//! microseconds.
//!
//! - [`Script::parse`] reads a script (header options, `#ifdef NAME` blocks, packet
//!   lines, system calls, `` `sysctl -w` ``, `` `sysctl -q` `` and `` `sockstat ...` ``
//!   lines, `%{ assert tcpi_... }%` blocks on one line or several). Errors name the file,
//!   the line and, for an assertion, the field.
//! - [`run`] executes it with a [`profile::Profile`] and returns the first event that did
//!   not happen as written, with the packet the engine sent decoded in the script's terms.
//!
//! Two profiles say which stack a script was written for ([`profile`]):
//!
//! - **Profile F** (the default): the FreeBSD defaults the FreeBSD TCP test suite assumes,
//!   FreeBSD's option layout, NewReno/SACK recovery.
//! - **Profile L** (`RunOptions::profile = Profile::Linux`, `ackclock packetdrill --profile
//!   linux`): the defaults google/packetdrill's Linux runner sets before each script
//!   (`gtests/net/common/defaults.sh`), on top of [`ackclock_tcp::TcpConfig::linux`]: IW10,
//!   window scale 8, Linux's option order, SACK, D-SACK and timestamps, CUBIC, RACK-TLP
//!   (RFC 8985), PRR (RFC 9937), undo (RFC 3708, RFC 3522/4015) and F-RTO (RFC 5682), RTO
//!   200 ms to 120 s, no slow start after idle. The `` `../common/defaults.sh` `` line of
//!   such scripts is accepted as the profile itself.
//!
//! Linux scripts read TCP_INFO with `%{ assert tcpi_snd_cwnd == 10 }%`: the fields in
//! [`script::TCPI_FIELDS`] are derived from the engine's [`ackclock_tcp::Stats`]
//! (`tcpi_snd_cwnd` and `tcpi_snd_ssthresh` in segments, `tcpi_ca_state` 0 Open, 1
//! Disorder, 3 Recovery, 4 Loss, `tcpi_retransmits`, `tcpi_total_retrans`, `tcpi_unacked`,
//! `tcpi_reordering`, RTT and RTO in microseconds...); `tcpi_lost`, `tcpi_sacked` and
//! `tcpi_retrans` need the SACK scoreboard the engine does not expose, and are parse
//! errors. The `getsockopt(fd, SOL_TCP, TCP_INFO, {...})` form is not supported.
//!
//! Sequence numbers are mapped between the script's space and the engine's as nplab
//! packetdrill does (`run_packet.c`): the local ISN from the first SYN or SYN,ACK the
//! engine sends, the remote ISN from the first segment reaching a listener or the SYN,ACK
//! answering a connect. Outbound packets must come at their time within
//! `max(--tolerance_usecs, 5% of the time since the previous event)`, and match in flags,
//! sequence number, length, ACK, window, urgent pointer and options (kind by kind in wire
//! order; the engine's TSval is not compared, its TSecr is). Packets sent after the last event are
//! warnings, as in packetdrill.
//!
//! The tests run every script under `tests/packetdrill/` this way and write the
//! conformance table `tests/packetdrill/CONFORMANCE.md`; `ackclock packetdrill` runs
//! scripts from the command line.
//!
//! ```
//! use ackclock_packetdrill::{run_text, RunOptions};
//!
//! // A passive open: the scripted peer's SYN, the engine's SYN,ACK with profile F's
//! // options, the third ACK, and the application's accept().
//! let script = "\
//!  0.00 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
//! +0.00 bind(3, ..., ...) = 0
//! +0.00 listen(3, 1) = 0
//! +0.00 < S 0:0(0) win 65535 <mss 1460,sackOK,eol,eol>
//! +0.00 > S. 0:0(0) ack 1 win 65535 <mss 1460,sackOK,eol,eol>
//! +0.10 < . 1:1(0) ack 1 win 65535
//! +0.00 accept(3, ..., ...) = 4
//! +0.00 %{ assert tcpi_state == TCPI_ESTABLISHED }%
//! ";
//! let passed = run_text("open.pkt", script, &[], &RunOptions::default()).unwrap();
//! assert!(passed.warnings.is_empty());
//!
//! // The same script expecting another window fails at that line, saying what the engine sent.
//! let wrong = script.replace("> S. 0:0(0) ack 1 win 65535", "> S. 0:0(0) ack 1 win 1000");
//! let failure = run_text("open.pkt", &wrong, &[], &RunOptions::default()).unwrap_err();
//! assert!(failure.starts_with("open.pkt:5: live packet field tcp_window"), "{failure}");
//! ```
//!
//! Under profile L the same open gets Linux's SYN,ACK, and TCP_INFO says IW10:
//!
//! ```
//! use ackclock_packetdrill::{profile::Profile, run_text, RunOptions};
//!
//! let script = "\
//! `../common/defaults.sh`
//!  0.00 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
//! +0.00 bind(3, ..., ...) = 0
//! +0.00 listen(3, 1) = 0
//! +0.10 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>
//! +0.00 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>
//! +0.10 < . 1:1(0) ack 1 win 320
//! +0.00 accept(3, ..., ...) = 4
//! +0.00 %{
//! assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd
//! assert tcpi_ca_state == TCP_CA_Open
//! }%
//! ";
//! let opts = RunOptions { profile: Profile::Linux, ..RunOptions::default() };
//! run_text("linux.pkt", script, &[], &opts).unwrap();
//! // Profile F has another option layout.
//! assert!(run_text("linux.pkt", script, &[], &RunOptions::default()).is_err());
//! ```

#![warn(missing_docs)]

pub mod profile;
mod run;
pub mod script;

pub use run::{run, Failure, Passed, RunOptions, LOCAL_IP, PORT, REMOTE_IP};
pub use script::{ParseError, Script};

/// Parses and runs one script file's text.
///
/// # Errors
/// A parse error or the first failing event, as text ready to print.
pub fn run_text(
    name: &str,
    text: &str,
    defines: &[&str],
    opts: &RunOptions,
) -> Result<Passed, String> {
    let script = Script::parse(name, text, defines).map_err(|e| e.to_string())?;
    run(&script, opts).map_err(|f| f.to_string())
}
