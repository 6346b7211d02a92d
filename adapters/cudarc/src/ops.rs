//! The entry points: the library's, with a cudarc stream first and cudarc buffers for its
//! slices. Each checks the stream and buffers, takes the addresses for the stream (inputs with
//! `device_ptr`, outputs with `device_ptr_mut`), lets the library enqueue, then drops the
//! guards (the crate docs' "Ordering"). Errors and semantics are the library's.
//!
//! Every `unsafe` block below calls a raw entry point with addresses and lengths of cudarc
//! buffers of the device's primary context (checked by `Kernels::call`), taken for the call's
//! stream, whose guards are dropped only after the enqueue: they stay allocated and unwritten
//! by other work until the enqueued work has run, as the raw entry points ask.
use crate::element::{value_index, Element, Sum};
use crate::error::Result;
use crate::kernels::{lent, Kernels};
use cudakernels::{
    ArgOp, Axis, AxisIndex, AxisShape, AxisStrategy, GemvVector, HalfWeight, ReduceStrategy, SgemvBatch, SgemvOptions,
    SumElement, TypedOp, ValueIndex,
};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;

/// Typed reductions (`GpuStream::sum` and the others).
impl Kernels {
    /// Sum of `input` in its wider accumulator ([`Sum`]; 0 when empty). Returns once the
    /// result has arrived.
    pub fn sum<E: Element>(&self, stream: &Arc<CudaStream>, input: &impl DevicePtr<E>) -> Result<Sum<E>> {
        let call = self.call(stream, &[lent("input", input)])?;
        let len = input.len();
        let (x, xg) = input.device_ptr(stream);
        call.ready()?;
        // SAFETY: a cudarc buffer taken for `stream`, its guard held past the enqueue (module docs).
        let r = unsafe { call.kernels().sum_raw::<E::Kernel>(x, len) };
        call.done(r, xg)
    }

