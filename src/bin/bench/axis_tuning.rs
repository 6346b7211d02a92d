//! Tuning of the axis kernels on the dense shapes of data/axis_shapes.csv, cold (inputs rotated
//! past L2), f32 and bf16. `AXIS_TUNING_SHAPE=MxN` keeps one shape.
//! - `axis-tuning`: the `cols` kernel, `Auto`'s row splits against half, 1.5 and twice as many
//!   (or the list in `AXIS_TUNING_SPLITS`), column sums and argmax.
//! - `axis-rows-tuning`: rows of a warp per row (lanes 32), `Auto`'s pieces per row against
//!   half, 1.5 and twice as many (or the list in `AXIS_TUNING_CHUNKS`), row sums, max and argmax.
use crate::axis_shapes::{self, AxisCase};
use crate::harness::{
    buffers, rotation,
    Fmt::{Fixed, Text},
    Table, REPS, WARMUP,
};
use crate::timing::{gbps, median_ms};
use cudakernels::{
    auto_strategy, bf16, column_width, fold_plan, ArgOp, Axis, AxisShape, AxisStrategy, Gpu, GpuStream, Result,
    TypedElement, TypedOp, AXIS_MAX_CHUNKS,
};

const TABLE: Table = Table::markdown(
    "| shape | type | op | width | tile | splits | Auto's splits | median µs | GB/s |",
    &[Text, Text, Text, Fixed(0), Fixed(0), Fixed(0), Fixed(0), Fixed(1), Fixed(0)],
);

/// Splits tried, as fractions (numerator, denominator) of Auto's.
const SCALES: [(usize, usize); 4] = [(1, 2), (1, 1), (3, 2), (2, 1)];

pub fn run(gpu: &Gpu, _copy_bw: f64) -> Result<()> {
    let s = gpu.default_stream();
    println!("### Axis columns: row splits around Auto's (cold: rotated)\n");
    TABLE.header();
    for case in axis_shapes::all() {
        if let AxisCase::Dense { m, n } = case {
            let kept = std::env::var("AXIS_TUNING_SHAPE").map_or(true, |w| w == format!("{}x{}", m, n));
            if m > 1 && n > 1 && kept {
                columns(s, m, n, |i| (i % 1000) as f32 * 0.5 - 250.0)?;
                columns(s, m, n, |i| bf16::from_f32((i % 1000) as f32 * 0.5 - 250.0))?;
            }
        }
    }
    println!();
    Ok(())
}

const ROWS_TABLE: Table = Table::markdown(
    "| shape | type | op | chunks | Auto's chunks | median µs | GB/s |",
    &[Text, Text, Text, Fixed(0), Fixed(0), Fixed(1), Fixed(0)],
);

pub fn run_rows(gpu: &Gpu, _copy_bw: f64) -> Result<()> {
    let s = gpu.default_stream();
    println!("### Axis rows: pieces per row around Auto's (cold: rotated)\n");
    ROWS_TABLE.header();
    for case in axis_shapes::all() {
        if let AxisCase::Dense { m, n } = case {
            let kept = std::env::var("AXIS_TUNING_SHAPE").map_or(true, |w| w == format!("{}x{}", m, n));
            if m > 1 && kept {
                rows(s, m, n, |i| (i % 1000) as f32 * 0.5 - 250.0)?;
                rows(s, m, n, |i| bf16::from_f32((i % 1000) as f32 * 0.5 - 250.0))?;
            }
        }
    }
    println!();
    Ok(())
}

/// The pieces per row to time: those of `AXIS_TUNING_CHUNKS` (comma-separated) when set, else
/// Auto's scaled by `SCALES`.
fn tried_chunks(auto_chunks: usize) -> Vec<usize> {
    match std::env::var("AXIS_TUNING_CHUNKS") {
        Ok(list) => list.split(',').filter_map(|v| v.trim().parse().ok()).collect(),
        Err(_) => SCALES.iter().map(|&(num, den)| (auto_chunks * num / den).max(1)).collect(),
    }
}

