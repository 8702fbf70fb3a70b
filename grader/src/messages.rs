//! The flows' and renderers' student-facing messages (`grader/i18n/*.ftl`), in the run's
//! language ([`grader_engine::i18n`]).

use grader_engine::i18n::Catalogue;

/// The score table's, feedback's, harness's and results.json's messages.
pub static MESSAGES: Catalogue = Catalogue::new(
    "grader/i18n",
    include_str!("../i18n/en.ftl"),
    include_str!("../i18n/zh-TW.ftl"),
);

/// Formats one of [`MESSAGES`]: `t!("key", name = value, …)`.
macro_rules! t {
    ($($arg:tt)*) => {
        grader_engine::tr!($crate::messages::MESSAGES, $($arg)*)
    };
}
pub(crate) use t;

#[cfg(test)]
mod tests {
    #[test]
    fn the_catalogue_is_complete_in_both_languages() {
        let problems = super::MESSAGES.problems();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let unknown = grader_engine::i18n::unknown_keys(&super::MESSAGES, &src);
        assert!(unknown.is_empty(), "{}", unknown.join("\n"));
    }
}
