//! Half-precision gemv (`GpuStream::gemv`): A in f16 or bf16, x and y each f32 or A's type,
//! in any layout of [`SgemvLayout`]. Checked as sgemv is, then launched as the batched f32
//! kernel of the same op would be (same thread mapping and plan), on the entry for the types;
//! 16-byte aligned rows of A take the vectorized entries instead (Op::N with `incx == 1`,
//! Op::T with n a multiple of 8; [`half_gemv_choice`], a pure function of the call, with short
//! rows made shallow by [`short_walk`] on the device's resident warps).
use super::half_plan::{half_gemv_choice, short_walk, vector_columns_plan, vector_rows_grid, HalfGemvChoice};
use super::layout::{batched_kernel, SgemvBatch, SgemvLayout};
use super::options::SgemvOptions;
use super::plan::{Occupancy, SgemvExtra, SgemvPlan};
use super::shape::{RawSlice, SgemvCall, SgemvShape};
use super::work::SgemvWork;
use crate::entries::gemv_entry;
use crate::error::{Error, Result};
use crate::gpu::{GpuStream, KernelArgs};
use crate::launch::{check_grid, div_ceil};
use crate::raw::view;
use cust::memory::{DeviceCopy, DeviceSlice};
use half::{bf16, f16};
use kernels::config::SGEMV_BATCHED_BLOCK;
use kernels::sgemv::half_gemv::{GemvLoads, GEMV_KERNELS};
use kernels::sgemv::row_walk::RowWalk;
use kernels::sgemv::{Op, SgemvKernel};

/// A weight type of [`GpuStream::gemv`]: f16 or bf16.
pub trait HalfWeight: DeviceCopy {
    /// Its name in the kernels' table.
    const NAME: &'static str;
}

/// An element type of x or y in [`GpuStream::gemv`] with weights `A`: f32 or `A` itself.
pub trait GemvVector<A: HalfWeight>: DeviceCopy {
    /// Its name in the kernels' table.
    const NAME: &'static str;
}

macro_rules! half_weights {
    ($($a:ident),*) => {$(
        impl HalfWeight for $a {
            const NAME: &'static str = stringify!($a);
        }
        impl GemvVector<$a> for $a {
            const NAME: &'static str = stringify!($a);
        }
        impl GemvVector<$a> for f32 {
            const NAME: &'static str = "f32";
        }
    )*};
}
half_weights!(f16, bf16);

/// Position in `GEMV_KERNELS` of the kernel for element types `a`, `x`, `y`, `op` and `loads`.
pub fn half_gemv_index(a: &str, x: &str, y: &str, op: Op, loads: GemvLoads) -> Option<usize> {
    GEMV_KERNELS.iter().position(|e| e.a == a && e.x == x && e.y == y && e.op == op && e.loads == loads)
}

/// The kernel `stream.gemv` runs for element types A, X and Y on a checked `shape` in
/// `layout`: its position in `GEMV_KERNELS` and [`half_gemv_choice`]'s choice, whose
/// [`RowWalk::Short`] rows [`short_walk`] walks shallow where the `_ns` entry's resident warps
/// on this device would each get few tiles.
fn half_gemv_pick<A: HalfWeight, X: GemvVector<A>, Y: GemvVector<A>>(
    stream: &GpuStream,
    shape: &SgemvShape,
    layout: &SgemvLayout,
) -> Result<(usize, HalfGemvChoice)> {
    let sizes = [std::mem::size_of::<A>(), std::mem::size_of::<X>(), std::mem::size_of::<Y>()];
    let index_of = |choice: HalfGemvChoice| {
        half_gemv_index(A::NAME, X::NAME, Y::NAME, shape.op, choice.loads()).expect("a kernel for every type triple")
    };
    let mut choice = half_gemv_choice(shape, layout, sizes);
    if let HalfGemvChoice::VectorRows { lanes, walk: RowWalk::Short } = choice {
        let deep = gemv_entry(index_of(choice));
        let blocks_per_sm = stream.resident_threads(deep, SGEMV_BATCHED_BLOCK)? / SGEMV_BATCHED_BLOCK;
        let rows = shape.m.saturating_mul(layout.batch.count);
        let walk = short_walk(rows, lanes, stream.sm_count(), blocks_per_sm);
        choice = HalfGemvChoice::VectorRows { lanes, walk };
    }
    Ok((index_of(choice), choice))
}