fn rows<T: TypedElement>(s: &GpuStream, m: usize, n: usize, fill: impl Fn(usize) -> T) -> Result<()> {
    let (shape, elem) = (AxisShape::new(m, n), std::mem::size_of::<T>());
    let bytes = m * n * elem;
    let auto_chunks = match auto_strategy(Axis::Rows, shape, elem, 1, s.sm_count()).1 {
        AxisStrategy::Rows { lanes: 32, chunks } => chunks as usize,
        _ => return Ok(()),
    };
    let inputs = buffers(rotation(s, bytes), m * n, fill)?;
    let mut sums = buffers(1, m, |_| T::Sum::default())?;
    let mut values = buffers(1, m, |_| T::default())?;
    let mut indices = buffers(1, m, |_| 0u64)?;
    for chunks in tried_chunks(auto_chunks) {
        let strategy = AxisStrategy::Rows { lanes: 32, chunks: chunks.clamp(1, AXIS_MAX_CHUNKS) as u32 };
        for &op in ["sum", "max", "argmax"].iter() {
            let ms = median_ms(s, WARMUP, REPS, |i| {
                let x = &inputs[i % inputs.len()];
                match op {
                    "sum" => s.sum_along(Axis::Rows, shape, x, &mut sums[0], strategy),
                    "max" => s.reduce_along(TypedOp::Max, Axis::Rows, shape, x, &mut values[0], strategy),
                    _ => s.arg_along(ArgOp::ArgMax, Axis::Rows, shape, x, &mut values[0], &mut indices[0], strategy),
                }
            })?;
            ROWS_TABLE.row(&[
                format!("{} × {}", m, n).into(),
                T::NAME.into(),
                op.into(),
                (chunks as f64).into(),
                (auto_chunks as f64).into(),
                (ms * 1e3).into(),
                gbps(bytes, ms).into(),
            ]);
        }
    }
    Ok(())
}

/// The splits to time: those of `AXIS_TUNING_SPLITS` (comma-separated) when set, else Auto's
/// scaled by `SCALES`.
fn tried_splits(auto_splits: usize) -> Vec<usize> {
    match std::env::var("AXIS_TUNING_SPLITS") {
        Ok(list) => list.split(',').filter_map(|v| v.trim().parse().ok()).collect(),
        Err(_) => SCALES.iter().map(|&(num, den)| auto_splits * num / den).collect(),
    }
}

fn columns<T: TypedElement>(s: &GpuStream, m: usize, n: usize, fill: impl Fn(usize) -> T) -> Result<()> {
    let (shape, elem) = (AxisShape::new(m, n), std::mem::size_of::<T>());
    let bytes = m * n * elem;
    let inputs = buffers(rotation(s, bytes), m * n, fill)?;
    let width = column_width(elem, inputs[0].as_device_ptr().as_raw(), shape);
    let auto = auto_strategy(Axis::Columns, shape, elem, width, s.sm_count()).1;
    let (tile, auto_splits) = match auto {
        AxisStrategy::Columns { tile, splits } => (tile, splits as usize),
        _ => return Ok(()),
    };
    // Chunks per column are splits × phases; the fold takes at most AXIS_MAX_CHUNKS.
    let phases = fold_plan(shape, auto).map_or(1, |f| f.chunks / auto_splits);
    let most = AXIS_MAX_CHUNKS / phases;
    let mut sums = buffers(1, n, |_| T::Sum::default())?;
    let mut values = buffers(1, n, |_| T::default())?;
    let mut indices = buffers(1, n, |_| 0u64)?;
    for splits in tried_splits(auto_splits) {
        let splits = splits.clamp(1, most);
        let strategy = AxisStrategy::Columns { tile, splits: splits as u32 };
        for &op in ["sum", "argmax"].iter() {
            let ms = median_ms(s, WARMUP, REPS, |i| {
                let x = &inputs[i % inputs.len()];
                match op {
                    "sum" => s.sum_along(Axis::Columns, shape, x, &mut sums[0], strategy),
                    _ => s.arg_along(ArgOp::ArgMax, Axis::Columns, shape, x, &mut values[0], &mut indices[0], strategy),
                }
            })?;
            TABLE.row(&[
                format!("{} × {}", m, n).into(),
                T::NAME.into(),
                op.into(),
                (width as f64).into(),
                (tile as f64).into(),
                (splits as f64).into(),
                (auto_splits as f64).into(),
                (ms * 1e3).into(),
                gbps(bytes, ms).into(),
            ]);
        }
    }
    Ok(())
}
