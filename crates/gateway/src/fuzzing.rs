//! Body of the trace fuzz target (`crates/gateway/fuzz`), kept in the library so that a
//! property test runs the same check on stable Rust in CI. Any text must either be a
//! delivery trace or an error that names a line within the text; a trace that reads must
//! serve packets with delivery times that never go back and never precede readiness.

use crate::trace::{DeliveryTrace, TraceLink};
use ackclock_wire::{Duration, Instant};

/// One input of the fuzz target: `data` (UTF-8, invalid bytes replaced) read as a trace,
/// once repeating and once run once, then 64 packets of sizes and gaps taken from the bytes
/// pushed through it. Panics when a property does not hold (that is the finding).
pub fn trace(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for repeat in [true, false] {
        match DeliveryTrace::parse(&text, repeat) {
            Err(e) => assert!(
                e.line <= text.lines().count(),
                "line {} of {}",
                e.line,
                text.lines().count()
            ),
            Ok(t) => {
                let mut link = TraceLink::new(t);
                let mut ready = Instant::ZERO;
                for (k, &b) in data.iter().cycle().take(64).enumerate() {
                    let bytes = 1 + usize::from(b) * 12;
                    let gap = Duration::from_micros(u64::from(b) * (k as u64 % 7) * 100);
                    let want = ready + gap;
                    match link.transmit(want, bytes) {
                        Some(at) => {
                            assert!(at >= want, "delivered at {at:?} before ready {want:?}");
                            ready = at;
                        }
                        None => {
                            assert!(!repeat, "a repeating trace always delivers");
                            break;
                        }
                    }
                }
            }
        }
    }
}
