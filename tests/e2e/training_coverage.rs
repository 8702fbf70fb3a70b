//! Every function a student writes in the training lab is graded: each function the template
//! leaves as `todo!()` is broken alone in a copy of the solution, and some item must lose
//! points and name that function. A function no item reaches, or one whose mistakes are
//! charged under another function's name, fails here.
//!
//! "Broken" is the plainest wrong answer the function's type allows: a function that returns
//! nothing does nothing; one whose result has a default value (a matrix, a number, a list, an
//! `Option`, a tuple of those, or `Ok` of one) returns that default (an empty matrix, zero,
//! nothing); a constructor is left as the template has it (`todo!()`).
//!
//! Functions that reach disjoint items share a copy (round robin within each type, or within
//! each file for free functions; the GPU part one function a copy, its functions call each
//! other), each copy built once with the others and graded once, on the items its part can
//! touch. Full suite only (`GPU_LABS_FULL=1`).

use gpu_labs_e2e::{copy_crate, harness, workspace};
use std::collections::BTreeMap;
use std::path::Path;

/// One function the template leaves as `todo!()`: its name as the template's message gives it
/// (`Linear::forward`), its file, the solution's code between the region markers, and the
/// body that breaks it.
#[derive(Debug, Clone)]
struct Function {
    name: String,
    file: String,
    solution: String,
    broken: String,
}

/// The types whose `Default` is a wrong answer for any function of the lab returning them.
fn has_default(ty: &str) -> bool {
    let ty = ty.trim();
    if let Some(inner) = ty.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
        return split_top(inner).iter().all(|t| has_default(t));
    }
    [
        "Array1<", "Array2<", "Vec<", "Option<", "f32", "f64", "usize", "bool", "Duration",
    ]
    .iter()
    .any(|p| ty.starts_with(p))
}

/// `a, (b, c), D<e, f>` split at its top-level commas.
fn split_top(text: &str) -> Vec<String> {
    let (mut parts, mut depth, mut current) = (Vec::new(), 0i32, String::new());
    for c in text.chars() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() {
        parts.push(current);
    }
    parts
}

/// The body that breaks a function returning `ret` (`None`: nothing), given its template
/// line.
fn broken_body(ret: Option<&str>, template: &str) -> String {
    let ret = ret.map(str::trim);
    match ret {
        None | Some("()") => "let _ = ();".into(),
        Some(r) if r.starts_with("GpuResult<") => {
            let inner = &r["GpuResult<".len()..r.len() - 1];
            if inner.trim() == "()" {
                "return Ok(());".into()
            } else if has_default(inner) {
                "return Ok(Default::default());".into()
            } else {
                template.into()
            }
        }
        Some(r) if has_default(r) => "return Default::default();".into(),
        Some(_) => template.into(),
    }
}

/// The return type of the last `fn` signature that starts in `before` (up to its `{`).
fn return_type(before: &str) -> Option<String> {
    let start = before.rfind("fn ")?;
    let signature = &before[start..];
    let signature = &signature[..signature.rfind('{')?];
    // The end of the parameter list: the `)` that closes its `(`.
    let open = signature.find('(')?;
    let mut depth = 0;
    let mut close = None;
    for (i, c) in signature[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let rest = signature[close? + 1..].trim();
    let ty = rest.strip_prefix("->")?.trim();
    Some(ty.split(" where ").next().unwrap_or(ty).trim().to_string())
}

/// Every function of `lab`'s solution that its template leaves as `todo!()`.
fn functions(lab: &str) -> Vec<Function> {
    let src = workspace().join("solutions").join(lab).join("src");
    let mut found = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&src)
        .expect("the solution's src/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("a source file");
        let file = format!(
            "src/{}",
            path.file_name().expect("a name").to_string_lossy()
        );
        let mut at = 0;
        while let Some(begin) = text[at..].find("// BEGIN SOLUTION\n").map(|i| i + at) {
            let body_start = begin + "// BEGIN SOLUTION\n".len();
            let end = text[body_start..]
                .find("// END SOLUTION\n")
                .map(|i| i + body_start)
                .expect("every region ends");
            at = end;
            let after = &text[end + "// END SOLUTION\n".len()..];
            let line = after.lines().next().unwrap_or("").trim();
            let Some(message) = line.strip_prefix("//@template todo!(\"") else {
                continue;
            };
            let name = message.split(": ").next().unwrap_or(message).to_string();
            let template = line.trim_start_matches("//@template ").to_string();
            let line_start = text[..begin].rfind('\n').map_or(0, |i| i + 1);
            let indent = &text[line_start..begin];
            let ret = return_type(&text[..begin]);
            let broken = broken_body(ret.as_deref(), &template);
            // Up to the end of the template's line, which tells two equal bodies apart.
            let stop =
                end + "// END SOLUTION\n".len() + after.find('\n').map_or(after.len(), |i| i + 1);
            found.push(Function {
                name,
                file: file.clone(),
                solution: text[line_start..stop].to_string(),
                broken: format!("{indent}{broken}\n{indent}{}", &text[end..stop]),
            });
        }
    }
    found
}

