//! Block level: a shuffle-based block reduction and the ways blocks hand on their result.
use crate::config::{finish, WARP_SIZE};
use crate::ops::{AtomicAdd, ReduceOp};
use crate::publish::{publish, Chunks};
use crate::shared::shared_array;
use crate::warp;
use core::ptr::{read_volatile, write_volatile};
use core::sync::atomic::Ordering;
use cuda_std::thread::{block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};

/// Block barrier as the non-aligned `barrier.sync 0`. cuda_std's `sync_threads` emits
/// `bar.sync` (= `barrier.sync.aligned`), which this codegen may tail-duplicate into divergent
/// branches; an aligned barrier reached from different instructions within a warp hangs on
/// Volta and later. The non-aligned form counts each thread wherever it arrives.
#[inline(always)]
pub fn sync_threads() {
    unsafe { asm!("barrier.sync 0;") }
}

/// Reduces one value per thread over the block: warp shuffles, one value per warp in shared
/// memory, then warp 0 folds those. The result is valid in warp 0 (thread 0 writes it out).
/// The fold order is fixed, so the result is deterministic. Every thread must call it.
#[inline(always)]
pub unsafe fn reduce<O: ReduceOp>(v: O::Acc) -> O::Acc {
    // 32 warps × at most 32 bytes (a MinMax<ValueIndex<f64>>).
    let scratch = shared_array!(SHARED_BLOCK_REDUCE: [u64; 128]) as *mut O::Acc;
    let tid = thread_idx_x();
    let (w, lane) = (tid / WARP_SIZE, tid % WARP_SIZE);
    let warp_value = warp::reduce::<O>(v);
    sync_threads(); // a previous call may still be reading the scratch
    if lane == 0 {
        *scratch.add(w as usize) = warp_value;
    }
    sync_threads();
    let mut r = O::identity();
    if w == 0 {
        if lane < (block_dim_x() + WARP_SIZE - 1) / WARP_SIZE {
            r = *scratch.add(lane as usize);
        }
        r = warp::reduce::<O>(r);
    }
    r
}

/// Folds one value per warp (each warp's lane 0 holds it) in warp order: the result is valid in
/// thread 0. Deterministic. Every thread must call it.
#[inline(always)]
pub unsafe fn fold_warps<O: ReduceOp>(v: O::Acc) -> O::Acc {
    // 32 warps × at most 32 bytes (a MinMax<ValueIndex<f64>>).
    let scratch = shared_array!(SHARED_WARP_FOLD: [u64; 128]) as *mut O::Acc;
    let tid = thread_idx_x();
    sync_threads(); // thread 0 may still be reading a previous call's values
    if tid % WARP_SIZE == 0 {
        *scratch.add((tid / WARP_SIZE) as usize) = v;
    }
    sync_threads();
    let mut r = O::identity();
    if tid == 0 {
        for w in 0..(block_dim_x() / WARP_SIZE) as usize {
            r = O::combine(r, *scratch.add(w));
        }
    }
    r
}

/// Folds `values[tid], values[tid + blockDim], …` per thread, then over the block: a
/// fixed-order (deterministic) reduction of a short array by one block. `volatile` reads,
/// since other blocks of this grid may have just written them.
#[inline(always)]
pub unsafe fn reduce_array<O: ReduceOp>(values: *const O::Acc, len: usize) -> O::Acc {
    let mut acc = O::identity();
    let mut i = thread_idx_x() as usize;
    while i < len {
        acc = O::combine(acc, read_volatile(values.add(i)));
        i += block_dim_x() as usize;
    }
    reduce::<O>(acc)
}

/// Acquire-release fence at GPU scope (`fence.acq_rel.gpu`): orders this thread's earlier
/// writes before its later ones for every block. Lighter than `membar.gl` (= `fence.sc.gpu`),
/// which cuda_std's `device_fence` emits; the last-block hand-off needs only acquire-release.
#[inline(always)]
pub fn fence_acq_rel_gpu() {
    unsafe { asm!("fence.acq_rel.gpu;") }
}

