//! Best-effort size of the memory access made by a faulting x86-64 instruction, for fault
//! reports ("wrote 4 bytes ..."). Covers the integer moves and SSE loads/stores/arithmetic
//! the kernels compile to (kernels are built without AVX); `None` when unsure.

/// The access size of the instruction starting at `code`.
pub fn access_size(code: &[u8]) -> Option<usize> {
    let mut i = 0;
    let (mut opsize16, mut rep_f3, mut rep_f2, mut rex_w) = (false, false, false, false);
    while let Some(&b) = code.get(i) {
        match b {
            0x66 => opsize16 = true,
            0xf3 => rep_f3 = true,
            0xf2 => rep_f2 = true,
            0x2e | 0x36 | 0x3e | 0x26 | 0x64 | 0x65 | 0x67 | 0xf0 => {}
            _ => break,
        }
        i += 1;
    }
    if let Some(&b) = code.get(i) {
        if (0x40..=0x4f).contains(&b) {
            rex_w = b & 0x08 != 0;
            i += 1;
        }
    }
    let int_size = if rex_w {
        8
    } else if opsize16 {
        2
    } else {
        4
    };
    let op = *code.get(i)?;
    if op != 0x0f {
        return match op {
            0x88 | 0x8a | 0xc6 | 0x80 | 0x00 | 0x02 | 0x38 | 0x3a | 0xf6 => Some(1),
            0x89 | 0x8b | 0xc7 | 0x81 | 0x83 | 0x01 | 0x03 | 0x29 | 0x2b | 0x39 | 0x3b | 0x21
            | 0x23 | 0x09 | 0x0b | 0x31 | 0x33 | 0x85 | 0xf7 | 0xff | 0xd1 | 0xc1 => Some(int_size),
            0x63 => Some(4),
            _ => None,
        };
    }
    let op2 = *code.get(i + 1)?;
    let sse_scalar = if rep_f3 {
        Some(4)
    } else if rep_f2 {
        Some(8)
    } else {
        Some(16)
    };
    match op2 {
        0xb6 | 0xbe => Some(1),
        0xb7 | 0xbf => Some(2),
        0xb0 => Some(1),
        0xb1 | 0xc1 => Some(int_size),
        // movups/movss/movsd, arithmetic (add, mul, sub, min, div, max, sqrt), conversions.
        0x10 | 0x11 | 0x51 | 0x58 | 0x59 | 0x5c | 0x5d | 0x5e | 0x5f => sse_scalar,
        0x2a => Some(int_size),
        0x2c | 0x2d => sse_scalar.map(|s| s.min(8)),
        0x5a => Some(if rep_f3 { 4 } else { 8 }),
        0x28 | 0x29 | 0x54 | 0x55 | 0x56 | 0x57 | 0x6f | 0x7f | 0xef | 0xfe | 0xd4 | 0xfa
        | 0xfb => Some(16),
        0x2e | 0x2f => Some(if opsize16 { 8 } else { 4 }),
        0x12 | 0x13 | 0x16 | 0x17 | 0xd6 => Some(8),
        0x6e | 0x7e => Some(if rep_f3 || rex_w { 8 } else { 4 }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::access_size;

    #[test]
    fn common_instructions() {
        assert_eq!(access_size(&[0xf3, 0x0f, 0x11, 0x04, 0x87]), Some(4)); // movss %xmm0,(%rdi,%rax,4)
        assert_eq!(access_size(&[0xf2, 0x0f, 0x10, 0x07]), Some(8)); // movsd (%rdi),%xmm0
        assert_eq!(access_size(&[0x89, 0x07]), Some(4)); // mov %eax,(%rdi)
        assert_eq!(access_size(&[0x48, 0x89, 0x07]), Some(8)); // mov %rax,(%rdi)
        assert_eq!(access_size(&[0x0f, 0x11, 0x07]), Some(16)); // movups %xmm0,(%rdi)
        assert_eq!(access_size(&[0xf3, 0x0f, 0x59, 0x04, 0x8e]), Some(4)); // mulss (...),%xmm0
        assert_eq!(access_size(&[0x0f, 0xb6, 0x07]), Some(1)); // movzbl (%rdi),%eax
        assert_eq!(access_size(&[0x0f, 0x0b]), None); // ud2
    }
}
