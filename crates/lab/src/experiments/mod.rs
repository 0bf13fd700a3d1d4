//! The experiments, one directory each: the module (plan, run, judge, render), its
//! scenario file (embedded, and written next to the experiment's plots so `ackclock sim` can
//! rerun it) and the claims it checks.

use crate::suite::{Legacy, Runnable};

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

/// Every experiment, in report order.
pub fn experiments() -> Vec<Box<dyn Runnable>> {
    let mut v: Vec<Box<dyn Runnable>> = vec![
        Box::new(Legacy(e01_startup::Startup)),
        Box::new(e07_fast_recovery::FastRecovery),
    ];
    v.push(Box::new(Legacy(e02_rto_timer::RtoTimer)));
    v.push(Box::new(Legacy(e03_overload::Overload)));
    v.push(Box::new(Legacy(e04_four_conversations::FourConversations)));
    v.push(Box::new(Legacy(e11_aimd_fairness::AimdFairness)));
    v.push(Box::new(Legacy(e05_satnet::Satnet)));
    v.push(Box::new(Legacy(e06_satnet_trace::SatnetTrace)));
    v.push(Box::new(Legacy(e08_fat_pipes::FatPipes)));
    v.push(Box::new(Legacy(e13_buffer_sizing::BufferSizing)));
    v.push(Box::new(Legacy(e09_ethernet::Ethernet)));
    v.push(Box::new(Legacy(e10_ack_avoidance::AckAvoidance)));
    v.push(Box::new(Legacy(e12_gateways::Gateways)));
    v.push(Box::new(Legacy(e14_units_of_work::UnitsOfWork)));
    v.sort_by_key(|e| {
        e.title()
            .ok()
            .and_then(|t| t.split('.').next().and_then(|n| n.parse::<u32>().ok()))
            .unwrap_or(99)
    });
    v
}
