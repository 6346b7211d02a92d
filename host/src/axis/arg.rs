//! argmin and argmax along an axis: the value and index of each row's, column's or segment's
//! extreme ([`GpuStream::arg_along`], as `torch.max(dim)`), or the index alone
//! ([`GpuStream::arg_indices_along`], as `torch.argmax(dim)`), indices as u32 or u64 (the caller's
//! choice) within the row, column or segment.
//!
//! Order as the whole-buffer arg ops ([`crate::arg`]): ties → smallest index; floats: NaN is
//! the extreme both ways (the first NaN wins), -0.0 below +0.0. An empty row, column or segment
//! gets the op's identity for its value (`T::HIGHEST` for argmin, `T::LOWEST` for argmax) and
//! the index type's all-ones sentinel (`u32::MAX` or `u64::MAX`).
use super::{Axis, AxisShape, AxisStrategy, Output, Results};
use crate::arg::ArgOp;
use crate::error::{Error, Result};
use crate::gpu::GpuStream;
use crate::raw::view;
use crate::typed::TypedElement;
use cust::memory::{DeviceCopy, DeviceSlice};

/// The index type of arg results along an axis: `u32` or `u64`.
pub trait AxisIndex: DeviceCopy + private::Sealed {
    /// Whether the kernels store 8-byte indices.
    const WIDE: bool;
    /// The longest row, column or segment whose indices (and the empty result's sentinel, all
    /// ones) the type tells apart.
    const MAX_LINE: usize;
}

impl AxisIndex for u32 {
    const WIDE: bool = false;
    const MAX_LINE: usize = u32::MAX as usize;
}

impl AxisIndex for u64 {
    const WIDE: bool = true;
    const MAX_LINE: usize = usize::MAX;
}

