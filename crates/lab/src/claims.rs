//! Claims: what a seed message or paper says, as written in an experiment's `claims.toml`, and the
//! judging of each against our number.

use crate::suite::{ClaimResult, Verdict};
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

/// A claim from a seed message or paper: what is measured, the published number, how close ours must
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
    /// Where the claim comes from: the seed message (author, date, subject) or the paper or
    /// RFC by name, with the figure or section.
    pub source: String,
    /// The unit of `published_value`, our number and the band (`min`, `max`), when the claim
    /// is about one number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// The published number as a number, in `unit`, when the source gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_value: Option<f64>,
    /// The lower end of the band our number must fall in to pass, in `unit`; set only when
    /// the tolerance is a band on one number (the judge then checks that the code's verdict
    /// agrees with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// The upper end of the band.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// Whether our number must be above `min`, not at it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub min_exclusive: bool,
    /// Whether our number must be below `max`, not at it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub max_exclusive: bool,
}

impl ClaimSpec {
    /// Whether the claim has a numeric band (`min` or `max`).
    pub fn has_band(&self) -> bool {
        self.min.is_some() || self.max.is_some()
    }

    /// Whether `v` is inside the band (true when there is none).
    pub fn in_band(&self, v: f64) -> bool {
        let above = self
            .min
            .is_none_or(|m| if self.min_exclusive { v > m } else { v >= m });
        let below = self
            .max
            .is_none_or(|m| if self.max_exclusive { v < m } else { v <= m });
        above && below
    }
}

/// Our result for a claim: the text the report shows and, when the claim is about one
/// number, that number (in the claim's `unit`).
#[derive(Clone, Debug, PartialEq)]
pub struct Ours {
    /// What the report's "ackclock" column shows: the number with its context (the
    /// spread over the RNG seeds, the case compared with).
    pub text: String,
    /// The number itself, in the claim's `unit`, when the claim is about one number: the
    /// judge holds it to the claim's band, and `claims.json` carries it.
    pub value: Option<f64>,
}

impl Ours {
    /// A number and its text.
    pub fn num(value: f64, text: impl Into<String>) -> Ours {
        Ours {
            text: text.into(),
            value: Some(value),
        }
    }
}

impl From<String> for Ours {
    fn from(text: String) -> Ours {
        Ours { text, value: None }
    }
}

impl From<&str> for Ours {
    fn from(text: &str) -> Ours {
        Ours::from(text.to_string())
    }
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
        let numbers = c.published_value.is_some() || c.has_band();
        if numbers && c.unit.is_none() {
            bail!(
                "{origin}/claims.toml: claim {:?} has numbers but no unit",
                c.id
            );
        }
        if (c.min_exclusive && c.min.is_none()) || (c.max_exclusive && c.max.is_none()) {
            bail!(
                "{origin}/claims.toml: claim {:?}: an exclusive end without its bound",
                c.id
            );
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
    /// Not judged in this run (its runs are left out, e.g. of the quick variant), and why.
    Skipped(String),
}

impl<'a> Judge<'a> {
    /// A judge of `specs` (the experiment's parsed `claims.toml`) for `experiment` (named
    /// in each result and in errors), every claim still open.
    pub fn new(experiment: &'static str, specs: &'a [ClaimSpec]) -> Self {
        Judge {
            experiment,
            specs,
            results: vec![Slot::Open; specs.len()],
        }
    }

    /// Records claim `id`: our result (its text and, for a claim about one number, the
    /// number: [`Ours::num`]), the verdict and a note (why it failed, or what to read into
    /// it; may be empty).
    ///
    /// A claim whose `claims.toml` gives a band (`min`, `max`) is checked against it, so the
    /// file and the code cannot disagree: a pass must come with a number inside the band, a
    /// fail with a number outside it (or with none: nothing was measured).
    pub fn claim(
        &mut self,
        id: &str,
        ours: impl Into<Ours>,
        verdict: Verdict,
        note: impl Into<String>,
    ) -> Result<()> {
        let i = self.open(id)?;
        let spec = &self.specs[i];
        let ours = ours.into();
        if spec.has_band() {
            let says = |v: f64| Verdict::of(spec.in_band(v));
            match (verdict, ours.value) {
                (Verdict::Pass, None) => bail!(
                    "{}: claim {id:?} has a band in claims.toml but passed without a number",
                    self.experiment
                ),
                (Verdict::Pass | Verdict::Fail, Some(v)) if says(v) != verdict => bail!(
                    "{}: claim {id:?}: the code says {} for {v}, the band of claims.toml ({}) says {}",
                    self.experiment,
                    verdict.word(),
                    spec.tolerance,
                    says(v).word()
                ),
                _ => {}
            }
        }
        self.results[i] = Slot::Judged(Box::new(ClaimResult {
            experiment: self.experiment.to_string(),
            spec: spec.clone(),
            ours: ours.text,
            value: ours.value,
            verdict,
            note: note.into(),
        }));
        Ok(())
    }