    /// Enqueues the sum of `input` into `out[0]` without waiting.
    pub fn sum_into<E: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<E>,
        out: &mut impl DevicePtrMut<Sum<E>>,
    ) -> Result<()> {
        let call = self.call(stream, &[lent("input", input), lent("out", out)])?;
        let (len, out_len) = (input.len(), out.len());
        let (x, xg) = input.device_ptr(stream);
        let (o, og) = out.device_ptr_mut(stream);
        call.ready()?;
        // SAFETY: cudarc buffers taken for `stream`, their guards held past the enqueue (module docs).
        let r = unsafe { call.kernels().sum_into_raw::<E::Kernel>(x, len, o, out_len) };
        call.done(r, (xg, og))
    }

    /// Sum of f32 `input` accumulated in f64.
    pub fn sum_f32_f64acc(&self, stream: &Arc<CudaStream>, input: &impl DevicePtr<f32>) -> Result<f64> {
        let call = self.call(stream, &[lent("input", input)])?;
        let len = input.len();
        let (x, xg) = input.device_ptr(stream);
        call.ready()?;
        // SAFETY: a cudarc buffer taken for `stream`, its guard held past the enqueue (module docs).
        let r = unsafe { call.kernels().sum_f32_f64acc_raw(x, len) };
        call.done(r, xg)
    }

    /// Enqueues the f64-accumulated sum of f32 `input` into `out[0]` without waiting.
    pub fn sum_f32_f64acc_into(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<f32>,
        out: &mut impl DevicePtrMut<f64>,
    ) -> Result<()> {
        let call = self.call(stream, &[lent("input", input), lent("out", out)])?;
        let (len, out_len) = (input.len(), out.len());
        let (x, xg) = input.device_ptr(stream);
        let (o, og) = out.device_ptr_mut(stream);
        call.ready()?;
        // SAFETY: cudarc buffers taken for `stream`, their guards held past the enqueue (module docs).
        let r = unsafe { call.kernels().sum_f32_f64acc_into_raw(x, len, o, out_len) };
        call.done(r, (xg, og))
    }

    /// Minimum of `input` (floats: NaN propagates, -0.0 below +0.0); `Error::Empty` when empty.
    pub fn min<E: Element>(&self, stream: &Arc<CudaStream>, input: &impl DevicePtr<E>) -> Result<E> {
        let call = self.call(stream, &[lent("input", input)])?;
        let len = input.len();
        let (x, xg) = input.device_ptr(stream);
        call.ready()?;
        // SAFETY: a cudarc buffer taken for `stream`, its guard held past the enqueue (module docs).
        let r = unsafe { call.kernels().min_raw::<E::Kernel>(x, len) };
        call.done(r, xg).map(E::from_kernel)
    }

    /// Maximum of `input`; `Error::Empty` when empty.
    pub fn max<E: Element>(&self, stream: &Arc<CudaStream>, input: &impl DevicePtr<E>) -> Result<E> {
        let call = self.call(stream, &[lent("input", input)])?;
        let len = input.len();
        let (x, xg) = input.device_ptr(stream);
        call.ready()?;
        // SAFETY: a cudarc buffer taken for `stream`, its guard held past the enqueue (module docs).
        let r = unsafe { call.kernels().max_raw::<E::Kernel>(x, len) };
        call.done(r, xg).map(E::from_kernel)
    }

    /// (minimum, maximum) of `input` in one pass; `Error::Empty` when empty.
    pub fn minmax<E: Element>(&self, stream: &Arc<CudaStream>, input: &impl DevicePtr<E>) -> Result<(E, E)> {
        let call = self.call(stream, &[lent("input", input)])?;
        let len = input.len();
        let (x, xg) = input.device_ptr(stream);
        call.ready()?;
        // SAFETY: a cudarc buffer taken for `stream`, its guard held past the enqueue (module docs).
        let r = unsafe { call.kernels().minmax_raw::<E::Kernel>(x, len) };
        call.done(r, xg).map(|(lo, hi)| (E::from_kernel(lo), E::from_kernel(hi)))
    }

    /// Enqueues min, max or minmax (`op`) of `input` into `out` without waiting (minmax:
    /// `out[0]` = min, `out[1]` = max); sums: [`Kernels::sum_into`].
    pub fn reduce_into<E: Element>(
        &self,
        stream: &Arc<CudaStream>,
        op: TypedOp,
        input: &impl DevicePtr<E>,
        out: &mut impl DevicePtrMut<E>,
    ) -> Result<()> {
        let call = self.call(stream, &[lent("input", input), lent("out", out)])?;
        let (len, out_len) = (input.len(), out.len());
        let (x, xg) = input.device_ptr(stream);
        let (o, og) = out.device_ptr_mut(stream);
        call.ready()?;
        // SAFETY: cudarc buffers taken for `stream`, their guards held past the enqueue (module docs).
        let r = unsafe { call.kernels().reduce_into_raw::<E::Kernel>(op, x, len, o, out_len) };
        call.done(r, (xg, og))
    }
}

/// Arg reductions (`GpuStream::argmax` and the others): ties go to the smallest index; NaN is
/// the extreme both ways (the first NaN wins).
impl Kernels {
    /// The smallest value of `input` and its first index; `Error::Empty` when empty.
    pub fn argmin<E: Element>(&self, stream: &Arc<CudaStream>, input: &impl DevicePtr<E>) -> Result<ValueIndex<E>> {
        let call = self.call(stream, &[lent("input", input)])?;
        let len = input.len();
        let (x, xg) = input.device_ptr(stream);
        call.ready()?;
        // SAFETY: a cudarc buffer taken for `stream`, its guard held past the enqueue (module docs).
        let r = unsafe { call.kernels().argmin_raw::<E::Kernel>(x, len) };
        call.done(r, xg).map(value_index)
    }

    /// The largest value of `input` and its first index; `Error::Empty` when empty.
    pub fn argmax<E: Element>(&self, stream: &Arc<CudaStream>, input: &impl DevicePtr<E>) -> Result<ValueIndex<E>> {
        let call = self.call(stream, &[lent("input", input)])?;
        let len = input.len();
        let (x, xg) = input.device_ptr(stream);
        call.ready()?;
        // SAFETY: a cudarc buffer taken for `stream`, its guard held past the enqueue (module docs).
        let r = unsafe { call.kernels().argmax_raw::<E::Kernel>(x, len) };
        call.done(r, xg).map(value_index)
    }

