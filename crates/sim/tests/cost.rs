//! The cost prediction against real runs: for every example scenario, the predicted
//! events and trace records are at least what the run produced (the budget is a bound, so
//! an error of prediction must not let a heavy run through) and not wildly more (a loose
//! bound would refuse runs that fit).

use ackclock_sim::{build, Scenario};
use std::path::Path;

fn check(path: &Path, max_ratio: f64) -> String {
    let s = Scenario::load(path).unwrap();
    let r = s.resolve().unwrap();
    let cost = s.predict_cost(&r);
    let result = build(&s, None).unwrap().run(|_| {});
    let events = result.summary.events as f64;
    let predicted = cost.event_count();
    let records: f64 = result.traces.iter().map(|t| t.len() as f64).sum();
    let predicted_records: f64 = cost.trace_records.iter().sum();
    let line = format!(
        "{}: events {events:.0} predicted {predicted:.0} ({:.2}x); trace records {records:.0} predicted {predicted_records:.0} ({:.2}x)",
        path.display(),
        predicted / events,
        predicted_records / records.max(1.0)
    );
    assert!(predicted >= events, "{line}");
    assert!(predicted <= max_ratio * events, "{line}");
    assert!(predicted_records >= records, "{line}");
    assert!(predicted_records <= max_ratio * records.max(1.0), "{line}");
    line
}

#[test]
fn predicted_cost_bounds_every_scenario_in_the_repo_within_a_small_factor() {
    let files = ackclock_testkit::repo_scenarios();
    assert!(files.len() >= 20, "{files:?}");
    for f in files {
        eprintln!("{}", check(&f, 10.0));
    }
}
