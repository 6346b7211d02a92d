//! Reductions along an axis (`Auto`) on the shapes of data/axis_shapes.csv: rows (torch dim=1),
//! columns (dim=0) and ragged segments, sum, max, argmax (values and u64 indices, as torch's
//! `max(dim)`) and its indices alone (as `argmax(dim)`), f32 and bf16 ([`axis_value`]: uniform,
//! as the peers' inputs), cold (inputs rotated past
//! L2), against a cold copy moving the input's bytes, and against that copy's rate over the bytes
//! the call moves (input read, results written: a reduction of one-element lines writes as much
//! as it reads).
use crate::axis_shapes::{self, AxisCase};
use crate::harness::{
    axis_value, buffers, rotation, same_size_copy_ms,
    Fmt::{Fixed, Percent, Text},
    Table, REPS, WARMUP,
};
use crate::timing::{gbps, median_ms};
use cudakernels::cust::memory::DeviceBuffer;
use cudakernels::{bf16, ArgOp, Axis, AxisShape, AxisStrategy, Gpu, GpuStream, Result, TypedElement, TypedOp};

const TABLE: Table = Table::markdown(
    "| shape | type | along | op | median µs | GB/s | % of same-size copy | % of copy rate, bytes moved |",
    &[Text, Text, Text, Text, Fixed(1), Fixed(0), Percent(1), Percent(1)],
);

pub fn run(gpu: &Gpu, _copy_bw: f64) -> Result<()> {
    let s = gpu.default_stream();
    println!("### Reductions along an axis, Auto (cold: rotated)\n");
    TABLE.header();
    for case in axis_shapes::all() {
        shape(s, case, axis_value)?;
        shape(s, case, |i| bf16::from_f32(axis_value(i)))?;
    }
    println!();
    Ok(())
}

/// Every row of the table for `case` over element type `T`, inputs filled by `fill`.
fn shape<T: TypedElement>(s: &GpuStream, case: AxisCase, fill: impl Fn(usize) -> T) -> Result<()> {
    let len = case.len();
    let bytes = std::mem::size_of::<T>() * len;
    let inputs = buffers(rotation(s, bytes), len, fill)?;
    // A cold copy moving the input's bytes (read + write), from as many sources as the inputs.
    let copy_src = buffers(rotation(s, bytes), bytes / 4, |_| 0.0f32)?;
    let copy = same_size_copy_ms(s, &copy_src, bytes / 4, bytes)?;
    drop(copy_src);
    let results = match case {
        AxisCase::Dense { m, n } => m.max(n),
        AxisCase::Ragged { segments, .. } => segments,
    };
    let mut sums = buffers(1, results, |_| T::Sum::default())?;
    let mut values = buffers(1, results, |_| T::default())?;
    let mut indices = buffers(1, results, |_| 0u64)?;
    for &op in [Op::Sum, Op::Max, Op::ArgMax, Op::ArgMaxIndices].iter() {
        let time = |along: &str, written: usize, f: &mut dyn FnMut(&DeviceBuffer<T>) -> Result<()>| -> Result<()> {
            let ms = median_ms(s, WARMUP, REPS, |i| f(&inputs[i % inputs.len()]))?;
            let label = match case {
                AxisCase::Dense { m, n } => format!("{} × {}", m, n),
                AxisCase::Ragged { segments, longest } => format!("{} segments of 0..={}", segments, longest),
            };
            let moved = bytes + written * op.result_bytes::<T>();
            row(&label, T::NAME, along, op, (bytes, moved), ms, copy);
            Ok(())
        };
        match case {
            AxisCase::Dense { m, n } => {
                for &axis in [Axis::Rows, Axis::Columns].iter() {
                    let along = if axis == Axis::Rows { "rows (dim=1)" } else { "columns (dim=0)" };
                    let shape = AxisShape::new(m, n);
                    let auto = AxisStrategy::Auto;
                    time(along, axis.results(shape), &mut |x| match op {
                        Op::Sum => s.sum_along(axis, shape, x, &mut sums[0], auto),
                        Op::Max => s.reduce_along(TypedOp::Max, axis, shape, x, &mut values[0], auto),
                        Op::ArgMax => s.arg_along(ArgOp::ArgMax, axis, shape, x, &mut values[0], &mut indices[0], auto),
                        Op::ArgMaxIndices => s.arg_indices_along(ArgOp::ArgMax, axis, shape, x, &mut indices[0], auto),
                    })?;
                }
            }
            AxisCase::Ragged { .. } => {
                let offsets = DeviceBuffer::from_slice(&case.offsets()).expect("offsets");
                time("segments", results, &mut |x| match op {
                    Op::Sum => s.segmented_sum(x, &offsets, &mut sums[0]),
                    Op::Max => s.segmented_reduce(TypedOp::Max, x, &offsets, &mut values[0]),
                    Op::ArgMax => s.segmented_arg(ArgOp::ArgMax, x, &offsets, &mut values[0], &mut indices[0]),
                    Op::ArgMaxIndices => s.segmented_arg_indices(ArgOp::ArgMax, x, &offsets, &mut indices[0]),
                })?;
            }
        }
    }
    Ok(())
}

/// The ops of the table: the values and indices of argmax (as `torch.max(dim)`), and the
/// indices alone (as `torch.argmax(dim)`).
#[derive(Clone, Copy)]
enum Op {
    Sum,
    Max,
    ArgMax,
    ArgMaxIndices,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Max => "max",
            Op::ArgMax => "argmax",
            Op::ArgMaxIndices => "argmax indices",
        }
    }

    /// Bytes the op writes per result over elements of `T`: the sum's accumulator, a value, a
    /// value and its u64 index, or the index.
    fn result_bytes<T: TypedElement>(self) -> usize {
        let index = std::mem::size_of::<u64>();
        match self {
            Op::Sum => std::mem::size_of::<T::Sum>(),
            Op::Max => std::mem::size_of::<T>(),
            Op::ArgMax => std::mem::size_of::<T>() + index,
            Op::ArgMaxIndices => index,
        }
    }
}

/// A row of the table: `bytes` the input's, `moved` those read and written, `copy_ms` the time of
/// a copy moving `bytes` (its rate scales to `moved`: both are 64 MB or more where it matters).
fn row(shape: &str, type_name: &str, along: &str, op: Op, (bytes, moved): (usize, usize), ms: f64, copy_ms: f64) {
    let bw = gbps(bytes, ms);
    TABLE.row(&[
        shape.into(),
        type_name.into(),
        along.into(),
        op.name().into(),
        (ms * 1e3).into(),
        bw.into(),
        (100.0 * copy_ms / ms).into(),
        (100.0 * copy_ms * moved as f64 / (ms * bytes as f64)).into(),
    ]);
}
