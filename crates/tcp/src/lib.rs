//! `ackclock-tcp`: the sans-IO TCP engine (see DESIGN.md).
//!
//! Time is passed in; packets go in through `handle_segment` and come out of
//! `poll_transmit`. Nothing here reads a clock or does I/O.

pub mod rtt;
pub mod seq;

pub use seq::SeqNum;