    /// (argmin, argmax) of `input` in one pass; `Error::Empty` when empty.
    pub fn argminmax<E: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<E>,
    ) -> Result<(ValueIndex<E>, ValueIndex<E>)> {
        let call = self.call(stream, &[lent("input", input)])?;
        let len = input.len();
        let (x, xg) = input.device_ptr(stream);
        call.ready()?;
        // SAFETY: a cudarc buffer taken for `stream`, its guard held past the enqueue (module docs).
        let r = unsafe { call.kernels().argminmax_raw::<E::Kernel>(x, len) };
        call.done(r, xg).map(|(lo, hi)| (value_index(lo), value_index(hi)))
    }

    /// Enqueues `op` over `input` without waiting: the value(s) into `values`, the index(es)
    /// into `indices` (argminmax: `[0]` = argmin, `[1]` = argmax).
    pub fn arg_into<E: Element>(
        &self,
        stream: &Arc<CudaStream>,
        op: ArgOp,
        input: &impl DevicePtr<E>,
        values: &mut impl DevicePtrMut<E>,
        indices: &mut impl DevicePtrMut<u64>,
    ) -> Result<()> {
        let call = self.call(stream, &[lent("input", input), lent("values", values), lent("indices", indices)])?;
        let (len, values_len, indices_len) = (input.len(), values.len(), indices.len());
        let (x, xg) = input.device_ptr(stream);
        let (v, vg) = values.device_ptr_mut(stream);
        let (i, ig) = indices.device_ptr_mut(stream);
        call.ready()?;
        // SAFETY: cudarc buffers taken for `stream`, their guards held past the enqueue (module docs).
        let r = unsafe { call.kernels().arg_into_raw::<E::Kernel>(op, x, len, v, values_len, i, indices_len) };
        call.done(r, (xg, vg, ig))
    }

    /// [`Kernels::arg_into`] with [`ArgOp::ArgMin`].
    pub fn argmin_into<E: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<E>,
        value: &mut impl DevicePtrMut<E>,
        index: &mut impl DevicePtrMut<u64>,
    ) -> Result<()> {
        self.arg_into(stream, ArgOp::ArgMin, input, value, index)
    }

    /// [`Kernels::arg_into`] with [`ArgOp::ArgMax`].
    pub fn argmax_into<E: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<E>,
        value: &mut impl DevicePtrMut<E>,
        index: &mut impl DevicePtrMut<u64>,
    ) -> Result<()> {
        self.arg_into(stream, ArgOp::ArgMax, input, value, index)
    }

    /// [`Kernels::arg_into`] with [`ArgOp::ArgMinMax`].
    pub fn argminmax_into<E: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<E>,
        values: &mut impl DevicePtrMut<E>,
        indices: &mut impl DevicePtrMut<u64>,
    ) -> Result<()> {
        self.arg_into(stream, ArgOp::ArgMinMax, input, values, indices)
    }
}

/// Reductions along an axis of a row-major matrix, or over segments (`GpuStream::sum_along`
/// and the others); each enqueues without waiting.
impl Kernels {
    /// Enqueues the sum of each row or column of `shape` in `input` into `out`.
    pub fn sum_along<E: Element>(
        &self,
        stream: &Arc<CudaStream>,
        axis: Axis,
        shape: AxisShape,
        input: &impl DevicePtr<E>,
        out: &mut impl DevicePtrMut<Sum<E>>,
        strategy: AxisStrategy,
    ) -> Result<()> {
        let call = self.call(stream, &[lent("input", input), lent("out", out)])?;
        let (len, out_len) = (input.len(), out.len());
        let (x, xg) = input.device_ptr(stream);
        let (o, og) = out.device_ptr_mut(stream);
        call.ready()?;
        // SAFETY: cudarc buffers taken for `stream`, their guards held past the enqueue (module docs).
        let r = unsafe { call.kernels().sum_along_raw::<E::Kernel>(axis, shape, x, len, o, out_len, strategy) };
        call.done(r, (xg, og))
    }

