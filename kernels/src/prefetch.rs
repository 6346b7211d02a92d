//! L2 prefetch: reads `data` into L2 (`ld.global.cg`, 16 bytes per load, four in flight) and
//! keeps only an XOR of what it read, stored to `sink[0]`. It gives a kernel that must wait
//! (behind a collective) its first bytes in L2 when it starts. Limits: the 16-byte-aligned
//! body of `data` only; meant for grids far smaller than the device.
use crate::thread::{grid_position, load_v4_l2};
use cuda_std::prelude::*;

/// Thread mapping: 16-byte vector i goes to global thread i mod (threads in grid).
///
/// # Safety
/// `sink` holds one writable u32 (any thread may store to it).
#[kernel]
pub unsafe fn prefetch_l2(data: &[u8], sink: *mut u32) {
    let base = data.as_ptr();
    let head = (16 - base as usize % 16) % 16;
    let vecs = data.len().saturating_sub(head) / 16;
    let v = base.add(head) as *const [u32; 4];
    let (gid, stride) = grid_position();
    let mut acc = 0u32;
    let mut i = gid;
    while i + 3 * stride < vecs {
        let w = [
            load_v4_l2(v.add(i)),
            load_v4_l2(v.add(i + stride)),
            load_v4_l2(v.add(i + 2 * stride)),
            load_v4_l2(v.add(i + 3 * stride)),
        ];
        for x in w.iter() {
            acc ^= x[0] ^ x[1] ^ x[2] ^ x[3];
        }
        i += 4 * stride;
    }
    while i < vecs {
        let x = load_v4_l2(v.add(i));
        acc ^= x[0] ^ x[1] ^ x[2] ^ x[3];
        i += stride;
    }
    // Any thread's value will do: the store only keeps the loads from being dropped.
    if gid == 0 {
        *sink = acc;
    }
}
