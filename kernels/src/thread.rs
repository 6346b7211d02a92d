//! Thread level: vector loads and each thread's share of a device-wide reduction.
use crate::config::{VECTOR_BYTES, VECTOR_UNROLL, WARP_SIZE};
use crate::ops::arg::{ArgElement, ArgFold};
use crate::ops::{Element, Fold, ReduceOp};
use cuda_std::thread::{block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};

/// One 16-byte read-only load (`ld.global.nc.v4.u32`). `p` must be 16-byte aligned.
#[inline(always)]
pub unsafe fn load_v4(p: *const [u32; 4]) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    asm!("ld.global.nc.v4.u32 {{{0}, {1}, {2}, {3}}}, [{4}];",
         out(reg32) a, out(reg32) b, out(reg32) c, out(reg32) d, in(reg64) p as u64,
         options(pure, readonly, nostack));
    [a, b, c, d]
}

/// `x`, through an instruction the optimizer cannot see into: a loop whose index steps through
/// it has no count LLVM can compute, so it is not unrolled, and its loads in flight (and the
/// registers they take) stay the ones the loop body writes.
#[inline(always)]
pub fn opaque(x: usize) -> usize {
    let r: u64;
    unsafe {
        asm!("mov.b64 {0}, {1};", out(reg64) r, in(reg64) x as u64, options(pure, nomem, nostack));
    }
    r as usize
}

/// One 16-byte load from L2, past L1 (`ld.global.cg.v4.u32`), for data other blocks stored
/// before this thread's acquire fence; not reordered across it (no `pure`). `p` 16-byte aligned.
#[inline(always)]
pub unsafe fn load_v4_l2(p: *const [u32; 4]) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    asm!("ld.global.cg.v4.u32 {{{0}, {1}, {2}, {3}}}, [{4}];",
         out(reg32) a, out(reg32) b, out(reg32) c, out(reg32) d, in(reg64) p as u64, options(nostack));
    [a, b, c, d]
}

/// Folds `load(k)` for k = `first`, `first` + `stride`, … below `count`, in order, eight loads
/// in flight: the fold of other blocks' partials (a piece's, a split's, a phase's) in the
/// `fold`, `pieces` and `tiles` kernels.
#[inline(always)]
pub unsafe fn fold_strided<O: ReduceOp, L: Fn(usize) -> O::Acc>(
    first: usize,
    stride: usize,
    count: usize,
    load: L,
) -> O::Acc {
    let (mut v, mut k) = (O::identity(), first);
    while k + 7 * stride < count {
        let b = [
            load(k),
            load(k + stride),
            load(k + 2 * stride),
            load(k + 3 * stride),
            load(k + 4 * stride),
            load(k + 5 * stride),
            load(k + 6 * stride),
            load(k + 7 * stride),
        ];
        for j in 0..8 {
            v = O::combine(v, b[j]);
        }
        k += 8 * stride;
    }
    while k < count {
        v = O::combine(v, load(k));
        k += stride;
    }
    v
}

/// One 16-byte store (`st.global.v4.u32`) of `w` at the global address of generic pointer `p`.
/// `p` must be 16-byte aligned.
#[inline(always)]
pub unsafe fn store_v4(p: *mut [u32; 4], w: [u32; 4]) {
    asm!("{{ .reg .u64 g; cvta.to.global.u64 g, {0}; st.global.v4.u32 [g], {{{1}, {2}, {3}, {4}}}; }}",
         in(reg64) p as u64, in(reg32) w[0], in(reg32) w[1], in(reg32) w[2], in(reg32) w[3], options(nostack));
}

/// The 16-byte vector of the `E::PER_VEC` elements `get(k)`, as [`load_v4`] reads one.
#[inline(always)]
pub fn pack_v4<E: Element>(get: impl Fn(usize) -> E) -> [u32; 4] {
    let mut w = [0u32; 4];
    let bits = 8 * VECTOR_BYTES / E::PER_VEC;
    for k in 0..E::PER_VEC {
        let (b, at) = (get(k).bits(), k * bits);
        w[at / 32] |= (b << (at % 32)) as u32;
        if bits == 64 {
            w[at / 32 + 1] = (b >> 32) as u32;
        }
    }
    w
}