    /// Enqueues min, max or minmax (`op`) of each row or column into `out` (minmax pairs at
    /// `out[2i]`, `out[2i + 1]`).
    #[allow(clippy::too_many_arguments)]
    pub fn reduce_along<E: Element>(
        &self,
        stream: &Arc<CudaStream>,
        op: TypedOp,
        axis: Axis,
        shape: AxisShape,
        input: &impl DevicePtr<E>,
        out: &mut impl DevicePtrMut<E>,
        strategy: AxisStrategy,
    ) -> Result<()> {
        let call = self.call(stream, &[lent("input", input), lent("out", out)])?;
        let (len, out_len) = (input.len(), out.len());
        let (x, xg) = input.device_ptr(stream);
        let (o, og) = out.device_ptr_mut(stream);
        call.ready()?;
        // SAFETY: cudarc buffers taken for `stream`, their guards held past the enqueue (module docs).
        let r = unsafe { call.kernels().reduce_along_raw::<E::Kernel>(op, axis, shape, x, len, o, out_len, strategy) };
        call.done(r, (xg, og))
    }

    /// Enqueues argmin or argmax (`op`) of each row or column: values into `values`, indices
    /// (within the row or column, u32 or u64) into `indices`.
    #[allow(clippy::too_many_arguments)]
    pub fn arg_along<E: Element, I: AxisIndex>(
        &self,
        stream: &Arc<CudaStream>,
        op: ArgOp,
        axis: Axis,
        shape: AxisShape,
        input: &impl DevicePtr<E>,
        values: &mut impl DevicePtrMut<E>,
        indices: &mut impl DevicePtrMut<I>,
        strategy: AxisStrategy,
    ) -> Result<()> {
        let call = self.call(stream, &[lent("input", input), lent("values", values), lent("indices", indices)])?;
        let (len, values_len, indices_len) = (input.len(), values.len(), indices.len());
        let (x, xg) = input.device_ptr(stream);
        let (v, vg) = values.device_ptr_mut(stream);
        let (i, ig) = indices.device_ptr_mut(stream);
        call.ready()?;
        // SAFETY: cudarc buffers taken for `stream`, their guards held past the enqueue (module docs).
        let r = unsafe {
            call.kernels().arg_along_raw::<E::Kernel, I>(
                op,
                axis,
                shape,
                x,
                len,
                v,
                values_len,
                i,
                indices_len,
                strategy,
            )
        };
        call.done(r, (xg, vg, ig))
    }

    /// Enqueues argmin or argmax (`op`) of each row or column, the indices alone (within the
    /// row or column, u32 or u64) into `indices`, as `torch.argmax(dim)` gives them.
    #[allow(clippy::too_many_arguments)]
    pub fn arg_indices_along<E: Element, I: AxisIndex>(
        &self,
        stream: &Arc<CudaStream>,
        op: ArgOp,
        axis: Axis,
        shape: AxisShape,
        input: &impl DevicePtr<E>,
        indices: &mut impl DevicePtrMut<I>,
        strategy: AxisStrategy,
    ) -> Result<()> {
        let call = self.call(stream, &[lent("input", input), lent("indices", indices)])?;
        let (len, indices_len) = (input.len(), indices.len());
        let (x, xg) = input.device_ptr(stream);
        let (i, ig) = indices.device_ptr_mut(stream);
        call.ready()?;
        // SAFETY: cudarc buffers taken for `stream`, their guards held past the enqueue (module docs).
        let r = unsafe {
            call.kernels().arg_indices_along_raw::<E::Kernel, I>(op, axis, shape, x, len, i, indices_len, strategy)
        };
        call.done(r, (xg, ig))
    }

