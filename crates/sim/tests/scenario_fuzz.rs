//! Bad scenario files get an error naming the file, never a panic or an allocation failure:
//! the fuzz target's check (`ackclock_sim::fuzzing::scenario`) on every scenario in the repo
//! with one value made extreme, a line deleted, or the text cut short.

use proptest::prelude::*;

fn scenario_texts() -> Vec<String> {
    // The examples in scenarios/ and each reproduction experiment's scenario.
    let v: Vec<String> = ackclock_testkit::repo_scenarios()
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(v.len() >= 15, "{} scenario files", v.len());
    v
}

/// Byte ranges of the numbers written after `=` or in arrays (outside comments).
fn numbers(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut v = Vec::new();
    let mut off = 0;
    for line in text.split_inclusive('\n') {
        let code = line.split('#').next().unwrap_or("");
        let b = code.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let starts = (b[i].is_ascii_digit() || b[i] == b'-')
                && (i == 0 || matches!(b[i - 1], b' ' | b'=' | b'[' | b','));
            if starts {
                let j = (i + 1..b.len())
                    .find(|&j| !(b[j].is_ascii_alphanumeric() || b".+-_".contains(&b[j])))
                    .unwrap_or(b.len());
                v.push(off + i..off + j);
                i = j;
            } else {
                i += 1;
            }
        }
        off += line.len();
    }
    v
}

const EXTREMES: [&str; 12] = [
    "0",
    "-1",
    "1e300",
    "-1e300",
    "nan",
    "inf",
    "18446744073709551615",
    "4294967296",
    "1e-12",
    "1000000000000000",
    "0.5",
    "9223372036854775807",
];

proptest! {
    #![proptest_config(ackclock_testkit::proptest_config(600))]

    #[test]
    fn mutated_scenarios_are_errors_or_scenarios_never_panics(
        file in 0usize..64,
        kind in 0u8..3,
        pick in any::<u32>(),
        value in 0usize..EXTREMES.len(),
    ) {
        let texts = scenario_texts();
        let text = &texts[file % texts.len()];
        let mutated = match kind {
            0 => {
                let nums = numbers(text);
                let r = nums[pick as usize % nums.len()].clone();
                format!("{}{}{}", &text[..r.start], EXTREMES[value], &text[r.end..])
            }
            1 => {
                let lines: Vec<&str> = text.lines().collect();
                let k = pick as usize % lines.len();
                lines.iter().enumerate().filter(|(i, _)| *i != k).map(|(_, l)| *l).collect::<Vec<_>>().join("\n")
            }
            _ => {
                let mut cut = pick as usize % text.len();
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text[..cut].to_string()
            }
        };
        // FUZZ_SHOW=1 names each case on stderr: the last one shown before an abort (which
        // proptest cannot catch) is the culprit.
        if std::env::var_os("FUZZ_SHOW").is_some() {
            eprintln!("CASE file {file} kind {kind} pick {pick} value {value}");
        }
        ackclock_sim::fuzzing::scenario(mutated.as_bytes());
    }
}

#[test]
fn every_scenario_in_the_repo_passes_the_fuzz_check() {
    for t in scenario_texts() {
        ackclock_sim::fuzzing::scenario(t.as_bytes());
    }
}