/// Where a kernel's final result goes: `ptr` in device memory or, for a value call (`tagged`
/// not null), the host's words at `tagged`, tagged with the call's sequence number `seq`
/// ([`publish`]).
#[derive(Clone, Copy)]
pub struct Out<A> {
    pub ptr: *mut A,
    pub tagged: *mut u64,
    pub seq: u32,
}

impl<A: Chunks> Out<A> {
    /// A result that goes to device memory only.
    #[inline(always)]
    pub fn device(ptr: *mut A) -> Out<A> {
        Out { ptr, tagged: core::ptr::null_mut(), seq: 0 }
    }
}

/// Where a kernel's final result of type `A` goes.
pub trait Store<A>: Copy {
    /// Stores the final result `v`: every kernel's last store, by one thread.
    unsafe fn store(self, v: A);
}

impl<A: Chunks> Store<A> for Out<A> {
    #[inline(always)]
    unsafe fn store(self, v: A) {
        if self.tagged.is_null() {
            *self.ptr = v;
        } else {
            publish(v, self.tagged, self.seq);
        }
    }
}

/// `finish::LAST_BLOCK`: every block stores its value (valid in thread 0) to `partials`, takes
/// a ticket, and the last block folds all partials in block order into `out`, then resets
/// `counter` to 0 for the next launch. One launch, deterministic. A one-block grid stores its
/// value straight to `out`.
#[inline(always)]
pub unsafe fn finish_last_block<O: ReduceOp, S: Store<O::Acc>>(v: O::Acc, partials: *mut O::Acc, counter: *mut u32, out: S) {
    let is_last = shared_array!(SHARED_BLOCK_IS_LAST: [u32; 1]);
    let grid = grid_dim_x();
    if grid == 1 {
        // One block: its value is the result; no partial, ticket or fence (small value calls).
        if thread_idx_x() == 0 {
            out.store(v);
        }
        return;
    }
    if thread_idx_x() == 0 {
        O::put_partial(partials.add(block_idx_x() as usize), v);
        fence_acq_rel_gpu();
        let ticket = cuda_std::atomic::mid::atomic_fetch_add_u32_device(counter, Ordering::Relaxed, 1);
        *is_last = (ticket == grid - 1) as u32;
    }
    sync_threads();
    if *is_last != 0 {
        fence_acq_rel_gpu();
        let total = reduce_array::<O>(partials, grid as usize);
        if thread_idx_x() == 0 {
            out.store(total);
            write_volatile(counter, 0);
        }
    }
}

