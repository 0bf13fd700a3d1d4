//! The body of the `capture` fuzz target (`crates/analyze/fuzz`), here so that the property
//! tests run the same check on stable.

use crate::{analyze, figures, report};

/// Any bytes, read as a pcap file: the analysis is an error or a result whose text, CSV,
/// JSON and figure data can all be made, without a panic.
pub fn capture(data: &[u8]) {
    let Ok(a) = analyze(data) else {
        return;
    };
    let _ = report::text(&a);
    let _ = report::csv(&a);
    serde_json::to_string(&a).expect("an analysis serialises");
    for c in &a.connections {
        for d in 0..2 {
            let _ = figures::charts(c, d);
        }
    }
}