    /// Records claim `id` as not judged in this run, and `why`: the runs it needs were not
    /// made (a claim that only the full variant of an experiment can judge). Counts as its
    /// one judgement; the claim is listed with the verdict [`Verdict::Skip`].
    pub fn skip(&mut self, id: &str, why: impl Into<String>) -> Result<()> {
        let i = self.open(id)?;
        self.results[i] = Slot::Skipped(why.into());
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

    /// The claims in the file's order, the skipped ones with the verdict
    /// [`Verdict::Skip`] and no number.
    pub fn finish(self) -> Result<Vec<ClaimResult>> {
        let experiment = self.experiment;
        self.results
            .into_iter()
            .zip(self.specs)
            .map(|(r, s)| match r {
                Slot::Judged(c) => Ok(*c),
                Slot::Skipped(why) => Ok(ClaimResult {
                    experiment: experiment.to_string(),
                    spec: s.clone(),
                    ours: "-".into(),
                    value: None,
                    verdict: Verdict::Skip,
                    note: why,
                }),
                Slot::Open => Err(anyhow!("{experiment}: claim {:?} was not judged", s.id)),
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
    fn a_skipped_claim_is_listed_with_its_reason() {
        let specs = parse("x", SRC).unwrap();
        let mut j = Judge::new("x", &specs);
        j.skip("a", "full run only").unwrap();
        assert!(j.claim("a", "1", Verdict::Pass, "").is_err());
        assert!(j.skip("zz", "").is_err());
        j.claim("b", "2", Verdict::Pass, "").unwrap();
        let r = j.finish().unwrap();
        assert_eq!(
            r.iter()
                .map(|c| (c.spec.id.as_str(), c.verdict, c.note.as_str()))
                .collect::<Vec<_>>(),
            [
                ("a", Verdict::Skip, "full run only"),
                ("b", Verdict::Pass, "")
            ]
        );
    }

    #[test]
    fn a_band_must_agree_with_the_verdict() {
        let src = SRC.replacen(
            "source = \"s\"",
            "source = \"s\"\nunit = \"RTT\"\nmin = 4.0\nmax = 7.0\nmax_exclusive = true",
            1,
        );
        let specs = parse("x", &src).unwrap();
        assert!(specs[0].in_band(4.0) && !specs[0].in_band(7.0) && !specs[0].in_band(3.9));
        let mut j = Judge::new("x", &specs);
        let e = j
            .claim("a", "5", Verdict::Pass, "")
            .unwrap_err()
            .to_string();
        assert!(e.contains("passed without a number"), "{e}");
        j.claim("a", "never", Verdict::Fail, "").unwrap();
        let mut j = Judge::new("x", &specs);
        let e = j
            .claim("a", Ours::num(8.0, "8"), Verdict::Pass, "")
            .unwrap_err()
            .to_string();
        assert!(e.contains("says FAIL"), "{e}");
        j.claim("a", Ours::num(5.0, "5 RTT"), Verdict::Pass, "")
            .unwrap();
        j.claim("b", "x", Verdict::Info, "").unwrap();
        let r = j.finish().unwrap();
        assert_eq!(r[0].value, Some(5.0));
        assert_eq!(r[0].ours, "5 RTT");
        assert_eq!(r[1].value, None);
        let no_unit = SRC.replacen("source = \"s\"", "source = \"s\"\nmin = 1.0", 1);
        assert!(parse("x", &no_unit).is_err());
    }

    #[test]
    fn duplicate_ids_and_unknown_fields_are_refused() {
        let dup = SRC.replace("id = \"b\"", "id = \"a\"");
        assert!(parse("x", &dup).is_err());
        assert!(parse("x", "[[claim]]\nid = \"a\"\ncolour = 1\n").is_err());
    }
}
