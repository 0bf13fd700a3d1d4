//! `ackclock-gateway`: what sits on a path (docs/ARCHITECTURE.md). Used by the discrete-event
//! simulator and by the live real-time emulator, so it never reads a clock (time is passed
//! in as [`Instant`](ackclock_wire::Instant)), never does I/O, and allocates nothing per
//! packet: every queue is preallocated to its configured limit when it is built.
//!
//! - [`packet`]: [`PacketLike`], what a gateway needs from a packet; [`TestPacket`]; raw
//!   IPv4 buffers (`Vec<u8>`).
//! - [`qdisc`]: queue disciplines behind one object-safe trait [`Qdisc`], built from a
//!   serializable [`QdiscConfig`]: drop-tail, random drop (seed 003's "random" gateway),
//!   RED, DRR fair queueing, CoDel, FQ-CoDel.
//! - [`link`]: [`Link`], a serializer at a rate with framing overhead, and a propagation
//!   delay.
//! - [`impair`]: [`Impairments`], seeded loss (Bernoulli, Gilbert-Elliott), bit errors that
//!   really flip a bit, scripted drops for exact mechanism tests, reordering, duplication.
//! - [`stats`]: [`QueueStats`], counters and a fixed-memory delay histogram.
//!
//! A gateway on a path, as the simulator drives it:
//!
//! ```
//! use ackclock_gateway::{Link, LinkConfig, QdiscConfig, Qdisc, TestPacket, Enqueue};
//! use ackclock_wire::Instant;
//!
//! let cfg: QdiscConfig = toml::from_str("kind = \"drop_tail\"\nlimit_pkts = 2").unwrap();
//! let mut q: Box<dyn Qdisc<TestPacket>> = cfg.build(1).unwrap();
//! let mut link = Link::new(&LinkConfig::ethernet_10mbps(1.0)).unwrap();
//! let now = Instant::ZERO;
//! for id in 0..3 {
//!     if let Enqueue::Dropped(p, why) = q.enqueue(now, TestPacket::new(id, 0, 1500)) {
//!         println!("dropped {} ({})", p.id, why.as_str());
//!     }
//! }
//! let p = q.dequeue(now, &mut |_, _| {}).unwrap();
//! let (link_free_at, arrives_at) = link.transmit(now, p.len);
//! assert_eq!(link_free_at.as_nanos(), 1_230_400);
//! assert_eq!(arrives_at.as_nanos(), 1_230_400 + 1_000_000);
//! ```

mod error;
pub mod impair;
pub mod link;
pub mod packet;
pub mod qdisc;
pub mod stats;

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
