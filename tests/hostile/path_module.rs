// tries: a static constructor in a file the scan does not read as code, made a module by #[path]
// at: items
// status: refused
// says: `#[path]` is not allowed in a lab
// extra: ctor.txt
#[path = "ctor.txt"]
mod planted;
// ---- ctor.txt
#[used]
#[link_section = ".init_array"]
static PLANT: extern "C" fn() = {
    extern "C" fn plant() {
        let _ = std::fs::write("/tmp/planted-by-path-module", "owned");
    }
    plant
};