mod private {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// The op's number in `kernels::axis_arg::AXIS_ARG_OPS`; argminmax has no axis kernels.
fn along_op(op: ArgOp) -> Result<usize> {
    ArgOp::ALONG_AXIS
        .iter()
        .position(|&o| o == op)
        .ok_or_else(|| Error::Unsupported { what: "argminmax along an axis: call argmin and argmax".into() })
}

/// `TooLarge` when a line of `len` elements could hold indices `I` cannot tell apart.
pub(crate) fn check_index_width<I: AxisIndex>(len: usize) -> Result<()> {
    if len > I::MAX_LINE {
        return Err(Error::TooLarge { what: "line for u32 indices", len, max: I::MAX_LINE });
    }
    Ok(())
}

impl GpuStream {
    /// Enqueues argmin or argmax (`op`) of each row or column of `shape` in `input` without
    /// waiting: the values into `values`, the indices (within the row or column) into
    /// `indices`, m or n of each. u32 indices are refused (`TooLarge`) for lines longer than
    /// `u32::MAX`. Checked as [`GpuStream::reduce_along`], and the two outputs may not overlap.
    #[allow(clippy::too_many_arguments)]
    pub fn arg_along<T: TypedElement, I: AxisIndex>(
        &self,
        op: ArgOp,
        axis: Axis,
        shape: AxisShape,
        input: &DeviceSlice<T>,
        values: &mut DeviceSlice<T>,
        indices: &mut DeviceSlice<I>,
        strategy: AxisStrategy,
    ) -> Result<()> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.arg_along_raw::<T, I>(
                op,
                axis,
                shape,
                input.as_device_ptr().as_raw(),
                input.len(),
                values.as_device_ptr().as_raw(),
                values.len(),
                indices.as_device_ptr().as_raw(),
                indices.len(),
                strategy,
            )
        }
    }

    /// [`GpuStream::arg_along`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    #[allow(clippy::too_many_arguments)] // an address and a length for each buffer
    pub unsafe fn arg_along_raw<T: TypedElement, I: AxisIndex>(
        &self,
        op: ArgOp,
        axis: Axis,
        shape: AxisShape,
        input: u64,
        input_len: usize,
        values: u64,
        values_len: usize,
        indices: u64,
        indices_len: usize,
        strategy: AxisStrategy,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let values = &mut unsafe { view::<T>(values, values_len) };
        let indices = &mut unsafe { view::<I>(indices, indices_len) };
        self.arg_lines(op, Lines::Along(axis, shape, strategy), input, Some(values), indices)
    }

    /// Enqueues argmin or argmax (`op`) of each row or column of `shape` in `input` without
    /// waiting, the indices alone (within the row or column, as `torch.argmax(dim)` gives
    /// them) into `indices`, m or n of them. As [`GpuStream::arg_along`] without the values:
    /// nothing reads them back, and lines of one element are a fill of zeros.
    pub fn arg_indices_along<T: TypedElement, I: AxisIndex>(
        &self,
        op: ArgOp,
        axis: Axis,
        shape: AxisShape,
        input: &DeviceSlice<T>,
        indices: &mut DeviceSlice<I>,
        strategy: AxisStrategy,
    ) -> Result<()> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.arg_indices_along_raw::<T, I>(
                op,
                axis,
                shape,
                input.as_device_ptr().as_raw(),
                input.len(),
                indices.as_device_ptr().as_raw(),
                indices.len(),
                strategy,
            )
        }
    }

    /// [`GpuStream::arg_indices_along`] on raw device addresses: each buffer as its address and its
    /// length in elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    #[allow(clippy::too_many_arguments)] // an address and a length for each buffer
    pub unsafe fn arg_indices_along_raw<T: TypedElement, I: AxisIndex>(
        &self,
        op: ArgOp,
        axis: Axis,
        shape: AxisShape,
        input: u64,
        input_len: usize,
        indices: u64,
        indices_len: usize,
        strategy: AxisStrategy,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let indices = &mut unsafe { view::<I>(indices, indices_len) };
        self.arg_lines(op, Lines::Along(axis, shape, strategy), input, None, indices)
    }

    /// Enqueues argmin or argmax of each segment `input[offsets[i]..offsets[i + 1]]`, indices
    /// within the segment (offsets as [`GpuStream::segmented_sum`] reads them). u32 indices
    /// are refused for inputs longer than `u32::MAX` (a segment could be).
    pub fn segmented_arg<T: TypedElement, I: AxisIndex>(
        &self,
        op: ArgOp,
        input: &DeviceSlice<T>,
        offsets: &DeviceSlice<u64>,
        values: &mut DeviceSlice<T>,
        indices: &mut DeviceSlice<I>,
    ) -> Result<()> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.segmented_arg_raw::<T, I>(
                op,
                input.as_device_ptr().as_raw(),
                input.len(),
                offsets.as_device_ptr().as_raw(),
                offsets.len(),
                values.as_device_ptr().as_raw(),
                values.len(),
                indices.as_device_ptr().as_raw(),
                indices.len(),
            )
        }
    }

    /// [`GpuStream::segmented_arg`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    #[allow(clippy::too_many_arguments)] // an address and a length for each buffer
    pub unsafe fn segmented_arg_raw<T: TypedElement, I: AxisIndex>(
        &self,
        op: ArgOp,
        input: u64,
        input_len: usize,
        offsets: u64,
        offsets_len: usize,
        values: u64,
        values_len: usize,
        indices: u64,
        indices_len: usize,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let offsets = &unsafe { view::<u64>(offsets, offsets_len) };
        let values = &mut unsafe { view::<T>(values, values_len) };
        let indices = &mut unsafe { view::<I>(indices, indices_len) };
        self.arg_lines(op, Lines::Segments(offsets), input, Some(values), indices)
    }

    /// Enqueues argmin or argmax of each segment `input[offsets[i]..offsets[i + 1]]`, the
    /// indices alone (within the segment) into `indices`: [`GpuStream::segmented_arg`] without
    /// the values.
    pub fn segmented_arg_indices<T: TypedElement, I: AxisIndex>(
        &self,
        op: ArgOp,
        input: &DeviceSlice<T>,
        offsets: &DeviceSlice<u64>,
        indices: &mut DeviceSlice<I>,
    ) -> Result<()> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.segmented_arg_indices_raw::<T, I>(
                op,
                input.as_device_ptr().as_raw(),
                input.len(),
                offsets.as_device_ptr().as_raw(),
                offsets.len(),
                indices.as_device_ptr().as_raw(),
                indices.len(),
            )
        }
    }

    /// [`GpuStream::segmented_arg_indices`] on raw device addresses: each buffer as its address and
    /// its length in elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    #[allow(clippy::too_many_arguments)] // an address and a length for each buffer
    pub unsafe fn segmented_arg_indices_raw<T: TypedElement, I: AxisIndex>(
        &self,
        op: ArgOp,
        input: u64,
        input_len: usize,
        offsets: u64,
        offsets_len: usize,
        indices: u64,
        indices_len: usize,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let offsets = &unsafe { view::<u64>(offsets, offsets_len) };
        let indices = &mut unsafe { view::<I>(indices, indices_len) };
        self.arg_lines(op, Lines::Segments(offsets), input, None, indices)
    }

    /// Checks and enqueues argmin or argmax of each line of `lines` into `indices` and, when
    /// given, `values`.
    fn arg_lines<T: TypedElement, I: AxisIndex>(
        &self,
        op: ArgOp,
        lines: Lines<'_>,
        input: &DeviceSlice<T>,
        values: Option<&mut DeviceSlice<T>>,
        indices: &mut DeviceSlice<I>,
    ) -> Result<()> {
        let op = along_op(op)?;
        check_index_width::<I>(match lines {
            Lines::Along(axis, shape, _) => axis.line(shape),
            Lines::Segments(_) => input.len(),
        })?;
        let values_out = values.as_ref().map(|v| Output::of("values", v, 1));
        let indices_out = Output::of("indices", indices, 1);
        let outs: Vec<Output> = values_out.into_iter().chain(Some(indices_out)).collect();
        // A null `values` address: the kernels store the indices alone.
        let results =
            Results::Arg { values: values_out.map_or(0, |o| o.addr), indices: indices_out.addr, wide: I::WIDE };
        let lent = || {
            if let Some(v) = &values {
                self.check_lent("values", v)?;
            }
            self.check_lent("indices", indices)
        };
        match lines {
            Lines::Along(axis, shape, strategy) => self.along(op, axis, shape, input, (&outs, results), lent, strategy),
            Lines::Segments(offsets) => self.segmented(op, input, offsets, (&outs, results), lent),
        }
    }
}

