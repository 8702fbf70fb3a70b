// tries: code from a .txt file the scan does not read, pulled in by `include!` renamed by `use … as`, so that no `include!` is written anywhere
// at: items
// status: refused
// says: `include` is not allowed in a lab
use std::include as notes;
notes!("plan.txt");
// ---- plan.txt
#[used]
#[unsafe(link_section = ".init_array")]
static PLANT: extern "C" fn() = {
    extern "C" fn plant() {
        let _ = std::fs::write("/tmp/planted-by-renamed-include", "owned");
    }
    plant
};
