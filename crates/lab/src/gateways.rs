//! The gateway queues the experiments put at their bottleneck, each kind with its parameters
//! and its name in the tables and legends, written once as a scenario file spells it: the
//! experiments that compare gateways (gateways, bit_vs_drop, self_protection,
//! ecn_short_transfers, connectionless) differ only in the buffer and in RED's max_p.

use ackclock_gateway::QdiscConfig;
use ackclock_sim::scenario::Topology;
use ackclock_sim::Scenario;
use anyhow::{anyhow, Result};

/// A kind of gateway queue and the parameters the experiments give it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Queue {
    /// Drop-tail: a packet that arrives at a full buffer is dropped.
    DropTail,
    /// Drops a packet chosen at random from the queue when it is full (seed 003's "random
    /// drop").
    RandomDrop,
    /// RED (Floyd and Jacobson 1993) with min_th 5 and max_th 15 packets (Floyd's max_th =
    /// 3 min_th), w_q 0.002, and this max_p.
    Red {
        /// The drop (or mark) probability at max_th, where RED's probability ramp ends.
        max_p: f64,
    },
    /// Deficit round robin (Shreedhar and Varghese 1995).
    Drr,
    /// CoDel with RFC 8289's target 5 ms and interval 100 ms.
    Codel,
    /// FQ-CoDel (RFC 8290) with CoDel's target and interval.
    FqCodel,
    /// Ramakrishnan and Jain's gateway: the bit while the average queue over the last
    /// regeneration cycle is at least one packet.
    DecBit,
}

impl Queue {
    /// Its name in the tables and legends.
    pub fn label(self) -> &'static str {
        match self {
            Queue::DropTail => "drop-tail",
            Queue::RandomDrop => "random drop",
            Queue::Red { .. } => "RED",
            Queue::Drr => "DRR",
            Queue::Codel => "CoDel",
            Queue::FqCodel => "FQ-CoDel",
            Queue::DecBit => "DEC bit",
        }
    }

    /// Its `kind` in a scenario file.
    fn kind(self) -> &'static str {
        match self {
            Queue::DropTail => "drop_tail",
            Queue::RandomDrop => "random_drop",
            Queue::Red { .. } => "red",
            Queue::Drr => "drr",
            Queue::Codel => "codel",
            Queue::FqCodel => "fq_codel",
            Queue::DecBit => "dec_bit",
        }
    }

    /// The queue as a scenario file spells it, with `limit_pkts` packets of buffer; with
    /// `ecn`, marking ECN-capable packets instead of dropping them early (RFC 3168 §5).
    pub fn toml(self, limit_pkts: usize, ecn: bool) -> String {
        let mut s = format!("kind = \"{}\"\nlimit_pkts = {limit_pkts}", self.kind());
        match self {
            Queue::Red { max_p } => s.push_str(&format!(
                "\nmin_th_pkts = 5.0\nmax_th_pkts = 15.0\nmax_p = {max_p}\nw_q = 0.002"
            )),
            Queue::Codel | Queue::FqCodel => s.push_str("\ntarget_ms = 5.0\ninterval_ms = 100.0"),
            Queue::DropTail | Queue::RandomDrop | Queue::Drr | Queue::DecBit => {}
        }
        if ecn {
            s.push_str("\necn = true");
        }
        s
    }

    /// The queue's configuration, as [`toml`](Self::toml) spells it; an error for `ecn` on a
    /// kind that cannot mark.
    pub fn config(self, limit_pkts: usize, ecn: bool) -> Result<QdiscConfig> {
        toml::from_str(&self.toml(limit_pkts, ecn)).map_err(|e| anyhow!("{}: {e}", self.label()))
    }
}

/// Puts `q` at the bottleneck of a dumbbell scenario, in the direction of the data (left to
/// right); `experiment` names the experiment in the error for any other topology.
pub fn set_bottleneck(s: &mut Scenario, q: QdiscConfig, experiment: &str) -> Result<()> {
    match s.topology.as_mut() {
        Some(Topology::Dumbbell { bottleneck, .. }) => {
            bottleneck.queue_ab = Some(q);
            Ok(())
        }
        _ => Err(anyhow!("{experiment}: the scenario is not a dumbbell")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The configurations are those the experiments spelled out before this list existed:
    /// the same TOML gives the same queue, field for field.
    #[test]
    fn each_kind_parses_to_the_queue_its_toml_spells() {
        let cases: [(Queue, usize, bool, &str); 9] = [
            (Queue::DropTail, 100, false, "kind = \"drop_tail\"\nlimit_pkts = 100"),
            (Queue::RandomDrop, 34, false, "kind = \"random_drop\"\nlimit_pkts = 34"),
            (
                Queue::Red { max_p: 0.02 },
                100,
                false,
                "kind = \"red\"\nlimit_pkts = 100\nmin_th_pkts = 5.0\nmax_th_pkts = 15.0\nmax_p = 0.02\nw_q = 0.002",
            ),
            (
                Queue::Red { max_p: 0.1 },
                100,
                true,
                "kind = \"red\"\nlimit_pkts = 100\nmin_th_pkts = 5.0\nmax_th_pkts = 15.0\nmax_p = 0.1\nw_q = 0.002\necn = true",
            ),
            (Queue::Drr, 34, false, "kind = \"drr\"\nlimit_pkts = 34"),
            (
                Queue::Codel,
                100,
                true,
                "kind = \"codel\"\nlimit_pkts = 100\ntarget_ms = 5.0\ninterval_ms = 100.0\necn = true",
            ),
            (
                Queue::FqCodel,
                34,
                false,
                "kind = \"fq_codel\"\nlimit_pkts = 34\ntarget_ms = 5.0\ninterval_ms = 100.0",
            ),
            (Queue::DecBit, 100, false, "kind = \"dec_bit\"\nlimit_pkts = 100"),
            (Queue::DropTail, 50, false, "kind = \"drop_tail\"\nlimit_pkts = 50"),
        ];
        for (q, limit, ecn, spelled) in cases {
            assert_eq!(q.toml(limit, ecn), spelled);
            let want: QdiscConfig = toml::from_str(spelled).unwrap();
            assert_eq!(q.config(limit, ecn).unwrap(), want);
        }
    }

    /// A kind that cannot mark refuses ECN rather than dropping as if it had been asked not to.
    #[test]
    fn ecn_on_a_kind_that_cannot_mark_is_an_error() {
        assert!(Queue::DropTail.config(100, true).is_err());
        assert!(Queue::Red { max_p: 0.1 }.config(100, true).is_ok());
    }
}
