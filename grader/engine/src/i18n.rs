//! The engine's messages ([`MESSAGES`], the `t!` macro); the catalogues and languages
//! themselves are the worker crate's ([`grader_worker::i18n`]), re-exported here, since worker
//! and supervisor speak the same languages.

pub use grader_worker::i18n::*;

/// Formats one of the engine's [`MESSAGES`]: `t!("key", name = value, …)`.
macro_rules! t {
    ($($arg:tt)*) => {
        $crate::tr!($crate::i18n::MESSAGES, $($arg)*)
    };
}
pub(crate) use t;

/// The engine's own messages.
pub static MESSAGES: Catalogue = Catalogue::new(
    "grader/engine/i18n",
    include_str!("../i18n/en.ftl"),
    include_str!("../i18n/zh-TW.ftl"),
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engine_catalogue_is_complete_in_both_languages() {
        let problems = MESSAGES.problems();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let unknown = unknown_keys(&MESSAGES, &src);
        assert!(unknown.is_empty(), "{}", unknown.join("\n"));
    }
}
