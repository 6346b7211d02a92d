//! sgemv: `y = alpha · op(A) x + beta · y`, A row-major m×n with leading dimension `lda`,
//! op(A) = A ([`Op::N`]) or Aᵀ ([`Op::T`]).
//!
//! Files: `shape` (what a call passes, checked: `SgemvCall` → `SgemvShape`), `layout`
//! (incx/incy and strided batches, `SgemvLayout`), `half_gemv` (the same call with A in f16
//! or bf16, `GpuStream::gemv`, and the 16-byte-load kernels a batched f32 call takes),
//! `half_plan` (which of those kernels takes a call, and its launch), `dispatch` (`Auto`'s table and whether a named kernel can take a shape), `work`
//! (BLAS's quick return, alpha = 0 and empty sums), `plan` (grid, block and typed extra
//! arguments of one kernel for one shape). The planning types are public only with the
//! `internals` feature.
//!
//! The kernels themselves, and what each is (op, launch kind, loads), are the table
//! `kernels::sgemv::SGEMV_KERNELS`.
pub(crate) mod dispatch;
pub(crate) mod half_gemv;
pub(crate) mod half_plan;
pub(crate) mod layout;
mod options;
pub(crate) mod plan;
pub(crate) mod shape;
pub(crate) mod work;

use crate::entries::sgemv_entry;
use crate::error::Result;
use crate::gpu::{GpuStream, KernelArgs};
use crate::launch::{check_grid, div_ceil};
use crate::raw::view;
use cust::memory::DeviceSlice;
use half_gemv::f32_vector_pick;
pub use half_gemv::{GemvVector, HalfWeight};
use kernels::config::SGEMV_T_BLOCK;
pub use kernels::sgemv::{Op, SgemvKernel};
pub use layout::SgemvBatch;
pub(crate) use layout::SgemvLayout;
pub use options::SgemvOptions;
pub(crate) use plan::{Occupancy, SgemvPlan};
pub(crate) use shape::RawSlice;
pub(crate) use shape::{SgemvCall, SgemvShape};
pub(crate) use work::SgemvWork;

impl GpuStream {
    /// The kernel `Auto` runs for `shape` on this device: [`SgemvShape::auto_kernel`], with the
    /// depth of `TStripes` from the blocks of each depth the device keeps resident
    /// (`stripes_depth`). Tiles past every depth's one wave take `TVec4` where rows
    /// are float4 aligned (it was faster there), else depth 16. `internals` only: the kernel is
    /// otherwise chosen inside `sgemv`.
    #[cfg(feature = "internals")]
    pub fn sgemv_auto(&self, shape: &SgemvShape) -> Result<SgemvKernel> {
        self.auto_kernel(shape)
    }

    /// What `sgemv_auto` answers.
    pub(crate) fn auto_kernel(&self, shape: &SgemvShape) -> Result<SgemvKernel> {
        let kernel = shape.auto_kernel();
        if let SgemvKernel::TStripes(_) = kernel {
            let mut slots = Vec::new();
            for depth in dispatch::stripe_depths() {
                let entry = sgemv_entry(SgemvKernel::TStripes(depth).index().expect("a built depth"));
                slots.push((self.blocks_per_sm(entry, SGEMV_T_BLOCK)? * self.sm_count()) as usize);
            }
            return Ok(match dispatch::stripes_depth(shape.stripes_tiles(), &slots) {
                Some(depth) => SgemvKernel::TStripes(depth),
                None if shape.rows_aligned() => SgemvKernel::TVec4,
                None => SgemvKernel::TStripes(dispatch::stripe_depths().nth(1).expect("the middle depth")),
            });
        }
        Ok(kernel)
    }

    /// The launch of `kernel` (built, not `Auto`) for `shape` on this device, planned with the
    /// threads the device really keeps resident (`internals` feature).
    #[cfg(feature = "internals")]
    pub fn sgemv_plan(&self, kernel: SgemvKernel, shape: &SgemvShape) -> Result<SgemvPlan> {
        self.sgemv_plan_in(kernel, shape, &SgemvLayout::SINGLE)
    }