/// A 32-bit accumulator carried in the low word of a flagged slot.
pub trait Word: Copy {
    fn to_word(self) -> u32;
    fn from_word(w: u32) -> Self;
}
impl Word for f32 {
    #[inline(always)]
    fn to_word(self) -> u32 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_word(w: u32) -> Self {
        f32::from_bits(w)
    }
}
impl Word for i32 {
    #[inline(always)]
    fn to_word(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn from_word(w: u32) -> Self {
        w as i32
    }
}

/// The high word of a filled slot.
const READY: u64 = 1 << 32;

/// `st.relaxed.gpu` of 64 bits: single-copy atomic, so value and flag become visible together.
#[inline(always)]
unsafe fn store_relaxed_gpu(p: *mut u64, v: u64) {
    asm!("st.relaxed.gpu.global.u64 [{0}], {1};", in(reg64) p as u64, in(reg64) v, options(nostack));
}

/// `ld.relaxed.gpu` of 64 bits (from L2, never a stale L1 line); not hoisted out of a loop.
#[inline(always)]
unsafe fn load_relaxed_gpu(p: *const u64) -> u64 {
    let v: u64;
    asm!("ld.relaxed.gpu.global.u64 {0}, [{1}];", out(reg64) v, in(reg64) p as u64, options(nostack));
    v
}

/// `ld.relaxed.gpu` of a 32-bit counter (from L2); not hoisted out of a loop.
#[inline(always)]
pub unsafe fn load_u32_relaxed_gpu(p: *const u32) -> u32 {
    let v: u32;
    asm!("ld.relaxed.gpu.global.u32 {0}, [{1}];", out(reg32) v, in(reg64) p as u64, options(nostack));
    v
}

/// Waits until `slot` is filled, clears it for the next launch and returns its value.
#[inline(always)]
unsafe fn take_slot<T: Word>(slot: *mut u64, mut w: u64) -> T {
    while w & READY == 0 {
        w = load_relaxed_gpu(slot);
    }
    write_volatile(slot, 0);
    T::from_word(w as u32)
}

/// `finish::FLAGGED`, as a block starts: thread 0 draws the block's ticket from `counter` (its
/// result is used only at the end, so the atomic's latency hides behind the block's loads). 0 for
/// other modes, other threads and a one-block grid.
#[inline(always)]
pub unsafe fn start_ticket(mode: u32, counter: *mut u32) -> u32 {
    if mode == finish::FLAGGED && thread_idx_x() == 0 && grid_dim_x() > 1 {
        cuda_std::atomic::mid::atomic_fetch_add_u32_device(counter, Ordering::Relaxed, 1)
    } else {
        0
    }
}

/// `finish::FLAGGED`: every block stores (ready, value) in its slot, one 64-bit word: no fence.
/// The block that drew the last ticket (`start_ticket`) folds every slot in block order into
/// `out`, clearing them, and resets `counter`; the others exit.
///
/// Progress under any dispatch order: the folding block waits only for blocks that drew their
/// tickets before it, so they are running, and they wait for nothing. Deterministic: the fold
/// follows block order whichever block folds. A one-block grid stores its value straight out.
#[inline(always)]
pub unsafe fn finish_flagged<O: ReduceOp>(v: O::Acc, ticket: u32, slots: *mut u64, counter: *mut u32, out: Out<O::Acc>)
where
    O::Acc: Word + Chunks,
{
    let folds = shared_array!(SHARED_FLAGGED_FOLDS: [u32; 1]);
    let (grid, tid) = (grid_dim_x(), thread_idx_x());
    if grid == 1 {
        if tid == 0 {
            out.store(v);
        }
        return;
    }
    if tid == 0 {
        store_relaxed_gpu(slots.add(block_idx_x() as usize), READY | v.to_word() as u64);
        *folds = (ticket == grid - 1) as u32;
    }
    sync_threads();
    if *folds == 0 {
        return;
    }
    let (len, step) = (grid as usize, block_dim_x() as usize);
    let mut acc = O::identity();
    let mut i = tid as usize;
    while i + 3 * step < len {
        let p = [slots.add(i), slots.add(i + step), slots.add(i + 2 * step), slots.add(i + 3 * step)];
        let w = [load_relaxed_gpu(p[0]), load_relaxed_gpu(p[1]), load_relaxed_gpu(p[2]), load_relaxed_gpu(p[3])];
        for k in 0..4 {
            acc = O::combine(acc, take_slot::<O::Acc>(p[k], w[k]));
        }
        i += 4 * step;
    }
    while i < len {
        acc = O::combine(acc, take_slot::<O::Acc>(slots.add(i), load_relaxed_gpu(slots.add(i))));
        i += step;
    }
    let total = reduce::<O>(acc);
    if tid == 0 {
        out.store(total);
        // Every other block drew its ticket before this one's: no later add of this launch.
        write_volatile(counter, 0);
    }
}

/// Hands the block's value (valid in thread 0) on as `mode` says (see [`finish`]); `ticket` is
/// the block's [`start_ticket`].
#[inline(always)]
pub unsafe fn emit<O: AtomicAdd>(
    v: O::Acc,
    mode: u32,
    ticket: u32,
    partials: *mut O::Acc,
    counter: *mut u32,
    out: Out<O::Acc>,
)
where
    O::Acc: Word + Chunks,
{
    match mode {
        finish::ATOMIC => {
            if thread_idx_x() == 0 {
                O::atomic_add(out.ptr, v);
            }
        }
        finish::LAST_BLOCK => finish_last_block::<O, _>(v, partials, counter, out),
        finish::FLAGGED => finish_flagged::<O>(v, ticket, partials as *mut u64, counter, out),
        _ => {
            if thread_idx_x() == 0 {
                *partials.add(block_idx_x() as usize) = v;
            }
        }
    }
}
