// tries: an unsafe read of any address, hidden from a hand-written lexer by a raw byte string that ends in a backslash (`br"\"` reads to it as a string that runs on to the next quote)
// at: items
// status: refused
// says: `*pointer inside unsafe` is not allowed in a lab
const NOTE: &[u8] = br"\";
pub fn peek(address: usize) -> u8 {
    unsafe { *(address as *const u8) }
}
const END: &str = "";