/// The lab's models: built on its other functions.
const MODELS: [&str; 2] = ["SimpleNN", "Mlp"];

/// The copies: lists of functions that reach disjoint items.
fn copies(functions: &[Function], gpu: bool) -> Vec<Vec<Function>> {
    let part = functions.iter().filter(|f| (f.file == "src/gpu.rs") == gpu);
    if gpu {
        // The GPU part's functions call one another: one a copy.
        return part.map(|f| vec![f.clone()]).collect();
    }
    // Two tiers: the models are built on the layers, activations and losses, so a broken
    // piece would fail a model's item before the model's own mistake shows; each tier's
    // copies break one function of each family (a type's methods, a file's free functions).
    let mut tiers: [BTreeMap<String, Vec<Function>>; 2] = Default::default();
    for f in part {
        let (family, tier) = match f.name.split_once("::") {
            Some((ty, _)) => (ty.to_string(), usize::from(MODELS.contains(&ty))),
            None => (f.file.clone(), 0),
        };
        tiers[tier].entry(family).or_default().push(f.clone());
    }
    let mut out: Vec<Vec<Function>> = Vec::new();
    for families in tiers {
        let first = out.len();
        for members in families.into_values() {
            for (k, f) in members.into_iter().enumerate() {
                if out.len() <= first + k {
                    out.push(Vec::new());
                }
                out[first + k].push(f);
            }
        }
    }
    out
}

/// The solution with every function of `copy` broken, in `to`.
fn make_copy(lab: &str, copy: &[Function], to: &Path) {
    copy_crate(&workspace().join("solutions").join(lab), to);
    for f in copy {
        let path = to.join(&f.file);
        let text = std::fs::read_to_string(&path).expect("a file of the copy");
        assert_eq!(
            text.matches(&f.solution).count(),
            1,
            "{}: its solution code is not unique in {}",
            f.name,
            f.file
        );
        std::fs::write(&path, text.replacen(&f.solution, &f.broken, 1)).expect("write");
    }
}

/// Whether an item's feedback names `function` (`Type::method` whole, or the type and the
/// method both).
fn names(said: &str, function: &str) -> bool {
    said.contains(function)
        || function
            .split_once("::")
            .is_some_and(|(ty, method)| said.contains(ty) && said.contains(method))
}

/// Builds and grades the copies of one part; returns one line per function no item charged
/// under its name.
fn uncovered(build: &str, gpu: bool, mode: &str, items: &[&str]) -> Vec<String> {
    let all = functions("training");
    let copies = copies(&all, gpu);
    let (_dirs, built) = harness::copies(build, "training", "coverage-", &copies, |copy, to| {
        make_copy("training", copy, to)
    });
    // Every item but the speedup (which `off` skips anyway), so the gradings share the cores.
    let untimed = built.first().map(|b| b.untimed_items()).unwrap_or_default();
    let items = if items.is_empty() {
        &untimed[..]
    } else {
        items
    };
    let pairs: Vec<_> = copies.iter().zip(&built).collect();
    gpu_labs_e2e::on_every_core(&pairs, |(copy, built)| {
        let mut wrong = Vec::new();
        let graded = built.grade(mode, Some(1), items);
        let lost = graded.lost();
        for f in copy.iter() {
            let named = lost.iter().any(|id| names(&graded.output(id), &f.name));
            if !named {
                let said: Vec<String> = lost
                    .iter()
                    .map(|id| format!("  {id}: {}", graded.output(id).replace('\n', " ")))
                    .collect();
                wrong.push(format!(
                    "{} (broken as `{}`): no item lost points naming it; lost:\n{}",
                    f.name,
                    f.broken.trim(),
                    said.join("\n")
                ));
            }
        }
        wrong
    })
    .concat()
}

#[test]
fn the_table_finds_every_todo_of_the_template() {
    // Not graded: the same functions as the template's `todo!()`s, each once.
    let found = functions("training");
    let template = workspace().join("templates/training/src");
    let mut todos = 0;
    for entry in std::fs::read_dir(template).expect("the template's src/") {
        let text = std::fs::read_to_string(entry.expect("an entry").path()).expect("a file");
        todos += text.matches("todo!(\"").count();
    }
    assert_eq!(found.len(), todos, "{found:#?}");
    let cpu = copies(&found, false).len();
    let gpu = copies(&found, true).len();
    assert!(cpu <= 11 && gpu <= 12, "{cpu} CPU copies, {gpu} GPU copies");
}

#[test]
fn every_cpu_function_broken_alone_costs_an_item_that_names_it() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let wrong = uncovered("training-coverage-cpu", false, "off", &[]);
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn every_gpu_function_broken_alone_costs_an_item_that_names_it() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let items = [
        "default_device",
        "gpu_to_device",
        "device_loader",
        "gpu_epoch_simple_nn",
        "gpu_epoch_mlp",
        "time_gpu_epoch",
        "cpu_fallback",
        "train_on_gpu",
    ];
    let wrong = uncovered("training-coverage-gpu", true, "emulate", &items);
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}