/// The vectorized f32 entry and choice that `sgemv_batched`'s `Auto` takes for a checked
/// `shape` in a layout other than the single one, when [`half_gemv_choice`] allows 16-byte
/// loads; None keeps the scalar batched kernel of the op.
pub(super) fn f32_vector_pick(shape: &SgemvShape, layout: &SgemvLayout) -> Option<(usize, HalfGemvChoice)> {
    let choice = half_gemv_choice(shape, layout, [4; 3]);
    let index = half_gemv_index("f32", "f32", "f32", shape.op, GemvLoads::Vector).expect("the f32 vector entries");
    (choice != HalfGemvChoice::Scalar).then(|| (index, choice))
}

/// The entry point `sgemv_batched` runs with `Auto` on a checked `shape` (alpha ≠ 0, a nonempty
/// sum) in a layout other than the single one, as the benchmark names it.
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
pub fn sgemv_batched_entry_point(shape: &SgemvShape, layout: &SgemvLayout) -> &'static str {
    match f32_vector_pick(shape, layout) {
        Some((index, _)) => GEMV_KERNELS[index].name,
        None => batched_kernel(shape.op).entry_point(),
    }
}

/// The entry point `stream.gemv` runs for element types A, X and Y on a checked `shape`
/// (alpha ≠ 0, a nonempty sum) in `layout`, as the benchmark names it.
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
pub fn half_gemv_entry_point<A: HalfWeight, X: GemvVector<A>, Y: GemvVector<A>>(
    stream: &GpuStream,
    shape: &SgemvShape,
    layout: &SgemvLayout,
) -> Result<&'static str> {
    Ok(GEMV_KERNELS[half_gemv_pick::<A, X, Y>(stream, shape, layout)?.0].name)
}