/// The lines an arg call reduces: the rows or columns of a matrix, or segments by offsets.
#[derive(Clone, Copy)]
enum Lines<'a> {
    Along(Axis, AxisShape, AxisStrategy),
    Segments(&'a DeviceSlice<u64>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u32_indices_are_refused_for_lines_they_cannot_index() {
        assert_eq!(check_index_width::<u32>(u32::MAX as usize), Ok(()));
        let long = u32::MAX as usize + 1;
        assert!(matches!(check_index_width::<u32>(long), Err(Error::TooLarge { .. })));
        assert_eq!(check_index_width::<u64>(long), Ok(()));
    }

    #[test]
    fn argminmax_has_no_axis_kernels() {
        assert_eq!(along_op(ArgOp::ArgMin), Ok(0));
        assert_eq!(along_op(ArgOp::ArgMax), Ok(1));
        assert!(matches!(along_op(ArgOp::ArgMinMax), Err(Error::Unsupported { .. })));
        let names = crate::entries::entry_names();
        for (i, &op) in [ArgOp::ArgMin, ArgOp::ArgMax].iter().enumerate() {
            let entry = crate::entries::axis_arg_entry(2, along_op(op).unwrap(), "f32");
            assert_eq!(names[entry], format!("axis_arg_fold_{}_f32", op.name()), "{}", i);
        }
    }
}
