//! Claims: what a seed or paper says, as written in an experiment's `claims.toml`, and the
//! judging of each against our number.

use crate::suite::{ClaimResult, Verdict};
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

/// A claim from a seed or paper: what is measured, the published number, how close ours must
/// be, and where it comes from.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    /// Short identifier, unique within the experiment.
    pub id: String,
    /// The claim in words.
    pub claim: String,
    /// The metric ackclock computes.
    pub metric: String,
    /// The published number, as published.
    pub published: String,
    /// The acceptance band, in words (the code applies it).
    pub tolerance: String,
    /// Seed file and date, or paper and figure.
    pub source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClaimsFile {
    claim: Vec<ClaimSpec>,
}

/// Parses a `claims.toml` (`[[claim]]` tables); ids must be unique.
pub fn parse(origin: &str, src: &str) -> Result<Vec<ClaimSpec>> {
    let f: ClaimsFile = toml::from_str(src).with_context(|| format!("{origin}/claims.toml"))?;
    for (i, c) in f.claim.iter().enumerate() {
        if f.claim[..i].iter().any(|d| d.id == c.id) {
            bail!("{origin}/claims.toml: claim id {:?} appears twice", c.id);
        }
    }
    Ok(f.claim)
}

/// Judges an experiment's claims: each claim of its file exactly once, in any order;
/// [`finish`](Self::finish) returns them in the file's order and refuses a claim left
/// unjudged.
pub struct Judge<'a> {
    experiment: &'static str,
    specs: &'a [ClaimSpec],
    results: Vec<Slot>,
}

/// Where a claim stands while an experiment judges.
#[derive(Clone)]
enum Slot {
    Open,
    Judged(Box<ClaimResult>),
    /// Not judged in this run (its runs are left out, e.g. of the quick variant).
    Skipped,
}

impl<'a> Judge<'a> {
    pub fn new(experiment: &'static str, specs: &'a [ClaimSpec]) -> Self {
        Judge {
            experiment,
            specs,
            results: vec![Slot::Open; specs.len()],
        }
    }

    /// Records claim `id`: our number (formatted), the verdict and a note (why it failed,
    /// or what to read into it; may be empty).
    pub fn claim(
        &mut self,
        id: &str,
        ours: impl Into<String>,
        verdict: Verdict,
        note: impl Into<String>,
    ) -> Result<()> {
        let i = self.open(id)?;
        self.results[i] = Slot::Judged(Box::new(ClaimResult {
            experiment: self.experiment.to_string(),
            spec: self.specs[i].clone(),
            ours: ours.into(),
            verdict,
            note: note.into(),
        }));
        Ok(())
    }

    /// Leaves claim `id` out of this run's results: the runs it needs were not made (a
    /// claim that only the full variant of an experiment can judge). Counts as its one
    /// judgement.
    pub fn skip(&mut self, id: &str) -> Result<()> {
        let i = self.open(id)?;
        self.results[i] = Slot::Skipped;
        Ok(())
    }

    /// The index of claim `id`, which must not be judged or skipped yet.
    fn open(&self, id: &str) -> Result<usize> {
        let i = self
            .specs
            .iter()
            .position(|c| c.id == id)
            .ok_or_else(|| anyhow!("{}: no claim {id:?} in claims.toml", self.experiment))?;
        if !matches!(self.results[i], Slot::Open) {
            bail!("{}: claim {id:?} judged twice", self.experiment);
        }
        Ok(i)
    }

    /// The judged claims in the file's order, without the skipped ones.
    pub fn finish(self) -> Result<Vec<ClaimResult>> {
        let experiment = self.experiment;
        self.results
            .into_iter()
            .zip(self.specs)
            .filter_map(|(r, s)| match r {
                Slot::Judged(c) => Some(Ok(*c)),
                Slot::Skipped => None,
                Slot::Open => Some(Err(anyhow!(
                    "{experiment}: claim {:?} was not judged",
                    s.id
                ))),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
[[claim]]
id = "a"
claim = "c"
metric = "m"
published = "p"
tolerance = "t"
source = "s"
[[claim]]
id = "b"
claim = "c"
metric = "m"
published = "p"
tolerance = "t"
source = "s"
"#;

    #[test]
    fn every_claim_is_judged_once_and_kept_in_file_order() {
        let specs = parse("x", SRC).unwrap();
        let mut j = Judge::new("x", &specs);
        j.claim("b", "2", Verdict::Pass, "").unwrap();
        assert!(j.claim("b", "2", Verdict::Pass, "").is_err());
        assert!(j.claim("zz", "2", Verdict::Pass, "").is_err());
        j.claim("a", "1", Verdict::Fail, "why").unwrap();
        let r = j.finish().unwrap();
        assert_eq!(
            r.iter().map(|c| c.spec.id.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        let mut j = Judge::new("x", &specs);
        j.claim("a", "1", Verdict::Pass, "").unwrap();
        let e = j.finish().unwrap_err().to_string();
        assert!(e.contains("\"b\" was not judged"), "{e}");
    }

    #[test]
    fn a_skipped_claim_is_left_out() {
        let specs = parse("x", SRC).unwrap();
        let mut j = Judge::new("x", &specs);
        j.skip("a").unwrap();
        assert!(j.claim("a", "1", Verdict::Pass, "").is_err());
        assert!(j.skip("zz").is_err());
        j.claim("b", "2", Verdict::Pass, "").unwrap();
        let r = j.finish().unwrap();
        assert_eq!(
            r.iter().map(|c| c.spec.id.as_str()).collect::<Vec<_>>(),
            ["b"]
        );
    }

    #[test]
    fn duplicate_ids_and_unknown_fields_are_refused() {
        let dup = SRC.replace("id = \"b\"", "id = \"a\"");
        assert!(parse("x", &dup).is_err());
        assert!(parse("x", "[[claim]]\nid = \"a\"\ncolour = 1\n").is_err());
    }
}
