//! Reductions along an axis (`Auto`) on the shapes of data/axis_shapes.csv: rows (torch dim=1),
//! columns (dim=0) and ragged segments, sum and max, f32, cold (inputs rotated past L2), against
//! a cold copy moving the same bytes.
use crate::axis_shapes::{self, AxisCase};
use crate::harness::{
    buffers, rotation, same_size_copy_ms,
    Fmt::{Fixed, Percent, Text},
    Table, REPS, WARMUP,
};
use crate::timing::{gbps, median_ms};
use cudakernels::cust::memory::DeviceBuffer;
use cudakernels::{Axis, AxisShape, AxisStrategy, Gpu, GpuStream, Result, TypedOp};

const TABLE: Table = Table::markdown(
    "| shape | along | op | median µs | GB/s | % of same-size copy |",
    &[Text, Text, Text, Fixed(1), Fixed(0), Percent(1)],
);

pub fn run(gpu: &Gpu, _copy_bw: f64) -> Result<()> {
    let s = gpu.default_stream();
    println!("### Reductions along an axis, f32, Auto (cold: rotated)\n");
    TABLE.header();
    for case in axis_shapes::all() {
        let len = case.len();
        let bytes = 4 * len;
        let inputs = buffers(rotation(s, bytes), len, |i| (i % 1000) as f32 * 0.5 - 250.0)?;
        // A copy moving the input's bytes (read + write = 2 · bytes / 2).
        let copy = same_size_copy_ms(s, &inputs, len, bytes)?;
        match case {
            AxisCase::Dense { m, n } => {
                for &axis in [Axis::Rows, Axis::Columns].iter() {
                    let label = format!("{} × {}", m, n);
                    dense(s, &inputs, AxisShape::new(m, n), axis, (&label, copy))?;
                }
            }
            AxisCase::Ragged { segments, longest } => {
                let offsets = DeviceBuffer::from_slice(&case.offsets()).expect("offsets");
                let mut out = buffers(1, 2 * segments, |_| 0.0f32)?;
                for &op in [TypedOp::Sum, TypedOp::Max].iter() {
                    let ms = median_ms(s, WARMUP, REPS, |i| {
                        let input = &inputs[i % inputs.len()];
                        match op {
                            TypedOp::Sum => s.segmented_sum(input, &offsets, &mut out[0]),
                            _ => s.segmented_reduce(op, input, &offsets, &mut out[0]),
                        }
                    })?;
                    let label = format!("{} segments of 0..={}", segments, longest);
                    row(&label, "segments", op, bytes, ms, copy);
                }
            }
        }
    }
    println!();
    Ok(())
}

/// Sum and max of each row or column of `shape`; `label` and the same-size copy's ms.
fn dense(s: &GpuStream, inputs: &[DeviceBuffer<f32>], shape: AxisShape, axis: Axis, at: (&str, f64)) -> Result<()> {
    let results = axis.results(shape);
    let mut out = buffers(1, results, |_| 0.0f32)?;
    let along = if axis == Axis::Rows { "rows (dim=1)" } else { "columns (dim=0)" };
    for &op in [TypedOp::Sum, TypedOp::Max].iter() {
        let ms = median_ms(s, WARMUP, REPS, |i| {
            let input = &inputs[i % inputs.len()];
            match op {
                TypedOp::Sum => s.sum_along(axis, shape, input, &mut out[0], AxisStrategy::Auto),
                _ => s.reduce_along(op, axis, shape, input, &mut out[0], AxisStrategy::Auto),
            }
        })?;
        row(at.0, along, op, 4 * shape.m * shape.n, ms, at.1);
    }
    Ok(())
}

fn row(shape: &str, along: &str, op: TypedOp, bytes: usize, ms: f64, copy_ms: f64) {
    let bw = gbps(bytes, ms);
    TABLE.row(&[
        shape.into(),
        along.into(),
        op.name().into(),
        (ms * 1e3).into(),
        bw.into(),
        (100.0 * copy_ms / ms).into(),
    ]);
}
