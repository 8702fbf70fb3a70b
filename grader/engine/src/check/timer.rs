//! Judges a student's timer: handed work that runs a known time, it must report at least the
//! work's own duration (the clock started before and stopped after the work) and at most the
//! grader's bracket around the whole call, and hand back the work's result.

use crate::i18n::t;

/// One call of the student's timer, as the supervisor measured it.
#[derive(Debug, Clone)]
pub struct TimerSample {
    /// How long the grader held the work (ms, rounded), for the feedback.
    pub work_ms: u64,
    /// Whether the work ran at all.
    pub work_ran: bool,
    /// How long the grader held the work, by its own clock (ns).
    pub inner_ns: u64,
    /// How long the whole timer call took, by the grader's clock around it (ns).
    pub outer_ns: u64,
    /// What the student's timer reported (ns).
    pub reported_ns: u64,
    /// Whether the timer returned the very value the work produced.
    pub passed_value_through: bool,
}

/// Slack for clock granularity between the work's own clock and the student's (ns).
const SLACK_NS: u64 = 200_000;

/// Why a timer is wrong, with a hint; `Ok` is a line describing what was measured.
pub fn judge(samples: &[TimerSample], function: &str) -> Result<String, (String, String)> {
    if samples.is_empty() {
        return Err((t!("cpu-timer-none"), String::new()));
    }
    for s in samples {
        let ms = |ns: u64| ns as f64 / 1e6;
        if !s.work_ran {
            return Err((
                t!("cpu-timer-never-ran", function = function),
                t!("cpu-timer-never-ran-hint"),
            ));
        }
        if !s.passed_value_through {
            return Err((
                t!("cpu-timer-value", function = function),
                t!("cpu-timer-value-hint"),
            ));
        }
        if s.reported_ns + SLACK_NS < s.inner_ns {
            return Err((
                t!(
                    "cpu-timer-short",
                    function = function,
                    reported = format!("{:.3}", ms(s.reported_ns)),
                    inner = format!("{:.3}", ms(s.inner_ns))
                ),
                t!("cpu-timer-short-hint"),
            ));
        }
        if s.reported_ns > s.outer_ns + SLACK_NS {
            return Err((
                t!(
                    "cpu-timer-long",
                    function = function,
                    reported = format!("{:.3}", ms(s.reported_ns)),
                    outer = format!("{:.3}", ms(s.outer_ns))
                ),
                t!("cpu-timer-long-hint"),
            ));
        }
    }
    let described: Vec<String> = samples
        .iter()
        .map(|s| {
            t!(
                "cpu-timer-sample",
                work = s.work_ms,
                reported = format!("{:.2}", s.reported_ns as f64 / 1e6)
            )
        })
        .collect();
    Ok(described.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(inner: u64, outer: u64, reported: u64) -> TimerSample {
        TimerSample {
            work_ms: 20,
            work_ran: true,
            inner_ns: inner,
            outer_ns: outer,
            reported_ns: reported,
            passed_value_through: true,
        }
    }

    #[test]
    fn a_timer_between_the_work_and_the_call_passes() {
        assert!(judge(&[sample(20_000_000, 20_100_000, 20_050_000)], "t").is_ok());
    }

    #[test]
    fn a_timer_that_stops_early_or_invents_time_fails() {
        let early = judge(&[sample(20_000_000, 20_100_000, 1_000)], "t").unwrap_err();
        assert!(early.1.contains("before calling the work"));
        let long = judge(&[sample(20_000_000, 20_100_000, 40_000_000)], "t").unwrap_err();
        assert!(long.0.contains("longer than"));
        let mut lazy = sample(0, 10, 5);
        lazy.work_ran = false;
        assert!(judge(&[lazy], "t").unwrap_err().0.contains("never ran"));
    }
}