/// Ends a batch of loads with a CTA-scope fence (`MEMBAR.ALL.CTA` in the SASS), which ptxas
/// moves no load across: every load of the batch is issued before the first instruction that
/// waits on one of them. Left to itself, ptxas may issue a batch's later loads only once the
/// products of its first have waited (the sm_90 SASS of the `_tv` pass issued its third 16-byte
/// load after the first product). ptxas may sink the fence below the batch's arithmetic, but
/// never a load; the kernels rely on it for no memory ordering. `tests/ptx.rs` lists the batches
/// that end with it.
#[inline(always)]
pub fn issue_loads_together() {
    // SAFETY: a fence; it reads and writes nothing.
    unsafe { asm!("fence.acq_rel.cta;", options(nostack)) }
}

/// This block's index, widened before any arithmetic: `block · B + tid` passes 2^32 on inputs
/// past 2^32 elements. Use it (and [`grid_blocks`]) wherever a block index scales an element index.
#[inline(always)]
pub fn block_index() -> usize {
    block_idx_x() as usize
}

/// Blocks in the grid, widened (see [`block_index`]).
#[inline(always)]
pub fn grid_blocks() -> usize {
    grid_dim_x() as usize
}

/// Global thread index and the number of threads in the grid, in 64 bits: a grid of one
/// element per thread over more than 2^32 elements has more than 2^32 threads.
#[inline(always)]
pub fn grid_position() -> (usize, usize) {
    let block = block_dim_x() as usize;
    (block_index() * block + thread_idx_x() as usize, grid_blocks() * block)
}

/// How `input` splits for 16-byte loads: (head, vectors, tail): the `head` elements before its
/// first 16-byte boundary, then that many whole vectors, then the elements from `tail` on.
#[inline(always)]
pub fn vector_split<E: Element>(input: &[E]) -> (usize, usize, usize) {
    let n = input.len();
    let misalign = input.as_ptr() as usize % VECTOR_BYTES;
    let head = if misalign == 0 { 0 } else { core::cmp::min((VECTOR_BYTES - misalign) / core::mem::size_of::<E>(), n) };
    let nvec = (n - head) / E::PER_VEC;
    (head, nvec, head + nvec * E::PER_VEC)
}

/// The four 16-byte vectors `i`, `i + step`, `i + 2·step` and `i + 3·step` of `vecs`: one
/// batch of the unrolled loops, its loads issued together.
#[inline(always)]
unsafe fn load_batch(vecs: *const [u32; 4], i: usize, step: usize) -> [[u32; 4]; 4] {
    [load_v4(vecs.add(i)), load_v4(vecs.add(i + step)), load_v4(vecs.add(i + 2 * step)), load_v4(vecs.add(i + 3 * step))]
}

/// This thread's fold of `input` with 16-byte vector loads and `VECTOR_UNROLL` loads in flight.
///
/// The slice may start anywhere: elements before the first 16-byte boundary (the head) and
/// after the last whole vector (the tail) are read one by one by the first threads.
/// Thread mapping: vector `i` goes to global thread `i mod (threads in grid)`, so adjacent
/// threads read adjacent 16-byte vectors; the assignment is fixed, hence deterministic.
#[inline(always)]
pub unsafe fn fold_vectorized<E: Element, O: Fold<E>>(input: &[E]) -> O::Acc {
    let (n, base) = (input.len(), input.as_ptr());
    let (head, nvec, tail) = vector_split(input);
    let (gid, stride) = grid_position();
    let mut acc = O::identity();
    if gid < head {
        acc = O::fold(acc, *base.add(gid));
    }
    if gid < n - tail {
        acc = O::fold(acc, *base.add(tail + gid));
    }
    let vecs = base.add(head) as *const [u32; 4];
    let unroll = VECTOR_UNROLL as usize;
    let batch = |i: usize| load_batch(vecs, i, stride);
    let mut i = gid;
    if O::PREFETCH && i + (unroll - 1) * stride < nvec {
        // The same batches in the same order, each one's loads issued before the last is folded.
        let mut current = batch(i);
        i += unroll * stride;
        while i + (unroll - 1) * stride < nvec {
            let next = batch(i);
            acc = O::fold_vec4(acc, &current);
            current = next;
            i += unroll * stride;
        }
        acc = O::fold_vec4(acc, &current);
    }
    while i + (unroll - 1) * stride < nvec {
        acc = O::fold_vec4(acc, &batch(i));
        i += unroll * stride;
    }
    while i < nvec {
        acc = O::fold_vec(acc, &load_v4(vecs.add(i)));
        i += stride;
    }
    acc
}