    /// Enqueues the sum of each segment `input[offsets[i]..offsets[i + 1]]` into `out[i]`.
    pub fn segmented_sum<E: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<E>,
        offsets: &impl DevicePtr<u64>,
        out: &mut impl DevicePtrMut<Sum<E>>,
    ) -> Result<()> {
        let call = self.call(stream, &[lent("input", input), lent("offsets", offsets), lent("out", out)])?;
        let (len, offsets_len, out_len) = (input.len(), offsets.len(), out.len());
        let (x, xg) = input.device_ptr(stream);
        let (s, sg) = offsets.device_ptr(stream);
        let (o, og) = out.device_ptr_mut(stream);
        call.ready()?;
        // SAFETY: cudarc buffers taken for `stream`, their guards held past the enqueue (module docs).
        let r = unsafe { call.kernels().segmented_sum_raw::<E::Kernel>(x, len, s, offsets_len, o, out_len) };
        call.done(r, (xg, sg, og))
    }

    /// Enqueues min, max or minmax (`op`) of each segment into `out`.
    pub fn segmented_reduce<E: Element>(
        &self,
        stream: &Arc<CudaStream>,
        op: TypedOp,
        input: &impl DevicePtr<E>,
        offsets: &impl DevicePtr<u64>,
        out: &mut impl DevicePtrMut<E>,
    ) -> Result<()> {
        let call = self.call(stream, &[lent("input", input), lent("offsets", offsets), lent("out", out)])?;
        let (len, offsets_len, out_len) = (input.len(), offsets.len(), out.len());
        let (x, xg) = input.device_ptr(stream);
        let (s, sg) = offsets.device_ptr(stream);
        let (o, og) = out.device_ptr_mut(stream);
        call.ready()?;
        // SAFETY: cudarc buffers taken for `stream`, their guards held past the enqueue (module docs).
        let r = unsafe { call.kernels().segmented_reduce_raw::<E::Kernel>(op, x, len, s, offsets_len, o, out_len) };
        call.done(r, (xg, sg, og))
    }

    /// Enqueues argmin or argmax (`op`) of each segment: values and indices within the segment.
    #[allow(clippy::too_many_arguments)]
    pub fn segmented_arg<E: Element, I: AxisIndex>(
        &self,
        stream: &Arc<CudaStream>,
        op: ArgOp,
        input: &impl DevicePtr<E>,
        offsets: &impl DevicePtr<u64>,
        values: &mut impl DevicePtrMut<E>,
        indices: &mut impl DevicePtrMut<I>,
    ) -> Result<()> {
        let bufs = [lent("input", input), lent("offsets", offsets), lent("values", values), lent("indices", indices)];
        let call = self.call(stream, &bufs)?;
        let (len, offsets_len, values_len, indices_len) = (input.len(), offsets.len(), values.len(), indices.len());
        let (x, xg) = input.device_ptr(stream);
        let (s, sg) = offsets.device_ptr(stream);
        let (v, vg) = values.device_ptr_mut(stream);
        let (i, ig) = indices.device_ptr_mut(stream);
        call.ready()?;
        // SAFETY: cudarc buffers taken for `stream`, their guards held past the enqueue (module docs).
        let r = unsafe {
            call.kernels().segmented_arg_raw::<E::Kernel, I>(op, x, len, s, offsets_len, v, values_len, i, indices_len)
        };
        call.done(r, (xg, sg, vg, ig))
    }
}

/// gemv (`GpuStream::sgemv` and the others): `y = alpha · op(A) x + beta · y`, A row-major;
/// each enqueues without waiting.
impl Kernels {
    /// f32 `y = alpha · op(A) x + beta · y` (`opts`: alpha, beta, lda, op, kernel, incx, incy).
    #[allow(clippy::too_many_arguments)]
    pub fn sgemv(
        &self,
        stream: &Arc<CudaStream>,
        m: usize,
        n: usize,
        a: &impl DevicePtr<f32>,
        x: &impl DevicePtr<f32>,
        y: &mut impl DevicePtrMut<f32>,
        opts: SgemvOptions,
    ) -> Result<()> {
        self.sgemv_batched(stream, m, n, a, x, y, SgemvBatch::ONE, opts)
    }

