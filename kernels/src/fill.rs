//! Zero fill of a byte range of any alignment and length, one 16-byte store a thread: what the
//! host zeroes outputs with (the indices of one-element lines, a sum over nothing).
//!
//! # Safety
//! `dst` is the device address of `bytes` writable bytes, and the grid has at least
//! [`fill_threads`]`(dst, bytes)` threads.
//!
//! # Thread mapping
//! Thread g of the grid stores the g-th 16-byte vector from the range's first 16-byte boundary,
//! and byte g of the range's head (the bytes before that boundary) and of its tail (the bytes
//! after the last whole vector), each shorter than a vector.
use crate::config::VECTOR_BYTES;
#[cfg(target_os = "cuda")]
use crate::thread::{grid_position, store_v4};
#[cfg(target_os = "cuda")]
use cuda_std::prelude::*;

/// The fill's entry points, for the host's table.
pub const FILL_KERNELS: [&str; 1] = ["fill_zero"];

/// The `bytes` bytes from address `dst` as (head bytes before the first 16-byte boundary,
/// whole 16-byte vectors from there, tail bytes after them).
pub const fn fill_split(dst: u64, bytes: usize) -> (usize, usize, usize) {
    let misalign = (dst % VECTOR_BYTES as u64) as usize;
    let to_boundary = if misalign == 0 { 0 } else { VECTOR_BYTES - misalign };
    let head = if to_boundary < bytes { to_boundary } else { bytes };
    let vectors = (bytes - head) / VECTOR_BYTES;
    (head, vectors, bytes - head - vectors * VECTOR_BYTES)
}

/// Threads [`fill_zero`] needs for the range: one per vector, and one per head or tail byte.
pub const fn fill_threads(dst: u64, bytes: usize) -> usize {
    let (head, vectors, tail) = fill_split(dst, bytes);
    let edges = if head > tail { head } else { tail };
    if vectors > edges {
        vectors
    } else {
        edges
    }
}

#[cfg(target_os = "cuda")]
#[kernel]
pub unsafe fn fill_zero(dst: *mut u8, bytes: usize) {
    crate::grid_dependency::wait_for_prerequisite_grids();
    let (g, _) = grid_position();
    let (head, vectors, tail) = fill_split(dst as u64, bytes);
    if g < vectors {
        store_v4(dst.add(head + g * VECTOR_BYTES) as *mut [u32; 4], [0; 4]);
    }
    if g < head {
        *dst.add(g) = 0;
    }
    if g < tail {
        *dst.add(head + vectors * VECTOR_BYTES + g) = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_covers_the_range_with_aligned_vectors() {
        for dst in 0x7f00_0000_0000u64..0x7f00_0000_0000 + 48 {
            for bytes in (0..100).chain([1 << 20, (1 << 29) + 13]) {
                let (head, vectors, tail) = fill_split(dst, bytes);
                assert_eq!(head + vectors * VECTOR_BYTES + tail, bytes, "{:#x} + {}", dst, bytes);
                assert!(head < VECTOR_BYTES && tail < VECTOR_BYTES, "{:#x} + {}", dst, bytes);
                if vectors > 0 {
                    assert_eq!((dst + head as u64) % VECTOR_BYTES as u64, 0, "{:#x} + {}", dst, bytes);
                }
                let threads = fill_threads(dst, bytes);
                assert!(threads >= vectors && threads >= head && threads >= tail);
                assert_eq!(threads == 0, bytes == 0);
            }
        }
        assert_eq!(fill_split(0x1008, 5), (5, 0, 0), "short of the boundary: all head");
        assert_eq!(fill_split(0x1008, 40), (8, 2, 0));
        assert_eq!(fill_split(0x1000, 40), (0, 2, 8));
        assert_eq!(fill_threads(0x1000, 1 << 29), 1 << 25);
    }
}