/// One lane's fold of the misaligned ends of the `n` elements at `base`: elements `..head` and
/// `tail..n`, element i to lane i mod lanes (each end holds up to `PER_VEC - 1` elements, more
/// than a narrow group has lanes).
#[inline(always)]
unsafe fn fold_ends<E: Element, O: Fold<E>>(
    base: *const E,
    (head, tail, n): (usize, usize, usize),
    lane: usize,
    lanes: usize,
) -> O::Acc {
    let mut acc = O::identity();
    let mut k = lane;
    while k < head {
        acc = O::fold(acc, *base.add(k));
        k += lanes;
    }
    k = tail + lane;
    while k < n {
        acc = O::fold(acc, *base.add(k));
        k += lanes;
    }
    acc
}

/// One lane's fold of the `n` elements at `base` shared by a group of `lanes` lanes (this one
/// is `lane`): 16-byte vector loads, four in flight, the range's misaligned head and
/// tail read one by one, as in [`fold_vectorized`] (without its prefetch form).
/// Thread mapping: vector `i` of the range, and head or tail element `i`, go to lane
/// `i mod lanes` of the group.
#[inline(always)]
pub unsafe fn fold_range<E: Element, O: Fold<E>>(base: *const E, n: usize, lane: usize, lanes: usize) -> O::Acc {
    let (head, nvec, tail) = vector_split(core::slice::from_raw_parts(base, n));
    let mut acc = fold_ends::<E, O>(base, (head, tail, n), lane, lanes);
    let vecs = base.add(head) as *const [u32; 4];
    let mut i = lane;
    while i + 3 * lanes < nvec {
        let v = load_batch(vecs, i, lanes);
        acc = O::fold_vec4(acc, &v);
        i += 4 * lanes;
    }
    while i < nvec {
        acc = O::fold_vec(acc, &load_v4(vecs.add(i)));
        i += lanes;
    }
    acc
}

/// One lane's fold of piece `piece` of `pieces` of the `n` elements at `base` (a row split
/// across groups of `lanes` lanes): the range's 16-byte vectors go in batches of four per lane
/// (`4·lanes` vectors), batch b to piece b mod pieces, so the pieces in flight read neighbouring
/// batches; the misaligned head and tail, one by one, to piece 0. With `PREFETCH` each batch's
/// loads go out before the last one is folded (two in flight, in the same order: 16 × 2^22 f32
/// row sums 17% faster on an H200, for 16 more registers).
/// Thread mapping: vector j of a batch to lane j mod lanes; head or tail element i to lane
/// i mod lanes of piece 0.
#[inline(always)]
pub unsafe fn fold_range_piece<E: Element, O: Fold<E>, const PREFETCH: bool>(
    base: *const E,
    n: usize,
    (piece, pieces): (usize, usize),
    lane: usize,
    lanes: usize,
) -> O::Acc {
    let (head, nvec, tail) = vector_split(core::slice::from_raw_parts(base, n));
    let mut acc = if piece == 0 { fold_ends::<E, O>(base, (head, tail, n), lane, lanes) } else { O::identity() };
    let vecs = base.add(head) as *const [u32; 4];
    // `load_batch`'s four vectors per lane.
    let batch = 4 * lanes;
    let mut first = piece * batch;
    if PREFETCH && first + batch <= nvec {
        // The next batch's loads go out before this one is folded: two batches in flight.
        let mut current = load_batch(vecs, first + lane, lanes);
        first += pieces * batch;
        while first + batch <= nvec {
            let next = load_batch(vecs, first + lane, lanes);
            acc = O::fold_vec4(acc, &current);
            current = next;
            first += pieces * batch;
        }
        acc = O::fold_vec4(acc, &current);
    }
    while first + batch <= nvec {
        acc = O::fold_vec4(acc, &load_batch(vecs, first + lane, lanes));
        first += pieces * batch;
    }
    // The last, partial batch, in the piece whose turn it is.
    let mut i = first + lane;
    while i < nvec {
        acc = O::fold_vec(acc, &load_v4(vecs.add(i)));
        i += lanes;
    }
    acc
}

