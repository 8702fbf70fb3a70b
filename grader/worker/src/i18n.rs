//! Student-facing text in English and Traditional Chinese (Taiwan).
//!
//! Every sentence a student reads comes from a message catalogue: one [`Catalogue`] per crate
//! part (the engine's, each lab's, the flows'), one Project Fluent file per language
//! (`i18n/en.ftl`, `i18n/zh-TW.ftl`), embedded with `include_str!` and read by Fluent's own
//! parser (`fluent-syntax`). Messages use only text and variables (`{ $name }`): numbers,
//! indices and code are formatted by the caller exactly as before and passed in as text, so
//! they read the same in both languages. A message is looked up with [`tr!`](crate::tr) in the
//! run's language ([`current`]).
//!
//! Which language a run speaks ([`choose`]): `--lang` first; then, for a student's own
//! `cargo test` only, the locale variables (`LC_ALL`, else `LC_MESSAGES`, else `LANG`), and
//! only when they ask for Traditional Chinese (`zh_TW.UTF-8`): any other locale (`C.UTF-8`,
//! `en_US.UTF-8`, a machine's default) says nothing about the course, so it does not override
//! the rubric; then the rubric's `[assignment] language`; then English. Official grading
//! (`grader grade`, `batch`, Classroom steps written by `grader classroom`) reads no locale
//! variable, so a grading machine's `LANG` never changes a student's feedback.

use std::cell::Cell;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Display;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

/// A language the grader speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Lang {
    /// English (`en`), the default.
    #[default]
    En,
    /// Traditional Chinese as used in Taiwan (`zh-TW`).
    ZhTw,
}

impl Lang {
    /// Every language, English first.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::ZhTw];

    /// The BCP 47 tag (`en`, `zh-TW`), as a rubric and `--lang` write it.
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::ZhTw => "zh-TW",
        }
    }

    /// The language a POSIX locale value names, when it is Traditional Chinese
    /// (`zh_TW.UTF-8`, `zh_TW`, `zh-Hant`); `None` for every other locale.
    pub fn from_locale(value: &str) -> Option<Lang> {
        let name = value.split(['.', '@']).next().unwrap_or("");
        let lower = name.to_ascii_lowercase().replace('_', "-");
        (lower == "zh-tw" || lower.starts_with("zh-hant")).then_some(Lang::ZhTw)
    }

    fn index(self) -> usize {
        match self {
            Lang::En => 0,
            Lang::ZhTw => 1,
        }
    }
}

impl std::fmt::Display for Lang {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.tag())
    }
}

impl FromStr for Lang {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase().replace('_', "-");
        match lower.as_str() {
            "en" | "en-us" | "en-gb" | "english" => Ok(Lang::En),
            "zh-tw" | "zh-hant" | "zh-hant-tw" => Ok(Lang::ZhTw),
            _ => Err(format!(
                "unknown language `{s}`: the grader speaks `en` and `zh-TW`"
            )),
        }
    }
}

/// The locale variables' choice, read as `setlocale` reads them for messages: the first of
/// `LC_ALL`, `LC_MESSAGES`, `LANG` that is set and not empty decides, and it chooses only
/// Traditional Chinese (see the module's documentation).
pub fn from_environment() -> Option<Lang> {
    locale_choice(|name| std::env::var(name).ok())
}

/// [`from_environment`] over any source of variables (tests).
pub fn locale_choice(var: impl Fn(&str) -> Option<String>) -> Option<Lang> {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .filter_map(|name| var(name))
        .find(|value| !value.is_empty())
        .and_then(|value| Lang::from_locale(&value))
}

/// The run's language: the flag, else the locale's choice (`None` where the flow reads no
/// locale), else the rubric's.
pub fn choose(flag: Option<Lang>, locale: Option<Lang>, rubric: Lang) -> Lang {
    flag.or(locale).unwrap_or(rubric)
}

/// The variable through which a supervisor hands its language to its workers.
pub const WORKER_LANG: &str = "GPU_LABS_LANG";

/// The process's language, set once a run has chosen it.
static CURRENT: AtomicU8 = AtomicU8::new(0);

thread_local! {
    /// A language for this thread only (tests that render both languages side by side).
    static THIS_THREAD: Cell<Option<Lang>> = const { Cell::new(None) };
}

