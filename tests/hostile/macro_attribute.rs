// tries: an attribute assembled by a macro, so that no refused name is written next to `#[`
// at: items
// status: refused
// says: `#[$…]` is not allowed in a lab
macro_rules! keep {
    ($m:meta) => {
        #[$m]
        static KEPT: u8 = 0;
    };
}
keep!(used);
