//! NVRTC name expressions (`nvrtcAddNameExpression`, `nvrtcGetLoweredName`): each expression
//! (`my_kernel<float, 4>`, maybe with a leading `&`) gets a kernel descriptor of its own in the
//! translation unit, which also instantiates a template kernel, and its lowered name is the
//! compiled function's real (mangled) symbol, read back from the object: a data word holding
//! the function's address is relocated to it, and the symbol table names what is there.

use super::symbols::{self, u64_at, Symbol};

/// A name expression after compilation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lowered {
    /// The expression as given.
    pub expr: String,
    /// Its lowered (mangled) name, what `cuModuleGetFunction` is then called with.
    pub lowered: String,
    /// The descriptor's own name in the module (`__gl_kernel_<id>`).
    pub id: String,
}

fn id(i: usize) -> String {
    format!("__gl_expr_{i}")
}

/// The expression without `&` and spaces around it.
fn bare(expr: &str) -> &str {
    expr.trim().trim_start_matches('&').trim()
}

/// The generated code for the expressions (after the source): a descriptor each, and the word
/// whose relocation gives the function's address.
pub fn generated(exprs: &[String]) -> String {
    let mut out = String::new();
    for (i, e) in exprs.iter().enumerate() {
        let id = id(i);
        out.push_str(&format!(
            "static constexpr unsigned long long __gl_smem_{id} = 0ULL;\n\
             __GL_KERNEL_EXPR({id}, {})\n",
            bare(e)
        ));
    }
    out
}

/// The lowered names of `exprs` in the object `elf` (compiled with [`generated`]), or the
/// first expression whose function cannot be found.
pub fn lowered(elf: &[u8], exprs: &[String]) -> Result<Vec<Lowered>, String> {
    let all = symbols::symbols(elf, symbols::SHT_SYMTAB);
    let relocs = relative_relocations(elf);
    exprs
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let id = id(i);
            let word = format!("__gl_exprfn_{id}");
            let lowered = all
                .iter()
                .find(|s| s.name == word)
                .and_then(|w| relocs.iter().find(|(at, _)| *at == w.value))
                .and_then(|&(_, target)| function_at(&all, target))
                .ok_or_else(|| {
                    format!("gpu-labs emulator: the name expression `{e}` names no kernel")
                })?;
            Ok(Lowered {
                expr: e.clone(),
                lowered,
                id,
            })
        })
        .collect()
}

/// The best name of the function at `addr`: a mangled one if any (a kernel declared
/// `extern "C"` has only its plain name).
fn function_at(all: &[Symbol], addr: usize) -> Option<String> {
    let mut names = all
        .iter()
        .filter(|s| s.kind == symbols::STT_FUNC && s.value == addr && !s.name.is_empty());
    let first = names.next()?;
    Some(
        std::iter::once(first)
            .chain(names)
            .find(|s| s.name.starts_with("_Z"))
            .unwrap_or(first)
            .name
            .clone(),
    )
}

/// `R_X86_64_RELATIVE` relocations of the object, as `(place, value)`.
fn relative_relocations(elf: &[u8]) -> Vec<(usize, usize)> {
    const SHT_RELA: u32 = 4;
    const R_X86_64_RELATIVE: usize = 8;
    let mut out = Vec::new();
    for sec in symbols::sections(elf).unwrap_or_default() {
        if sec.ty != SHT_RELA {
            continue;
        }
        let Some(table) = sec
            .off
            .checked_add(sec.size)
            .and_then(|end| elf.get(sec.off..end))
        else {
            continue;
        };
        for r in table.chunks_exact(24) {
            if let (Some(at), Some(info), Some(addend)) =
                (u64_at(r, 0), u64_at(r, 8), u64_at(r, 16))
            {
                if info & 0xffff_ffff == R_X86_64_RELATIVE {
                    out.push((at, addend));
                }
            }
        }
    }
    out
}

/// The module text's line for one expression: `// lowered: <lowered> <id> <expr>`.
pub fn module_line(l: &Lowered) -> String {
    format!("// lowered: {} {} {}\n", l.lowered, l.id, l.expr.trim())
}

/// Reads a module text's [`module_line`]s back, as `(lowered, id, expr)`.
pub fn parse_module_lines(text: &str) -> Vec<(String, String, String)> {
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("// lowered: ")?;
            let mut parts = rest.splitn(3, ' ');
            Some((
                parts.next()?.to_string(),
                parts.next()?.to_string(),
                parts.next().unwrap_or("").to_string(),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_lines_round_trip() {
        let l = Lowered {
            expr: "&scale<float, 4>".into(),
            lowered: "_Z5scaleIfLi4EEvPT_".into(),
            id: "__gl_expr_0".into(),
        };
        let line = module_line(&l);
        assert_eq!(
            parse_module_lines(&line),
            vec![(
                "_Z5scaleIfLi4EEvPT_".to_string(),
                "__gl_expr_0".to_string(),
                "&scale<float, 4>".to_string()
            )]
        );
        assert!(generated(&["&scale<float, 4>".into()])
            .contains("__GL_KERNEL_EXPR(__gl_expr_0, scale<float, 4>)"));
    }
}