    /// [`Kernels::sgemv`] for `batch.count` problems at strides of A, x and y, in one launch.
    #[allow(clippy::too_many_arguments)]
    pub fn sgemv_batched(
        &self,
        stream: &Arc<CudaStream>,
        m: usize,
        n: usize,
        a: &impl DevicePtr<f32>,
        x: &impl DevicePtr<f32>,
        y: &mut impl DevicePtrMut<f32>,
        batch: SgemvBatch,
        opts: SgemvOptions,
    ) -> Result<()> {
        let call = self.call(stream, &[lent("A", a), lent("x", x), lent("y", y)])?;
        let (a_len, x_len, y_len) = (a.len(), x.len(), y.len());
        let (ap, ag) = a.device_ptr(stream);
        let (xp, xg) = x.device_ptr(stream);
        let (yp, yg) = y.device_ptr_mut(stream);
        call.ready()?;
        // SAFETY: cudarc buffers taken for `stream`, their guards held past the enqueue (module docs).
        let r = unsafe { call.kernels().sgemv_batched_raw(m, n, ap, a_len, xp, x_len, yp, y_len, batch, opts) };
        call.done(r, (ag, xg, yg))
    }

    /// gemv with A of f16 or bf16 and x and y each f32 or A's type, for `batch.count` problems
    /// ([`SgemvBatch::ONE`]: one); products and sums in f32. `opts.kernel` must be `Auto`.
    #[allow(clippy::too_many_arguments)]
    pub fn gemv<A, X, Y>(
        &self,
        stream: &Arc<CudaStream>,
        m: usize,
        n: usize,
        a: &impl DevicePtr<A>,
        x: &impl DevicePtr<X>,
        y: &mut impl DevicePtrMut<Y>,
        batch: SgemvBatch,
        opts: SgemvOptions,
    ) -> Result<()>
    where
        A: Element,
        A::Kernel: HalfWeight,
        X: Element,
        X::Kernel: GemvVector<A::Kernel>,
        Y: Element,
        Y::Kernel: GemvVector<A::Kernel>,
    {
        let call = self.call(stream, &[lent("A", a), lent("x", x), lent("y", y)])?;
        let (a_len, x_len, y_len) = (a.len(), x.len(), y.len());
        let (ap, ag) = a.device_ptr(stream);
        let (xp, xg) = x.device_ptr(stream);
        let (yp, yg) = y.device_ptr_mut(stream);
        call.ready()?;
        // SAFETY: cudarc buffers taken for `stream`, their guards held past the enqueue (module docs).
        let r = unsafe {
            call.kernels()
                .gemv_raw::<A::Kernel, X::Kernel, Y::Kernel>(m, n, ap, a_len, xp, x_len, yp, y_len, batch, opts)
        };
        call.done(r, (ag, xg, yg))
    }
}

/// The reduction ladder's sum over f32 or i32 (`GpuStream::reduce_sum`), every step selectable.
impl Kernels {
    /// Sum of `input` with `strategy` (0 when empty; i32 wraps).
    pub fn reduce_sum<E>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<E>,
        strategy: ReduceStrategy,
    ) -> Result<E>
    where
        E: Element,
        E::Kernel: SumElement,
    {
        let call = self.call(stream, &[lent("input", input)])?;
        let len = input.len();
        let (x, xg) = input.device_ptr(stream);
        call.ready()?;
        // SAFETY: a cudarc buffer taken for `stream`, its guard held past the enqueue (module docs).
        let r = unsafe { call.kernels().reduce_sum_raw::<E::Kernel>(x, len, strategy) };
        call.done(r, xg).map(E::from_kernel)
    }

    /// Enqueues the sum of `input` into `out[0]` without waiting; `Finish::Host` waits and
    /// gives the value instead (`out` unwritten).
    pub fn reduce_sum_into<E>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<E>,
        out: &mut impl DevicePtrMut<E>,
        strategy: ReduceStrategy,
    ) -> Result<Option<E>>
    where
        E: Element,
        E::Kernel: SumElement,
    {
        let call = self.call(stream, &[lent("input", input), lent("out", out)])?;
        let (len, out_len) = (input.len(), out.len());
        let (x, xg) = input.device_ptr(stream);
        let (o, og) = out.device_ptr_mut(stream);
        call.ready()?;
        // SAFETY: cudarc buffers taken for `stream`, their guards held past the enqueue (module docs).
        let r = unsafe { call.kernels().reduce_sum_into_raw::<E::Kernel>(x, len, o, out_len, strategy) };
        call.done(r, (xg, og)).map(|v| v.map(E::from_kernel))
    }
}
