//! `Op::N` for few, very wide rows: block b owns column tile `b % tiles` (`8 · B` columns, B =
//! block size: thread t the float4s at 4t and 4t + 4B, their x in registers) over the `rows`
//! rows of group `b / tiles`. Rows go four at a time, eight loads in flight, each warp load 512
//! contiguous bytes (the access pattern of `transposed_stream`); a warp reduce-scatter (six
//! shuffles) leaves row j's warp sum in lane 8j. Warp sums fold in warp order into one partial
//! per (row, tile), rows `stride` (tiles rounded up to 4) apart; each row group's last block (a
//! ticket per group) folds the group's partials with float4 loads, four in flight, in a fixed
//! order. Deterministic. Limits: float4 only (aligned A and x, lda % 4 == 0,
//! n % 4 == 0); `rows` ≤ `SGEMV_WIDE_ROWS`; block = `SGEMV_WIDE_BLOCK`.
use super::problem::Gemv;
use super::tile_fold;
use crate::block::sync_threads;
use crate::config::{sgemv_wide_stride, SGEMV_WIDE_BLOCK, SGEMV_WIDE_ROWS, SGEMV_WIDE_TILE as TILE, WARP_SIZE};
use crate::shared::shared_array;
use crate::thread::{block_index, dot4, load_v4, load_v4_l2};
use crate::warp;
use core::ptr::write_volatile;
use cuda_std::thread::thread_idx_x;

const B: usize = SGEMV_WIDE_BLOCK as usize;
const WARPS: usize = B / WARP_SIZE as usize;

/// Thread mapping: see the file comment; after the rows, thread k < rows owns row k's partial.
pub unsafe fn rows(g: Gemv, rows: usize, partials: *mut f32, counters: *mut u32) {
    let warp_sums = shared_array!(SHARED_WIDE_WARP_SUMS: [f32; SGEMV_WIDE_ROWS * WARPS]);
    let stage = shared_array!(SHARED_WIDE_STAGE: [f32; SGEMV_WIDE_BLOCK as usize]);
    let tiles = core::cmp::max((g.n + TILE - 1) / TILE, 1);
    let b = block_index();
    let (group, tile) = (b / tiles, b % tiles);
    let tid = thread_idx_x() as usize;
    let r0 = group * rows;
    let count = core::cmp::min(r0 + rows, g.m) - r0;
    dot_rows(&g, tile, r0, count, warp_sums);
    sync_threads();
    let mine = tid < count;
    let mut sum = 0.0f32;
    if mine {
        for v in 0..WARPS {
            sum += *warp_sums.add(tid * WARPS + v);
        }
    }
    if tiles == 1 {
        if mine {
            g.store(r0 + tid, sum);
        }
        return;
    }
    let stride = sgemv_wide_stride(tiles);
    if mine {
        write_volatile(partials.add((r0 + tid) * stride + tile), sum);
    }
    if tile_fold::last_of_tile(counters.add(group), tiles as u32) {
        let lanes = B / count.next_power_of_two();
        *stage.add(tid) = fold_partials(partials, r0, stride, tiles, count, lanes);
        sync_threads();
        if mine {
            let mut total = 0.0f32;
            for s in 0..lanes {
                total += *stage.add(tid * lanes + s);
            }
            g.store(r0 + tid, total);
        }
    }
}

/// The `count` rows from `r0` against this thread's two float4 columns of tile `tile`, four rows
/// at a time; row j's warp sum goes to `warp_sums[j · WARPS + warp]`.
#[inline(always)]
unsafe fn dot_rows(g: &Gemv, tile: usize, r0: usize, count: usize, warp_sums: *mut f32) {
    let Gemv { a, x, n, lda, .. } = *g;
    let tid = thread_idx_x() as usize;
    let (w, lane) = (tid / WARP_SIZE as usize, tid % WARP_SIZE as usize);
    let c0 = tile * TILE + 4 * tid;
    let c1 = c0 + 4 * B;
    // A column group past n reads a live one again (a valid address) against zeros.
    let (live0, live1) = (c0 < n, c1 < n);
    let zero = [0u32; 4];
    let x0 = if live0 { load_v4(x.add(c0) as *const [u32; 4]) } else { zero };
    let x1 = if live1 { load_v4(x.add(c1) as *const [u32; 4]) } else { zero };
    let c0r = if live0 { c0 } else { 0 };
    let c1r = if live1 { c1 } else { c0r };
    let last_row = r0 + count - 1;
    let at = |r: usize, c: usize| load_v4(a.add(r * lda + c) as *const [u32; 4]);
    let mut k = 0;
    while k < count {
        // Rows past the group read its last row again; their sums are not stored.
        let r = r0 + k;
        let rs = [r, core::cmp::min(r + 1, last_row), core::cmp::min(r + 2, last_row), core::cmp::min(r + 3, last_row)];
        let v = [
            at(rs[0], c0r),
            at(rs[0], c1r),
            at(rs[1], c0r),
            at(rs[1], c1r),
            at(rs[2], c0r),
            at(rs[2], c1r),
            at(rs[3], c0r),
            at(rs[3], c1r),
        ];
        let mut p = [0.0f32; 4];
        for j in 0..4 {
            p[j] = dot4(v[2 * j], x0) + dot4(v[2 * j + 1], x1);
        }
        let s = warp::reduce_scatter4(p);
        let j = lane / 8;
        if lane % 8 == 0 && k + j < count {
            *warp_sums.add((k + j) * WARPS + w) = s;
        }
        k += 4;
    }
}

/// The last block of a row group: `lanes` threads per row, each summing the row's partial
/// float4s sub, sub + lanes, … (the padding past `tiles` as nothing), four in flight; the row's
/// threads are then added in order by the caller.
#[inline(always)]
unsafe fn fold_partials(partials: *mut f32, r0: usize, stride: usize, tiles: usize, count: usize, lanes: usize) -> f32 {
    let tid = thread_idx_x() as usize;
    let (row, sub) = (tid / lanes, tid % lanes);
    let mut acc = 0.0f32;
    if row < count {
        let p = partials.add((r0 + row) * stride) as *const [u32; 4];
        let quads = stride / 4;
        // Adds quad q's entries in order, entries past `tiles` (padding) as nothing.
        let add = |acc: f32, q: usize, v: [u32; 4]| {
            let mut acc = acc;
            for c in 0..4 {
                if 4 * q + c < tiles {
                    acc += f32::from_bits(v[c]);
                }
            }
            acc
        };
        let mut q = sub;
        while q + 3 * lanes < quads {
            let mut v = [[0u32; 4]; 4];
            for k in 0..4 {
                v[k] = load_v4_l2(p.add(q + k * lanes));
            }
            for k in 0..4 {
                acc = add(acc, q + k * lanes, v[k]);
            }
            q += 4 * lanes;
        }
        while q < quads {
            acc = add(acc, q, load_v4_l2(p.add(q)));
            q += lanes;
        }
    }
    acc
}
