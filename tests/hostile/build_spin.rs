// tries: to hold the shared build for ever with a constant the compiler evaluates without end
// at: items
// status: not-compiled
// says: the compiler was stopped
#[allow(long_running_const_eval)]
pub const SPIN: u64 = {
    let mut i = 1u64;
    while i != 0 {
        i = i.wrapping_mul(3);
    }
    i
};
