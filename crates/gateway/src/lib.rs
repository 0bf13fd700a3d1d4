//! `ackclock-gateway`: what sits on a path (docs/ARCHITECTURE.md). Used by the discrete-event
//! simulator and by the live real-time emulator, so it never reads a clock (time is passed
//! in as [`Instant`](ackclock_wire::Instant)), never does I/O, and allocates nothing per
//! packet: every queue is preallocated to its configured limit when it is built.
//!
//! - [`packet`]: [`PacketLike`], what a gateway needs from a packet; [`TestPacket`]; raw
//!   IPv4 buffers (`Vec<u8>`).
//! - [`qdisc`]: queue disciplines behind one object-safe trait [`Qdisc`], built from a
//!   serializable [`QdiscConfig`]: drop-tail, random drop (seed 003's "random" gateway),
//!   RED, DRR fair queueing, CoDel, FQ-CoDel, the DEC-bit gateway.
//! - [`link`]: [`Link`], a serializer at a rate with framing overhead, and a propagation
//!   delay.
//! - [`impair`]: [`Impairments`], seeded loss (Bernoulli, Gilbert-Elliott), bit errors that
//!   really flip a bit, scripted drops for exact mechanism tests, reordering, duplication.
//! - [`stats`]: [`QueueStats`], counters and a fixed-memory delay histogram.
//! - [`trace`]: [`TraceLink`], a link whose capacity a Mahimahi delivery trace gives.
//!
//! A gateway on a path, as the simulator drives it: a drop-tail queue of two packets in
//! front of a 10 Mb/s Ethernet link with 1 ms of propagation delay.
//!
//! ```
//! use ackclock_gateway::{DropReason, DropTailConfig, Enqueue, Link, LinkConfig};
//! use ackclock_gateway::{Qdisc, QdiscConfig, TestPacket};
//! use ackclock_wire::{Duration, Instant};
//!
//! // The queue as a scenario file writes it; `build` checks it and preallocates it.
//! let cfg: QdiscConfig = toml::from_str("kind = \"drop_tail\"\nlimit_pkts = 2")?;
//! assert_eq!(cfg, QdiscConfig::DropTail(DropTailConfig::packets(2)));
//! let mut q: Box<dyn Qdisc<TestPacket>> = cfg.build(1)?;
//! let mut link = Link::new(&LinkConfig::ethernet_10mbps(1.0))?;
//!
//! // Three 1500-byte packets arrive at once: the third finds the queue full.
//! let t0 = Instant::ZERO;
//! assert_eq!(q.enqueue(t0, TestPacket::new(0, 0, 1500)), Enqueue::Queued);
//! assert_eq!(q.enqueue(t0, TestPacket::new(1, 0, 1500)), Enqueue::Queued);
//! match q.enqueue(t0, TestPacket::new(2, 0, 1500)) {
//!     Enqueue::Dropped(p, DropReason::Overflow) => assert_eq!(p.id, 2),
//!     other => panic!("{other:?}"),
//! }
//!
//! // The link is idle, so the first packet leaves now: 1500 + 38 bytes of Ethernet
//! // framing take 1230.4 us at 10 Mb/s, and the last bit arrives 1 ms later.
//! let first = q.dequeue(t0, &mut |_, _| {}).unwrap();
//! let (free_at, arrives_at) = link.transmit(t0, first.len);
//! assert_eq!(free_at, t0 + Duration::from_nanos(1_230_400));
//! assert_eq!(arrives_at, free_at + Duration::from_millis(1));
//!
//! // The driver asks the queue for the next packet when the serializer is free.
//! let second = q.dequeue(free_at, &mut |_, _| {}).unwrap();
//! let (free_at, arrives_at) = link.transmit(free_at, second.len);
//! assert_eq!(free_at.as_nanos(), 2 * 1_230_400);
//! assert_eq!(arrives_at.as_nanos(), 2 * 1_230_400 + 1_000_000);
//!
//! // The second packet waited in the queue while the first was sent.
//! let s = q.stats();
//! assert_eq!((s.arrived, s.dequeued, s.dropped()), (3, 2, 1));
//! assert_eq!(s.delay_quantile(1.0), Some(Duration::from_nanos(1_230_400)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod error;
pub mod fuzzing;
pub mod impair;
pub mod link;
pub mod packet;
pub mod qdisc;
pub mod stats;
pub mod trace;

pub use error::ConfigError;
pub use impair::{
    Bernoulli, BitErrors, GilbertElliott, GilbertElliottConfig, ImpairmentConfig, ImpairmentStats,
    Impairments, ImpairmentsConfig, LossCause, ReorderConfig, ScriptedDrop, Verdict,
};
pub use link::{Link, LinkConfig, LinkStats, ETHERNET_FRAMING_BYTES, ETHERNET_MIN_WIRE_BYTES};
pub use packet::{flow_id_of_ipv4, ipv4_ecn_capable, ipv4_set_ce, PacketLike, TestPacket};
pub use qdisc::{
    Codel, CodelConfig, CodelParams, CodelVars, DecBitGateway, DecBitGatewayConfig, DropReason,
    DropTail, DropTailConfig, Drr, DrrConfig, Enqueue, FqCodel, FqCodelConfig, Qdisc, QdiscConfig,
    RandomDrop, RandomDropConfig, Red, RedConfig, DEFAULT_DROP_TAIL,
};
pub use stats::{DelayHistogram, QueueStats, QueueSummary};
pub use trace::{DeliveryTrace, TraceError, TraceLink, OPPORTUNITY_BYTES};
