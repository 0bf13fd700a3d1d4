//! The experiments, one directory each: the module (the four phases of
//! [`Experiment`](crate::Experiment)), its scenario file (embedded, and written next to the
//! experiment's plots so `ackclock sim` can rerun it), the claims it checks (`claims.toml`)
//! and its prose (`text.md`).

use crate::suite::Runnable;

mod e01_startup;
mod e02_rto_timer;
mod e03_overload;
mod e04_four_conversations;
mod e05_satnet;
mod e06_satnet_trace;
mod e07_fast_recovery;
mod e08_fat_pipes;
mod e09_ethernet;
mod e10_ack_avoidance;
mod e11_aimd_fairness;
mod e12_gateways;
mod e13_buffer_sizing;
mod e14_units_of_work;
mod e15_bit_vs_drop;
mod e16_self_protection;
mod e17_ecn_short_transfers;
mod e18_connectionless;
mod e19_adaptive_increase;
mod e20_dupack_limits;
mod e21_rate_based;

/// Every experiment, in report order.
pub fn experiments() -> Vec<Box<dyn Runnable>> {
    let mut v: Vec<Box<dyn Runnable>> = vec![
        Box::new(e01_startup::Startup),
        Box::new(e02_rto_timer::RtoTimer),
        Box::new(e03_overload::Overload),
        Box::new(e04_four_conversations::FourConversations),
        Box::new(e05_satnet::Satnet),
        Box::new(e06_satnet_trace::SatnetTrace),
        Box::new(e07_fast_recovery::FastRecovery),
        Box::new(e08_fat_pipes::FatPipes),
        Box::new(e09_ethernet::Ethernet),
        Box::new(e10_ack_avoidance::AckAvoidance),
        Box::new(e11_aimd_fairness::AimdFairness),
        Box::new(e12_gateways::Gateways),
        Box::new(e13_buffer_sizing::BufferSizing),
        Box::new(e14_units_of_work::UnitsOfWork),
        Box::new(e15_bit_vs_drop::BitVsDrop),
        Box::new(e16_self_protection::SelfProtection),
        Box::new(e17_ecn_short_transfers::EcnShortTransfers),
        Box::new(e18_connectionless::Connectionless),
        Box::new(e19_adaptive_increase::AdaptiveIncrease),
        Box::new(e20_dupack_limits::DupackLimits),
        Box::new(e21_rate_based::RateBased),
    ];
    // Report order is the number in each title (the seed messages' order), not the directory's.
    v.sort_by_key(|e| {
        e.title()
            .ok()
            .and_then(|t| t.split('.').next().and_then(|n| n.parse::<u32>().ok()))
            .unwrap_or(99)
    });
    v
}