    /// `sgemv_plan` for the problems of `layout` (`SgemvPlan::in_layout`).
    pub(crate) fn sgemv_plan_in(
        &self,
        kernel: SgemvKernel,
        shape: &SgemvShape,
        layout: &SgemvLayout,
    ) -> Result<SgemvPlan> {
        let index = kernel.index().ok_or_else(|| dispatch::not_built(kernel))?;
        let threads_per_sm = self.resident_threads(sgemv_entry(index), kernel.block())?;
        SgemvPlan::in_layout(kernel, shape, layout, Occupancy { sm_count: self.sm_count(), threads_per_sm })
    }

    /// Enqueues `y = alpha · op(A) x + beta · y` (A row-major m×n, `opts.lda` ≥ n; `opts.op`)
    /// without waiting. An empty y does nothing. With nothing to sum (alpha = 0, or n = 0 for
    /// `N`, m = 0 for `T`) A and x are not read: y = beta · y, nothing at all with beta = 1, and
    /// a named kernel gives way to `Auto`'s for that (`SgemvShape::work`). With beta = 0, y
    /// is not read. With `opts.incx` or `opts.incy` above 1, x and y hold 1 + (len − 1)·inc
    /// elements (at least) and the batched kernels run (`SgemvLayout::kernel_for`). Errors,
    /// before anything is enqueued: `LengthMismatch` (A shorter than (m-1)·lda+n; x or y not n
    /// and m as `op` says), `LeadingDimension`, `Stride` (an increment of 0), `Overlap` (y
    /// shares memory with A's span or x), `Unsupported`/`Misaligned` for a named kernel that
    /// cannot take the input, `TooLarge`.
    pub fn sgemv(
        &self,
        m: usize,
        n: usize,
        a: &DeviceSlice<f32>,
        x: &DeviceSlice<f32>,
        y: &mut DeviceSlice<f32>,
        opts: SgemvOptions,
    ) -> Result<()> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.sgemv_raw(
                m,
                n,
                a.as_device_ptr().as_raw(),
                a.len(),
                x.as_device_ptr().as_raw(),
                x.len(),
                y.as_device_ptr().as_raw(),
                y.len(),
                opts,
            )
        }
    }

    /// [`GpuStream::sgemv`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    #[allow(clippy::too_many_arguments)] // an address and a length for each buffer
    pub unsafe fn sgemv_raw(
        &self,
        m: usize,
        n: usize,
        a: u64,
        a_len: usize,
        x: u64,
        x_len: usize,
        y: u64,
        y_len: usize,
        opts: SgemvOptions,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let a = &unsafe { view::<f32>(a, a_len) };
        let x = &unsafe { view::<f32>(x, x_len) };
        let y = &mut unsafe { view::<f32>(y, y_len) };
        self.sgemv_batched(m, n, a, x, y, SgemvBatch::ONE, opts)
    }

    /// [`GpuStream::sgemv`] for `batch.count` problems in one launch, as
    /// `cublasSgemvStridedBatched`: problem b reads A from `b·stride_a`, x from `b·stride_x`
    /// and writes y from `b·stride_y` (elements), each as `opts` says (op, lda, incx, incy,
    /// alpha, beta). A count of 0 does nothing. A, x and y must hold what the batch spans;
    /// the problems' y must not interleave (`Overlap { what: "y", with: "y" }`); strides of 0
    /// for A and x are allowed. Errors as [`GpuStream::sgemv`].
    #[allow(clippy::too_many_arguments)]
    pub fn sgemv_batched(
        &self,
        m: usize,
        n: usize,
        a: &DeviceSlice<f32>,
        x: &DeviceSlice<f32>,
        y: &mut DeviceSlice<f32>,
        batch: SgemvBatch,
        opts: SgemvOptions,
    ) -> Result<()> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.sgemv_batched_raw(
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

    /// [`GpuStream::sgemv_batched`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    #[allow(clippy::too_many_arguments)] // an address and a length for each buffer
    pub unsafe fn sgemv_batched_raw(
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
        let a = &unsafe { view::<f32>(a, a_len) };
        let x = &unsafe { view::<f32>(x, x_len) };
        let y = &mut unsafe { view::<f32>(y, y_len) };
        let lda = opts.lda.unwrap_or(n);
        let layout = SgemvLayout { incx: opts.incx, incy: opts.incy, batch };
        let (a_raw, x_raw, y_raw) = (RawSlice::of(a), RawSlice::of(x), RawSlice::of(y));
        let shape = SgemvCall { op: opts.op, m, n, lda, a: a_raw, x: x_raw, y: y_raw }.validate_in(&layout)?;
        if batch.count == 0 {
            return Ok(());
        }
        let (kernel, shape, alpha) = match shape.work(opts.alpha, opts.beta, opts.kernel)? {
            SgemvWork::Nothing => return Ok(()),
            SgemvWork::Launch { kernel, shape, alpha } => (kernel, shape, alpha),
        };
        if kernel == SgemvKernel::Auto && !layout.is_single() {
            if let Some((index, choice)) = f32_vector_pick(&shape, &layout) {
                // SAFETY: `validate_in` checked the call for f32 elements (lengths for every
                // problem, y apart from A, x and the other problems' y), `work` at most emptied
                // the inner dimension; `f32_vector_pick` gives the f32 entry of the op and
                // `half_gemv_choice`'s choice for the call.
                return unsafe { self.launch_gemv(index, choice, &shape, &layout, alpha, opts.beta, a, x, y) };
            }
        }
        let kernel = match layout.kernel_for(kernel, shape.op)? {
            SgemvKernel::Auto => self.auto_kernel(&shape)?,
            k => k,
        };
        shape.check(kernel)?;
        let plan = self.sgemv_plan_in(kernel, &shape, &layout)?;
        let entry = sgemv_entry(kernel.index().expect("checked: built"));
        let grid = check_grid(plan.grid as usize, self.max_grid_x())?;
        let mut q = self.lock()?;
        // Kernels that share output tiles take partials per (split, output) and a zeroed
        // counter per tile, allocated only with several splits (the kernels touch neither
        // otherwise).
        let (partials, counters) = if plan.splits > 1 {
            (q.partials(4 * plan.splits * shape.out_len())?, q.flagged_slots(div_ceil(plan.tiles, 2))?)
        } else {
            (0, 0)
        };
        let mut args = KernelArgs::new();
        args.slice("A", a).slice("x", x).usize(shape.m).usize(shape.n).usize(shape.lda);
        args.f32(alpha).f32(opts.beta).out("y", y);
        for extra in plan.extra.values() {
            args.usize(extra);
        }
        if kernel.entry().map_or(false, |e| e.launch.takes_partials()) {
            args.ptr(partials).ptr(counters);
        }
        // SAFETY: the entry takes (a: &[f32], x: &[f32], m, n, lda: usize, alpha, beta: f32,
        // y: *mut f32), then the extra usizes of its launch kind (`plan.extra`, in the order the
        // kernels' table gives them) and, for the kinds that share output tiles, partials and
        // counters (kernels/src/sgemv/mod.rs). `validate_in` checked the lengths of A, x and y
        // for every problem of the layout, that y shares no memory with A or x and that the
        // problems' y do not interleave; `kernel_for` gives a layout other than the single one
        // only to the batched kernels, whose extras carry it. `work` at most empties the inner
        // dimension, which asks less of A and x. `shape.check` checked the alignment and sizes
        // the kernel needs; the plan gives its block and grid, and with several splits the
        // partials (`splits` per output) and zeroed counters (one u32 per tile) from this
        // stream's locked scratch; with one split both are 0, which the kernels do not touch.
        unsafe { q.launch(entry, grid, plan.block, &args) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::sgemv::SGEMV_KERNELS;

    #[test]
    fn the_kernel_table_names_each_kernel_once() {
        for (i, k) in SgemvKernel::explicit().enumerate() {
            assert_eq!(k.index(), Some(i));
            assert_eq!(k.entry_point(), SGEMV_KERNELS[i].name);
            assert!(k.entry_point().starts_with("sgemv_"), "{:?}", k);
        }
        let mut names: Vec<_> = SGEMV_KERNELS.iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SGEMV_KERNELS.len(), "entry names are unique");
        assert_eq!(SgemvKernel::RowsPerWarp(4).entry_point(), "sgemv_rows4");
        assert_eq!(SgemvKernel::Vec4Rows(64).entry_point(), "sgemv_vec4_n64");
        assert_eq!((SgemvKernel::Auto.index(), SgemvKernel::RowsPerWarp(3).index()), (None, None));
    }
}