/// This thread's (value, index) pair(s) of `input` for arg operator `O`, with the head and tail
/// of [`fold_vectorized`]: each 16-byte vector's extreme is found value-only and only the first
/// vector with the thread's furthest extreme is kept ([`crate::ops::arg::Track`]); at the end
/// the warp's lanes hand their best to lane 0, which finds its lane by loading that one vector
/// again. All 32 lanes of each warp call it.
/// Thread mapping: warp-contiguous batches. Warp `w` of the grid's `W` takes batches
/// `w, w + W, w + 2W, …` of `4 × 32` consecutive vectors; lane `l` takes vectors `l`, `l + 32`,
/// `l + 64` and `l + 96` of each, so a thread's vectors still ascend. One warp's batch is 2 KiB
/// of consecutive memory (grid-strided batches spread a thread's four loads over the grid).
#[inline(always)]
pub unsafe fn fold_arg_vectorized<E: ArgElement, O: ArgFold<E>>(input: &[E]) -> O::Acc {
    let (n, base) = (input.len(), input.as_ptr());
    let (head, nvec, tail) = vector_split(input);
    let (gid, stride) = grid_position();
    let mut acc = O::identity();
    if gid < head {
        acc = O::combine(acc, O::element(*base.add(gid), gid as u64));
    }
    if gid < n - tail {
        acc = O::combine(acc, O::element(*base.add(tail + gid), (tail + gid) as u64));
    }
    let vecs = base.add(head) as *const [u32; 4];
    const LANES: usize = WARP_SIZE as usize;
    const BATCH: usize = VECTOR_UNROLL as usize * LANES;
    let (lane, step) = (gid % LANES, stride / LANES * BATCH);
    let batch = |i: usize| load_batch(vecs, i, LANES);
    // This lane's four vectors of the batch at `i` are all in range.
    let whole = |i: usize| i + BATCH - LANES < nvec;
    let mut i = gid / LANES * BATCH + lane;
    let mut state = O::start(i);
    if O::PREFETCH && whole(i) {
        // The same batches in the same order, each one's loads issued before the last is seen.
        let mut current = batch(i);
        let mut at = i;
        i += step;
        while whole(i) {
            let next = batch(i);
            O::see4(&mut state, &current, at, LANES);
            current = next;
            at = i;
            i += step;
        }
        O::see4(&mut state, &current, at, LANES);
    }
    while whole(i) {
        O::see4(&mut state, &batch(i), i, LANES);
        i += step;
    }
    // The vectors of the one partial batch, if it is this warp's.
    let end = i + BATCH;
    while i < nvec && i < end {
        O::see(&mut state, &load_v4(vecs.add(i)), i);
        i += LANES;
    }
    // One lane per warp reads its warp's best vector back, not each lane its own: on a large
    // input those are scattered reads from DRAM at the end of the launch.
    O::combine(acc, O::resolve_in_warp(state, lane, nvec, head, |v| load_v4(vecs.add(v))))
}

/// One lane's (value, index) pair(s) of the `n` elements at `base` for arg operator `O`, shared
/// by a group of `lanes` lanes as in [`fold_range`] (same head, tail and mapping), vectors kept
/// as in [`fold_arg_vectorized`]. Indices count from `first` at `base`.
#[inline(always)]
pub unsafe fn fold_arg_range<E: ArgElement, O: ArgFold<E>>(
    base: *const E,
    n: usize,
    lane: usize,
    lanes: usize,
    first: usize,
) -> O::Acc {
    let (head, nvec, tail) = vector_split(core::slice::from_raw_parts(base, n));
    let mut acc = O::identity();
    // Head and tail hold up to `PER_VEC - 1` elements each, more than a narrow group has lanes.
    let mut k = lane;
    while k < head {
        acc = O::combine(acc, O::element(*base.add(k), (first + k) as u64));
        k += lanes;
    }
    k = tail + lane;
    while k < n {
        acc = O::combine(acc, O::element(*base.add(k), (first + k) as u64));
        k += lanes;
    }
    let vecs = base.add(head) as *const [u32; 4];
    let mut state = O::start(lane);
    let mut i = lane;
    while i + 3 * lanes < nvec {
        let batch = load_batch(vecs, i, lanes);
        for j in 0..4 {
            O::see(&mut state, &batch[j], i + j * lanes);
        }
        i += 4 * lanes;
    }
    while i < nvec {
        O::see(&mut state, &load_v4(vecs.add(i)), i);
        i += lanes;
    }
    O::combine(acc, O::resolve(state, nvec, first + head, |v| load_v4(vecs.add(v))))
}

/// One lane's (value, index) pair(s) of piece `piece` of `pieces` of the `n` elements at `base`
/// for arg operator `O`: [`track_arg_range_piece`], resolved by the lane itself.
#[inline(always)]
pub unsafe fn fold_arg_range_piece<E: ArgElement, O: ArgFold<E>, const PREFETCH: bool>(
    base: *const E,
    n: usize,
    piece: (usize, usize),
    lane: usize,
    lanes: usize,
) -> O::Acc {
    track_arg_range_piece::<E, O, PREFETCH>(base, n, piece, lane, lanes).resolve()
}

