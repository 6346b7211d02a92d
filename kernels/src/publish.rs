//! Handing a value call's result to the host: the result, cut into 32-bit chunks, each stored
//! together with the call's sequence number (its tag) in one 64-bit word of the host's
//! page-locked memory.
//!
//! Why a tagged word cannot be torn or stale, on PCIe and on coherent (Grace) hosts alike: an
//! aligned 64-bit `st.relaxed.sys` is a strong store at system scope, which the PTX memory
//! model makes single-copy atomic for every observer of that scope, the CPU included; the
//! host's aligned 64-bit atomic load then sees either the whole word or none of it. A chunk
//! is accepted only from a word whose tag is this call's number, read in the same load, so no
//! ordering between words or fence is needed (a `st.release.sys` flag after the value would
//! be correct too, but its `MEMBAR.SYS` cost 0.6 µs per call on an H100).

/// A value as the host reads it back: its bytes in memory, as 32-bit chunks (chunk `i` holds
/// bytes `4i..4i + 4`, little-endian, zero past the end).
pub trait Chunks: Copy {
    /// Chunks the value takes: 1 to 4.
    const CHUNKS: usize;
    fn chunk(self, i: usize) -> u32;
}

/// A scalar's bits, zero-extended to 64.
pub trait Bits: Copy {
    const BYTES: usize;
    fn bits(self) -> u64;
}

macro_rules! scalar_chunks {
    ($($t:ty => |$v:ident| $bits:expr),* $(,)?) => {$(
        impl Bits for $t {
            const BYTES: usize = core::mem::size_of::<$t>();
            #[inline(always)]
            fn bits(self) -> u64 {
                let $v = self;
                $bits
            }
        }
        impl Chunks for $t {
            const CHUNKS: usize = (Self::BYTES + 3) / 4;
            #[inline(always)]
            fn chunk(self, i: usize) -> u32 {
                (self.bits() >> (32 * i)) as u32
            }
        }
    )*};
}
scalar_chunks!(
    u8 => |v| v as u64, i8 => |v| v as u8 as u64, u16 => |v| v as u64, i16 => |v| v as u16 as u64,
    u32 => |v| v as u64, i32 => |v| v as u32 as u64, u64 => |v| v, i64 => |v| v as u64,
    f32 => |v| v.to_bits() as u64, f64 => |v| v.to_bits(),
    half::f16 => |v| v.to_bits() as u64, half::bf16 => |v| v.to_bits() as u64,
);

/// `MinMax { min, max }` is `repr(C)`: min's bytes, then max's.
impl<T: Bits> Chunks for crate::config::MinMax<T> {
    const CHUNKS: usize = (2 * T::BYTES + 3) / 4;
    #[inline(always)]
    fn chunk(self, i: usize) -> u32 {
        if T::BYTES == 8 {
            let half = if i < 2 { self.min } else { self.max };
            (half.bits() >> (32 * (i % 2))) as u32
        } else {
            let both = self.min.bits() | self.max.bits().wrapping_shl(8 * T::BYTES as u32);
            (both >> (32 * i)) as u32
        }
    }
}

/// `st.relaxed.sys` of 64 bits (see the module's header for why it is whole to the host).
#[inline(always)]
unsafe fn store_relaxed_sys(p: *mut u64, v: u64) {
    asm!("st.relaxed.sys.global.u64 [{0}], {1};", in(reg64) p as u64, in(reg64) v, options(nostack));
}

/// Stores `v` into the host's words at `tagged` (`A::CHUNKS` of them, 8-byte aligned,
/// device-addressable page-locked memory), each chunk in the low half of a word whose high
/// half is `seq`.
#[inline(always)]
pub unsafe fn publish<A: Chunks>(v: A, tagged: *mut u64, seq: u32) {
    let tag = (seq as u64) << 32;
    for i in 0..A::CHUNKS {
        store_relaxed_sys(tagged.add(i), tag | v.chunk(i) as u64);
    }
}