/// Sets the language of every message this process writes from now on.
pub fn set(lang: Lang) {
    CURRENT.store(lang.index() as u8, Ordering::Relaxed);
}

/// The language messages are written in: this thread's (see [`with_lang`]), else the process's.
pub fn current() -> Lang {
    THIS_THREAD.with(Cell::get).unwrap_or_else(|| {
        if CURRENT.load(Ordering::Relaxed) == 1 {
            Lang::ZhTw
        } else {
            Lang::En
        }
    })
}

/// Runs `f` with this thread's messages in `lang` (the process's language is left alone).
pub fn with_lang<R>(lang: Lang, f: impl FnOnce() -> R) -> R {
    let before = THIS_THREAD.with(|c| c.replace(Some(lang)));
    let out = f();
    THIS_THREAD.with(|c| c.set(before));
    out
}

/// One piece of a message: text, or a variable's value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Var(String),
}

/// A catalogue's messages in one language, by key.
type Messages = HashMap<String, Vec<Piece>>;

/// The messages of one part of the grader, in every language: Fluent sources embedded in the
/// binary, parsed on first use.
pub struct Catalogue {
    /// Where the sources live, for the test's messages (`grader/engine/i18n`).
    name: &'static str,
    /// The Fluent source of each language, in [`Lang::ALL`]'s order.
    sources: [&'static str; 2],
    parsed: [OnceLock<Result<Messages, String>>; 2],
}

impl Catalogue {
    /// A catalogue from its English and Traditional Chinese Fluent sources.
    pub const fn new(name: &'static str, en: &'static str, zh_tw: &'static str) -> Self {
        Catalogue {
            name,
            sources: [en, zh_tw],
            parsed: [OnceLock::new(), OnceLock::new()],
        }
    }

    fn messages(&self, lang: Lang) -> &Result<Messages, String> {
        self.parsed[lang.index()].get_or_init(|| parse(self.sources[lang.index()]))
    }

    /// The message `key` in the run's language with its variables filled in; the English
    /// message where the language lacks it, the key itself where both do (the catalogue test
    /// rules both out).
    pub fn format(&self, key: &str, args: &[(&str, &dyn Display)]) -> String {
        self.format_in(current(), key, args)
    }