/// A lane's share of an arg reduction over a range before it finds its elements: the tracks of
/// its 16-byte vectors and its pair(s) of the elements outside them (piece 0's share of the
/// range's head and tail).
pub struct ArgTracks<E: ArgElement, O: ArgFold<E>> {
    pub tracks: O::State,
    pub edges: O::Acc,
    /// The range's vectors: `nvec` of them, from element `head`.
    pub vecs: *const [u32; 4],
    pub nvec: usize,
    pub head: usize,
    /// Whether the range has elements outside its vectors (the same for every piece of it).
    pub has_edges: bool,
}

impl<E: ArgElement, O: ArgFold<E>> ArgTracks<E, O> {
    /// Vector `v` of the range.
    #[inline(always)]
    pub unsafe fn vector(&self, v: usize) -> [u32; 4] {
        load_v4(self.vecs.add(v))
    }

    /// The lane's pair(s): its tracks resolved by reading their vectors again, with its edges.
    #[inline(always)]
    pub unsafe fn resolve(self) -> O::Acc {
        let vecs = self.vecs;
        O::combine(self.edges, O::resolve(self.tracks, self.nvec, self.head, |v| load_v4(vecs.add(v))))
    }
}

/// [`fold_arg_range_piece`]'s tracks: the batches of [`fold_range_piece`], vectors kept as in
/// [`fold_arg_range`], with or without `PREFETCH`; indices count from `base`.
#[inline(always)]
pub unsafe fn track_arg_range_piece<E: ArgElement, O: ArgFold<E>, const PREFETCH: bool>(
    base: *const E,
    n: usize,
    (piece, pieces): (usize, usize),
    lane: usize,
    lanes: usize,
) -> ArgTracks<E, O> {
    let (head, nvec, tail) = vector_split(core::slice::from_raw_parts(base, n));
    let mut acc = O::identity();
    if piece == 0 {
        let mut k = lane;
        while k < head {
            acc = O::combine(acc, O::element(*base.add(k), k as u64));
            k += lanes;
        }
        k = tail + lane;
        while k < n {
            acc = O::combine(acc, O::element(*base.add(k), k as u64));
            k += lanes;
        }
    }
    let vecs = base.add(head) as *const [u32; 4];
    let batch = 4 * lanes;
    let mut first = piece * batch;
    // This lane's first vector, in its first batch or the partial one.
    let mut state = O::start(first + lane);
    if PREFETCH && first + batch <= nvec {
        // The next batch's loads go out before this one is seen: two batches in flight.
        let mut current = load_batch(vecs, first + lane, lanes);
        let mut at = first;
        first += pieces * batch;
        while first + batch <= nvec {
            let next = load_batch(vecs, first + lane, lanes);
            for j in 0..4 {
                O::see(&mut state, &current[j], at + lane + j * lanes);
            }
            current = next;
            at = first;
            first += pieces * batch;
        }
        for j in 0..4 {
            O::see(&mut state, &current[j], at + lane + j * lanes);
        }
    }
    while first + batch <= nvec {
        let b = load_batch(vecs, first + lane, lanes);
        for j in 0..4 {
            O::see(&mut state, &b[j], first + lane + j * lanes);
        }
        first += pieces * batch;
    }
    let mut i = first + lane;
    while i < nvec {
        O::see(&mut state, &load_v4(vecs.add(i)), i);
        i += lanes;
    }
    ArgTracks { tracks: state, edges: acc, vecs, nvec, head, has_edges: head > 0 || tail < n }
}

/// Dot product of four A values with four x values (float4 loads as raw words).
#[inline(always)]
pub fn dot4(a: [u32; 4], x: [u32; 4]) -> f32 {
    let mut acc = 0.0f32;
    for k in 0..4 {
        acc += f32::from_bits(a[k]) * f32::from_bits(x[k]);
    }
    acc
}

/// Four consecutive floats at `p`: one `ld.global.nc.v4` when `VEC` (`p` 16-byte aligned),
/// else the first `count` (≤ 4) as scalar loads and zeros after them (any alignment).
#[inline(always)]
pub unsafe fn load4<const VEC: bool>(p: *const f32, count: usize) -> [u32; 4] {
    if VEC {
        return load_v4(p as *const [u32; 4]);
    }
    // Written out: a loop over `v` leaves it in local memory.
    let at = |k: usize| if k < count { (*p.add(k)).to_bits() } else { 0 };
    [at(0), at(1), at(2), at(3)]
}
