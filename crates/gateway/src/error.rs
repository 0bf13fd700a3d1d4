use thiserror::Error;

/// A configuration that cannot be built. The message names the component and the field,
/// says what was wrong and what is accepted, so a scenario-file error can be fixed from it.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{component}: `{field}` {problem}")]
pub struct ConfigError {
    /// The configured thing: `"red"`, `"link"`, `"impairments.gilbert"`, ...
    pub component: &'static str,
    /// The offending field, as spelled in the scenario file.
    pub field: &'static str,
    /// What is wrong and what would be accepted.
    pub problem: String,
}

impl ConfigError {
    pub(crate) fn new(component: &'static str, field: &'static str, problem: String) -> Self {
        ConfigError {
            component,
            field,
            problem,
        }
    }
}

/// Checks that `v` is a probability, `0 <= v <= 1`.
pub(crate) fn check_prob(
    component: &'static str,
    field: &'static str,
    v: f64,
) -> Result<(), ConfigError> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(ConfigError::new(
            component,
            field,
            format!("is {v}; a probability must lie in [0, 1]"),
        ))
    }
}

/// Checks that `v` is a finite, non-negative number (a time in ms, a threshold).
pub(crate) fn check_non_negative(
    component: &'static str,
    field: &'static str,
    v: f64,
) -> Result<(), ConfigError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(ConfigError::new(
            component,
            field,
            format!("is {v}; it must be a finite number >= 0"),
        ))
    }
}

/// Checks that `v` is a finite, strictly positive number.
pub(crate) fn check_positive(
    component: &'static str,
    field: &'static str,
    v: f64,
) -> Result<(), ConfigError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(ConfigError::new(
            component,
            field,
            format!("is {v}; it must be a finite number > 0"),
        ))
    }
}

/// Checks that a count or size is at least `min`.
pub(crate) fn check_at_least(
    component: &'static str,
    field: &'static str,
    v: usize,
    min: usize,
) -> Result<(), ConfigError> {
    if v >= min {
        Ok(())
    } else {
        Err(ConfigError::new(
            component,
            field,
            format!("is {v}; it must be at least {min}"),
        ))
    }
}

/// Milliseconds (as written in scenario files) to whole nanoseconds, rounded to nearest.
pub(crate) fn ms_to_duration(ms: f64) -> ackclock_wire::Duration {
    ackclock_wire::Duration::from_nanos((ms * 1e6).round().max(0.0).min(u64::MAX as f64) as u64)
}