    /// [`Catalogue::format`] in a given language.
    pub fn format_in(&self, lang: Lang, key: &str, args: &[(&str, &dyn Display)]) -> String {
        let found = [lang, Lang::En]
            .into_iter()
            .find_map(|l| match self.messages(l) {
                Ok(messages) => messages.get(key),
                Err(_) => None,
            });
        let Some(pieces) = found else {
            return key.to_string();
        };
        let mut out = String::new();
        for piece in pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Var(name) => match args.iter().find(|(n, _)| n == name) {
                    Some((_, value)) => out.push_str(&value.to_string()),
                    None => {
                        out.push_str("{$");
                        out.push_str(name);
                        out.push('}');
                    }
                },
            }
        }
        out
    }

    /// Every problem with the catalogue: a source Fluent cannot read, a message one language
    /// lacks, a translation whose variables differ from the English message's.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let parsed: Vec<_> = Lang::ALL
            .iter()
            .filter_map(|&lang| match self.messages(lang) {
                Ok(m) => Some((lang, m)),
                Err(e) => {
                    problems.push(format!("{}/{}.ftl: {e}", self.name, lang.tag()));
                    None
                }
            })
            .collect();
        let keys: BTreeSet<&String> = parsed.iter().flat_map(|(_, m)| m.keys()).collect();
        for key in keys {
            let vars: Vec<(Lang, Option<BTreeSet<&str>>)> = parsed
                .iter()
                .map(|(lang, m)| (*lang, m.get(key).map(|pieces| variables(pieces))))
                .collect();
            for (lang, v) in &vars {
                if v.is_none() {
                    problems.push(format!(
                        "{}/{}.ftl: no message `{key}`",
                        self.name,
                        lang.tag()
                    ));
                }
            }
            if let [(_, Some(en)), rest @ ..] = vars.as_slice() {
                for (lang, v) in rest {
                    if let Some(v) = v.as_ref().filter(|v| v != &en) {
                        problems.push(format!(
                            "{}/{}.ftl: `{key}` uses {{ {} }} where English uses {{ {} }}",
                            self.name,
                            lang.tag(),
                            join_vars(v),
                            join_vars(en)
                        ));
                    }
                }
            }
        }
        problems
    }

    /// Every key of the English catalogue.
    pub fn keys(&self) -> Vec<String> {
        match self.messages(Lang::En) {
            Ok(m) => m.keys().cloned().collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The text between the variables of every message in `lang` (for tests that look for one
    /// language's sentences in another's output).
    pub fn texts(&self, lang: Lang) -> Vec<String> {
        let Ok(messages) = self.messages(lang) else {
            return Vec::new();
        };
        messages
            .values()
            .flatten()
            .filter_map(|p| match p {
                Piece::Text(t) => Some(t.clone()),
                Piece::Var(_) => None,
            })
            .collect()
    }
}

/// The message keys the Rust sources under `dir` look up with a crate's own `t!("key", …)`
/// that `catalogue` lacks, each with its file: the catalogue test's other half.
pub fn unknown_keys(catalogue: &Catalogue, dir: &std::path::Path) -> Vec<String> {
    let known: BTreeSet<String> = catalogue.keys().into_iter().collect();
    let mut unknown = Vec::new();
    let mut files = vec![dir.to_path_buf()];
    while let Some(path) = files.pop() {
        if let Ok(entries) = std::fs::read_dir(&path) {
            files.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for key in keys_in(&text) {
            if !known.contains(key) {
                unknown.push(format!("{}: `{key}`", path.display()));
            }
        }
    }
    unknown
}

/// The literal keys of the `t!(` lookups in a Rust source (not `format!(`'s).
fn keys_in(text: &str) -> Vec<&str> {
    text.match_indices("t!(")
        .filter(|(at, _)| {
            let line_start = text[..*at].rfind('\n').map_or(0, |n| n + 1);
            !text[..*at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !text[line_start..*at].trim_start().starts_with("//")
        })
        .filter_map(|(at, _)| {
            let quoted = text[at + 3..].trim_start().strip_prefix('"')?;
            let key = &quoted[..quoted.find('"')?];
            key.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-')
                .then_some(key)
        })
        .collect()
}

fn variables(pieces: &[Piece]) -> BTreeSet<&str> {
    pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Var(v) => Some(v.as_str()),
            Piece::Text(_) => None,
        })
        .collect()
}

fn join_vars(vars: &BTreeSet<&str>) -> String {
    vars.iter()
        .map(|v| format!("${v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads a Fluent source into messages. The grader's messages use plain text, variables and
/// string literals (`{"{"}` for a brace, `{" "}` for a leading space); anything else (terms,
/// selectors, functions, attributes) is refused so that the catalogue test catches it.
fn parse(source: &str) -> Result<Messages, String> {
    use fluent_syntax::ast::{Entry, Expression, InlineExpression, PatternElement};
    let resource = fluent_syntax::parser::parse(source).map_err(|(_, errors)| {
        errors
            .iter()
            .map(|e| {
                let line = source[..e.pos.start.min(source.len())].lines().count();
                format!("line {line}: {:?}", e.kind)
            })
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    let mut messages = Messages::new();
    for entry in resource.body {
        let message = match entry {
            Entry::Message(m) => m,
            Entry::Comment(_) | Entry::GroupComment(_) | Entry::ResourceComment(_) => continue,
            Entry::Term(t) => return Err(format!("term `-{}`: not used here", t.id.name)),
            Entry::Junk { content } => return Err(format!("unreadable: {content}")),
        };
        let key = message.id.name;
        if !message.attributes.is_empty() {
            return Err(format!(
                "`{key}` has attributes, which the grader does not use"
            ));
        }
        let pattern = message
            .value
            .ok_or_else(|| format!("`{key}` has no value"))?;
        let mut pieces: Vec<Piece> = Vec::new();
        for element in pattern.elements {
            let piece = match element {
                PatternElement::TextElement { value } => Piece::Text(value.to_string()),
                PatternElement::Placeable {
                    expression: Expression::Inline(InlineExpression::VariableReference { id }),
                } => Piece::Var(id.name.to_string()),
                PatternElement::Placeable {
                    expression: Expression::Inline(InlineExpression::StringLiteral { value }),
                } => Piece::Text(fluent_syntax::unicode::unescape_unicode_to_string(value).into()),
                PatternElement::Placeable { .. } => {
                    return Err(format!(
                        "`{key}` uses a placeable other than a variable or a string literal"
                    ))
                }
            };
            match (pieces.last_mut(), piece) {
                (Some(Piece::Text(before)), Piece::Text(text)) => before.push_str(&text),
                (_, piece) => pieces.push(piece),
            }
        }
        if messages.insert(key.to_string(), pieces).is_some() {
            return Err(format!("`{key}` is defined twice"));
        }
    }
    Ok(messages)
}

/// Formats a catalogue's message in the run's language:
/// `tr!(MESSAGES, "key", name = value, …)`; each value is anything `Display`, passed to the
/// message's `{ $name }`.
#[macro_export]
macro_rules! tr {
    ($catalogue:expr, $key:expr $(, $name:ident = $value:expr)* $(,)?) => {
        $catalogue.format(
            $key,
            &[$((stringify!($name), &$value as &dyn ::std::fmt::Display)),*],
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    const EN: &str = "plain = Hello, { $who }.\nmulti =\n    first line\n    second { $n }\n\n    after a blank\nbrace = a {\"{\"} b\nspace = {\" \"}x\n";
    const ZH: &str = "plain = 你好，{ $who }。\nmulti = 一{ $n }\nbrace = 甲\nspace = 乙\n";

    #[test]
    fn messages_fill_in_their_variables_in_the_chosen_language() {
        let c = Catalogue::new("test", EN, ZH);
        assert_eq!(
            c.format_in(Lang::En, "plain", &[("who", &"Ada")]),
            "Hello, Ada."
        );
        assert_eq!(
            c.format_in(Lang::ZhTw, "plain", &[("who", &"Ada")]),
            "你好，Ada。"
        );
        assert_eq!(
            c.format_in(Lang::En, "multi", &[("n", &3)]),
            "first line\nsecond 3\n\nafter a blank"
        );
        assert_eq!(c.format_in(Lang::En, "brace", &[]), "a { b");
        assert_eq!(c.format_in(Lang::En, "space", &[]), " x");
        assert_eq!(c.format_in(Lang::En, "missing", &[]), "missing");
        assert!(c.problems().is_empty(), "{:?}", c.problems());
        let n = 4;
        assert_eq!(
            with_lang(Lang::ZhTw, || tr!(c, "multi", n = n)),
            "一4".to_string()
        );
    }

    #[test]
    fn a_missing_key_or_a_changed_variable_is_a_problem() {
        let c = Catalogue::new("test", EN, "plain = 你好，{ $whom }。\nextra = 多\n");
        let problems = c.problems().join("\n");
        assert!(
            problems.contains("zh-TW.ftl: no message `multi`"),
            "{problems}"
        );
        assert!(
            problems.contains("en.ftl: no message `extra`"),
            "{problems}"
        );
        assert!(
            problems.contains("`plain` uses { $whom } where English uses { $who }"),
            "{problems}"
        );
    }

    #[test]
    fn only_a_traditional_chinese_locale_overrides_the_rubric() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            locale_choice(env(&[("LANG", "zh_TW.UTF-8")])),
            Some(Lang::ZhTw)
        );
        assert_eq!(locale_choice(env(&[("LANG", "en_US.UTF-8")])), None);
        assert_eq!(
            locale_choice(env(&[("LC_ALL", "C.UTF-8"), ("LANG", "zh_TW.UTF-8")])),
            None
        );
        assert_eq!(
            locale_choice(env(&[("LC_ALL", ""), ("LC_MESSAGES", "zh_TW")])),
            Some(Lang::ZhTw)
        );
        assert_eq!(choose(None, None, Lang::ZhTw), Lang::ZhTw);
        assert_eq!(
            choose(Some(Lang::En), Some(Lang::ZhTw), Lang::ZhTw),
            Lang::En
        );
        assert_eq!(choose(None, Some(Lang::ZhTw), Lang::En), Lang::ZhTw);
        assert_eq!("zh_TW".parse::<Lang>(), Ok(Lang::ZhTw));
        assert!("fr".parse::<Lang>().is_err());
    }

    #[test]
    fn lookups_are_found_in_sources() {
        let text = "t!(\"a\") format!(\"b\") t!(\n    \"c\",\n) tr!(M, \"d\")";
        assert_eq!(keys_in(text), ["a", "c"]);
    }
}