impl GpuStream {
    /// `y_b = alpha · op(A_b) x_b + beta · y_b` for the `batch.count` problems of `batch` (one:
    /// [`SgemvBatch::ONE`]), A of f16 or bf16, x and y each f32 or A's type (cuBLAS's
    /// HSH/HSS/TST/TSS and the others), products and sums in f32, a half-precision y rounded
    /// to nearest even. As [`GpuStream::sgemv_batched`] in everything
    /// else (op, lda, incx, incy, alpha, beta, BLAS's quick returns, the checks and errors);
    /// `opts.kernel` must be `Auto` (`Unsupported` otherwise).
    #[allow(clippy::too_many_arguments)]
    pub fn gemv<A: HalfWeight, X: GemvVector<A>, Y: GemvVector<A>>(
        &self,
        m: usize,
        n: usize,
        a: &DeviceSlice<A>,
        x: &DeviceSlice<X>,
        y: &mut DeviceSlice<Y>,
        batch: SgemvBatch,
        opts: SgemvOptions,
    ) -> Result<()> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.gemv_raw::<A, X, Y>(
                m,
                n,
                a.as_device_ptr().as_raw(),
                a.len(),
                x.as_device_ptr().as_raw(),
                x.len(),
                y.as_device_ptr().as_raw(),
                y.len(),
                batch,
                opts,
            )
        }
    }

    /// [`GpuStream::gemv`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    #[allow(clippy::too_many_arguments)] // an address and a length for each buffer
    pub unsafe fn gemv_raw<A: HalfWeight, X: GemvVector<A>, Y: GemvVector<A>>(
        &self,
        m: usize,
        n: usize,
        a: u64,
        a_len: usize,
        x: u64,
        x_len: usize,
        y: u64,
        y_len: usize,
        batch: SgemvBatch,
        opts: SgemvOptions,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let a = &unsafe { view::<A>(a, a_len) };
        let x = &unsafe { view::<X>(x, x_len) };
        let y = &mut unsafe { view::<Y>(y, y_len) };
        if opts.kernel != SgemvKernel::Auto {
            return Err(Error::Unsupported { what: format!("{:?} for half-precision gemv (Auto only)", opts.kernel) });
        }
        let lda = opts.lda.unwrap_or(n);
        let layout = SgemvLayout { incx: opts.incx, incy: opts.incy, batch };
        let (a_raw, x_raw, y_raw) = (RawSlice::of(a), RawSlice::of(x), RawSlice::of(y));
        let sizes = [std::mem::size_of::<A>(), std::mem::size_of::<X>(), std::mem::size_of::<Y>()];
        let call = SgemvCall { op: opts.op, m, n, lda, a: a_raw, x: x_raw, y: y_raw };
        let shape = call.validate_sized(&layout, sizes)?;
        if batch.count == 0 {
            return Ok(());
        }
        let (shape, alpha) = match shape.work(opts.alpha, opts.beta, SgemvKernel::Auto)? {
            SgemvWork::Nothing => return Ok(()),
            SgemvWork::Launch { shape, alpha, .. } => (shape, alpha),
        };
        let (index, choice) = half_gemv_pick::<A, X, Y>(self, &shape, &layout)?;
        // SAFETY: `validate_sized` checked, with the element sizes, the lengths of A, x and y
        // for every problem, that y shares no byte with A or x and that the problems' y do not
        // interleave; `work` at most empties the inner dimension; `half_gemv_pick` gives the
        // entry for these types and op with `half_gemv_choice`'s choice (short rows' walk
        // deep or shallow, with the entry to match).
        unsafe { self.launch_gemv(index, choice, &shape, &layout, alpha, opts.beta, a, x, y) }
    }

    /// Launches entry `index` of `GEMV_KERNELS` as `choice` says on `shape` in `layout`.
    ///
    /// # Safety
    /// The entry takes A, x and y of these types and `shape.op`; `choice` is
    /// [`half_gemv_choice`]'s for the call (a `Short` walk may be made `ShallowShort`) and the
    /// entry's loads are `choice.loads()`; the call
    /// is checked (`validate_sized` with these element sizes, then `work`: alpha ≠ 0, a
    /// nonempty sum).
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn launch_gemv<A: DeviceCopy, X: DeviceCopy, Y: DeviceCopy>(
        &self,
        index: usize,
        choice: HalfGemvChoice,
        shape: &SgemvShape,
        layout: &SgemvLayout,
        alpha: f32,
        beta: f32,
        a: &DeviceSlice<A>,
        x: &DeviceSlice<X>,
        y: &mut DeviceSlice<Y>,
    ) -> Result<()> {
        let batch = layout.batch;
        let entry = gemv_entry(index);
        let blocks_per_sm = self.resident_threads(entry, SGEMV_BATCHED_BLOCK)? / SGEMV_BATCHED_BLOCK;
        let (mut extra, mut columns) = (Vec::new(), None);
        let (grid, block) = match choice {
            HalfGemvChoice::VectorRows { lanes, walk } => {
                let rows = shape.m.saturating_mul(batch.count);
                extra.push(lanes);
                let grid = vector_rows_grid(rows, walk, lanes, self.sm_count(), blocks_per_sm);
                (grid, SGEMV_BATCHED_BLOCK)
            }
            HalfGemvChoice::VectorColumns => {
                let plan = vector_columns_plan(shape.m, shape.n, batch.count, self.sm_count(), blocks_per_sm);
                extra.extend([plan.lanes, plan.rows_per_split]);
                columns = Some(plan);
                (plan.grid, SGEMV_BATCHED_BLOCK)
            }
            HalfGemvChoice::Scalar => {
                let kernel = batched_kernel(shape.op);
                let threads_per_sm = self.resident_threads(entry, kernel.block())?;
                let occupancy = Occupancy { sm_count: self.sm_count(), threads_per_sm };
                let plan = SgemvPlan::in_layout(kernel, shape, layout, occupancy)?;
                (plan.grid as usize, plan.block)
            }
        };
        let grid = check_grid(grid, self.max_grid_x())?;
        let mut args = KernelArgs::new();
        args.slice("A", a).slice("x", x).usize(shape.m).usize(shape.n).usize(shape.lda);
        args.f32(alpha).f32(beta).out("y", y);
        for value in SgemvExtra::Batched(*layout).values().into_iter().chain(extra) {
            args.usize(value);
        }
        let mut q = self.lock()?;
        if let Some(plan) = columns {
            // Partials per (split, problem, column) and a zeroed u32 counter per (problem,
            // tile), only with several splits (the kernel touches neither otherwise).
            let tile_counters = batch.count * plan.tiles;
            let (partials, counters) = if plan.splits > 1 {
                let floats = plan.splits * batch.count * shape.n;
                (q.partials(4 * floats)?, q.flagged_slots(div_ceil(tile_counters, 2))?)
            } else {
                (0, 0)
            };
            args.ptr(partials).ptr(counters);
        }
        // SAFETY: the entry takes (a: &[A], x: &[X], m, n, lda: usize, alpha, beta: f32,
        // y: *mut Y, incx, incy, stride_a, stride_x, stride_y, batch: usize)
        // (kernels/src/sgemv/half_gemv.rs), the batched kernels' layout, which
        // `SgemvExtra::Batched` gives in that order; then `lanes` for the `_nv`, `_ns` and `_ns4` entries, and
        // `lanes`, `rows_per_split`, partials and counters for the `_tv` entries.
        // The caller checked the call (lengths of A, x and y for every problem, y apart from
        // A and x and from the other problems' y; at most an emptied inner dimension, which
        // asks less of A and x). `half_gemv_choice` gives the
        // vectorized entries only with A's rows 16-byte aligned (Op::N: also incx = 1 and every
        // x aligned, `lanes` a power of two in 8..=32; Op::T: n a multiple of 8). Block and grid
        // are the batched kernel's plan for this layout, `vector_rows_grid`'s whole warps, or
        // `vector_columns_plan`'s blocks (problems · tiles · splits) with, for several splits,
        // splits · batch · n partial floats and a zeroed u32 per (problem, tile) from this
        // stream's locked scratch.
        unsafe { q.launch(entry, grid, block, &args) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_triple_and_op_has_one_kernel() {
        for &op in [Op::N, Op::T].iter() {
            for &a in ["f16", "bf16"].iter() {
                for &x in ["f32", a].iter() {
                    for &y in ["f32", a].iter() {
                        let i = half_gemv_index(a, x, y, op, GemvLoads::Scalar)
                            .unwrap_or_else(|| panic!("{} {} {} {:?}", a, x, y, op));
                        assert_eq!(GEMV_KERNELS[i].op, op);
                        let v = half_gemv_index(a, x, y, op, GemvLoads::Vector).expect("a vector kernel");
                        assert_eq!(GEMV_KERNELS[v].op, op);
                        // Short rows: Op::N with x of A's type; y either.
                        for &loads in [GemvLoads::ShortRows, GemvLoads::ShallowShortRows].iter() {
                            let short = half_gemv_index(a, x, y, op, loads);
                            assert_eq!(short.is_some(), op == Op::N && x == a, "{} {} {} {:?}", a, x, y, op);
                        }
                    }
                }
            }
            assert_eq!(half_gemv_index("f16", "bf16", "f32", op, GemvLoads::Scalar), None);
        }
        for &op in [Op::N, Op::T].iter() {
            assert_eq!(half_gemv_index("f32", "f32", "f32", op, GemvLoads::Scalar), None, "sgemv_batched_n/_t");
            assert_eq!(half_gemv_index("f32", "f32", "f32", op, GemvLoads::ShortRows), None, "f32 rows walk as Medium");
            assert_eq!(half_gemv_index("f32", "f32", "f32", op, GemvLoads::ShallowShortRows), None);
            let v = half_gemv_index("f32", "f32", "f32", op, GemvLoads::Vector).expect("an f32 vector kernel");
            assert_eq!(GEMV_KERNELS[v].op, op);
        }
        assert_eq!(GEMV_KERNELS.len(), 42);
        assert_eq!((<f32 as GemvVector<bf16>>::NAME, <bf16 as GemvVector<bf16>>::NAME), ("f32", "bf16"));
    }
}
