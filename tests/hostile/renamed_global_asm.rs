// tries: a static constructor written in assembly, through `global_asm!` renamed by `use … as`, so that no `global_asm!` is written anywhere
// at: items
// status: refused
// says: `global_asm` is not allowed in a lab
use core::arch::global_asm as notes;
notes!(
    ".pushsection .init_array,\"aw\"",
    ".p2align 3",
    ".quad {plant}",
    ".popsection",
    plant = sym plant,
);
fn plant() {
    let _ = std::fs::write("/tmp/planted-by-renamed-global-asm", "owned");
}
