//! Half-precision gemv (`GpuStream::gemv`): A in f16 or bf16, x and y each f32 or A's type,
//! in any layout of [`SgemvLayout`]. Checked as sgemv is, then launched as the batched f32
//! kernel of the same op would be (same thread mapping and plan), on the entry for the types.
use super::layout::{SgemvBatch, SgemvLayout};
use super::options::SgemvOptions;
use super::plan::{Occupancy, SgemvPlan};
use super::shape::{RawSlice, SgemvCall};
use super::work::SgemvWork;
use crate::entries::half_gemv_entry;
use crate::error::{Error, Result};
use crate::gpu::{GpuStream, KernelArgs};
use crate::launch::check_grid;
use cust::memory::{DeviceCopy, DeviceSlice};
use half::{bf16, f16};
use kernels::sgemv::half_gemv::HALF_GEMV_KERNELS;
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

/// Position in `HALF_GEMV_KERNELS` of the kernel for element types `a`, `x`, `y` and `op`.
pub fn half_gemv_index(a: &str, x: &str, y: &str, op: Op) -> Option<usize> {
    HALF_GEMV_KERNELS.iter().position(|e| e.a == a && e.x == x && e.y == y && e.op == op)
}

/// The f32 kernel whose launch (block, plan) the half-precision kernels of `op` share.
fn launched_as(op: Op) -> SgemvKernel {
    if op == Op::N {
        SgemvKernel::BatchedN
    } else {
        SgemvKernel::BatchedT
    }
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
        let index = half_gemv_index(A::NAME, X::NAME, Y::NAME, shape.op).expect("a kernel for every type triple");
        let entry = half_gemv_entry(index);
        let kernel = launched_as(shape.op);
        let threads_per_sm = self.resident_threads(entry, kernel.block())?;
        let occupancy = Occupancy { sm_count: self.sm_count(), threads_per_sm };
        let plan = SgemvPlan::in_layout(kernel, &shape, &layout, occupancy)?;
        let grid = check_grid(plan.grid as usize, self.max_grid_x())?;
        let mut args = KernelArgs::new();
        args.slice("A", a).slice("x", x).usize(shape.m).usize(shape.n).usize(shape.lda);
        args.f32(alpha).f32(opts.beta).out("y", y);
        for extra in plan.extra.values() {
            args.usize(extra);
        }
        let q = self.lock()?;
        // SAFETY: the entry takes (a: &[A], x: &[X], m, n, lda: usize, alpha, beta: f32,
        // y: *mut Y, incx, incy, stride_a, stride_x, stride_y, batch: usize)
        // (kernels/src/sgemv/half_gemv.rs), the batched kernels' layout, which `plan.extra`
        // gives in that order. `validate_sized` checked, with the element sizes, the lengths of
        // A, x and y for every problem, that y shares no byte with A or x and that the
        // problems' y do not interleave; `work` at most empties the inner dimension. Block and
        // grid are the batched kernel's plan for this layout, with this entry's occupancy.
        unsafe { q.launch(entry, grid, plan.block, &args) }
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
                        let i = half_gemv_index(a, x, y, op).unwrap_or_else(|| panic!("{} {} {} {:?}", a, x, y, op));
                        assert_eq!(HALF_GEMV_KERNELS[i].op, op);
                    }
                }
            }
            assert_eq!(half_gemv_index("f16", "bf16", "f32", op), None);
        }
        assert_eq!(HALF_GEMV_KERNELS.len(), 16);
        assert_eq!((<f32 as GemvVector<bf16>>::NAME, <bf16 as GemvVector<bf16>>::NAME), ("f32", "bf16"));
    }
}
