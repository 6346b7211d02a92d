//! Tuning of the axis kernels on the dense shapes of data/axis_shapes.csv, cold (inputs rotated
//! past L2), f32 and bf16. `AXIS_TUNING_SHAPE=MxN` times that one shape instead, listed or not.
//! - `axis-tuning`: the `cols` kernel, `Auto`'s row splits against half, 1.5 and twice as many
//!   (or the list in `AXIS_TUNING_SPLITS`), column sums and argmax.
//! - `axis-folded`: column sums, max and argmax (`words` and `word_tiles` for halves over long
//!   walks) through `Auto`'s `Columns` and fold launch, through `FoldedColumns` with the same
//!   tile and splits, and through `Auto`'s `FoldedColumns` for sums, max included (its
//!   `Columns` where it keeps them; Auto's argmax of halves plans its own tiles and splits);
//!   with `AXIS_FOLDED_SWEEP=1`, column sums and argmax through `FoldedColumns` of `cols`' tile
//!   down to an eighth of it (or the tiles in `AXIS_SWEEP_TILES`), at one to four blocks per SM
//!   rounded down and up; with `AXIS_TUNING_SPLITS`, Auto's folded sums and max, and its argmax
//!   strategy, at those splits.
//! - `axis-short`: rows of a few 16-byte vectors (`SHORT_SHAPES`, or `AXIS_TUNING_SHAPE`) through
//!   `Auto`'s `Rows` and through `ShortRows` (a thread per row), row sums, max and argmax, where
//!   `Auto` takes `ShortRows` for argmax.
//! - `axis-rows-tuning`: rows of a warp per row (lanes 32, or the lanes in `AXIS_TUNING_LANES`
//!   on any shape `Rows` takes), `Auto`'s pieces per row for values against half, 1.5 and twice
//!   as many (or the list in `AXIS_TUNING_CHUNKS`), row sums, max and argmax, each row naming
//!   `Auto`'s pieces for its op.
use crate::axis_shapes::{self, AxisCase};
use crate::harness::{
    axis_value, buffers, rotation,
    Fmt::{Fixed, Text},
    Table, REPS, WARMUP,
};
use crate::timing::{gbps, median_ms};
use cudakernels::cust::memory::DeviceBuffer;
use cudakernels::{
    auto_strategy, bf16, column_width, config, fold_plan, folded_columns, short_rows, ArgOp, Axis, AxisFold, AxisShape,
    AxisStrategy, Gpu, GpuStream, Result, TypedElement, TypedOp, AXIS_MAX_CHUNKS,
};

const TABLE: Table = Table::markdown(
    "| shape | type | op | width | tile | splits | Auto's splits | median µs | GB/s |",
    &[Text, Text, Text, Fixed(0), Fixed(0), Fixed(0), Fixed(0), Fixed(1), Fixed(0)],
);

const ROWS_TABLE: Table = Table::markdown(
    "| shape | type | op | lanes | chunks | Auto's chunks | median µs | GB/s |",
    &[Text, Text, Text, Text, Fixed(0), Fixed(0), Fixed(1), Fixed(0)],
);

const FOLDED_TABLE: Table = Table::markdown(
    "| shape | type | op | strategy | tile | splits | median µs | GB/s |",
    &[Text, Text, Text, Text, Fixed(0), Fixed(0), Fixed(1), Fixed(0)],
);

const SHORT_TABLE: Table = Table::markdown(
    "| shape | type | op | strategy | median µs | GB/s |",
    &[Text, Text, Text, Text, Fixed(1), Fixed(0)],
);

/// Shapes of short rows: the list's many short rows and neighbours of other row lengths.
const SHORT_SHAPES: [(usize, usize); 7] =
    [(1 << 20, 16), (1 << 22, 8), (1 << 20, 32), (1 << 21, 12), (1 << 20, 24), (1 << 20, 20), (1 << 20, 48)];

/// Splits or pieces tried, as fractions (numerator, denominator) of Auto's.
const SCALES: [(usize, usize); 4] = [(1, 2), (1, 1), (3, 2), (2, 1)];

pub fn run(gpu: &Gpu, _copy_bw: f64) -> Result<()> {
    println!("### Axis columns: row splits around Auto's (cold: rotated)\n");
    TABLE.header();
    each_shape(gpu.default_stream(), |m, n| m > 1 && n > 1, Tuned::Columns)
}

pub fn run_rows(gpu: &Gpu, _copy_bw: f64) -> Result<()> {
    println!("### Axis rows: pieces per row around Auto's (cold: rotated)\n");
    ROWS_TABLE.header();
    each_shape(gpu.default_stream(), |m, _| m > 1, Tuned::Rows)
}

pub fn run_folded(gpu: &Gpu, _copy_bw: f64) -> Result<()> {
    println!("### Axis columns: the fold launch against the fold in the launch (cold: rotated)\n");
    FOLDED_TABLE.header();
    each_shape(gpu.default_stream(), |m, n| m > 1 && n > 1, Tuned::Folded)
}

pub fn run_short(gpu: &Gpu, _copy_bw: f64) -> Result<()> {
    println!("### Axis short rows: `Rows` against a thread per row (cold: rotated)\n");
    SHORT_TABLE.header();
    let s = gpu.default_stream();
    let shapes = match tuning_shape() {
        Some(shape) => vec![shape],
        None => SHORT_SHAPES.to_vec(),
    };
    let f32s = axis_value;
    for (m, n) in shapes {
        short(s, m, n, f32s)?;
        short(s, m, n, |i| bf16::from_f32(f32s(i)))?;
    }
    println!();
    Ok(())
}

/// `AXIS_TUNING_SHAPE` (`MxN`) when set.
fn tuning_shape() -> Option<(usize, usize)> {
    let w = std::env::var("AXIS_TUNING_SHAPE").ok()?;
    let mn: Vec<usize> = w.split('x').filter_map(|v| v.trim().parse().ok()).collect();
    assert!(mn.len() == 2, "AXIS_TUNING_SHAPE={:?}: expected MxN", w);
    Some((mn[0], mn[1]))
}

/// What a section tunes.
#[derive(Clone, Copy)]
enum Tuned {
    Columns,
    Folded,
    Rows,
}

/// `tuned` on `AXIS_TUNING_SHAPE` (`MxN`) or else on each dense shape of the list that `wanted`
/// takes, f32 then bf16.
fn each_shape(s: &GpuStream, wanted: impl Fn(usize, usize) -> bool, tuned: Tuned) -> Result<()> {
    let shapes: Vec<(usize, usize)> = match tuning_shape() {
        Some(shape) => vec![shape],
        None => axis_shapes::all()
            .into_iter()
            .filter_map(|case| match case {
                AxisCase::Dense { m, n } if wanted(m, n) => Some((m, n)),
                _ => None,
            })
            .collect(),
    };
    for (m, n) in shapes {
        let f32s = axis_value;
        match tuned {
            Tuned::Columns => {
                columns(s, m, n, f32s)?;
                columns(s, m, n, |i| bf16::from_f32(f32s(i)))?;
            }
            Tuned::Folded => {
                folded(s, m, n, f32s)?;
                folded(s, m, n, |i| bf16::from_f32(f32s(i)))?;
            }
            Tuned::Rows => {
                rows(s, m, n, f32s)?;
                rows(s, m, n, |i| bf16::from_f32(f32s(i)))?;
            }
        }
    }
    println!();
    Ok(())
}

/// The values to time: those of the environment variable `var` (comma-separated) when set, else
/// Auto's `auto` scaled by `SCALES` (at least 1).
fn tried(var: &str, auto: usize) -> Vec<usize> {
    env_list(var).unwrap_or_else(|| SCALES.iter().map(|&(num, den)| (auto * num / den).max(1)).collect())
}

/// The comma-separated values of the environment variable `var`, when set.
fn env_list<V: std::str::FromStr>(var: &str) -> Option<Vec<V>> {
    let list = std::env::var(var).ok()?;
    Some(list.split(',').filter_map(|v| v.trim().parse().ok()).collect())
}

/// The outputs of the timed ops for `results` results: sums, values and u64 indices.
struct Outputs<T: TypedElement> {
    sums: DeviceBuffer<T::Sum>,
    values: DeviceBuffer<T>,
    indices: DeviceBuffer<u64>,
}

impl<T: TypedElement> Outputs<T> {
    fn new(results: usize) -> Result<Self> {
        Ok(Outputs {
            sums: buffers(1, results, |_| T::Sum::default())?.remove(0),
            values: buffers(1, results, |_| T::default())?.remove(0),
            indices: buffers(1, results, |_| 0u64)?.remove(0),
        })
    }

    /// Median ms of `op` ("sum", "max" or "argmax") along `axis` of `shape` over the rotated
    /// `inputs` with `strategy`.
    fn time(
        &mut self,
        s: &GpuStream,
        op: &str,
        (axis, shape): (Axis, AxisShape),
        inputs: &[DeviceBuffer<T>],
        strategy: AxisStrategy,
    ) -> Result<f64> {
        median_ms(s, WARMUP, REPS, |i| {
            let x = &inputs[i % inputs.len()];
            match op {
                "sum" => s.sum_along(axis, shape, x, &mut self.sums, strategy),
                "max" => s.reduce_along(TypedOp::Max, axis, shape, x, &mut self.values, strategy),
                _ => s.arg_along(ArgOp::ArgMax, axis, shape, x, &mut self.values, &mut self.indices, strategy),
            }
        })
    }
}

fn rows<T: TypedElement>(s: &GpuStream, m: usize, n: usize, fill: impl Fn(usize) -> T) -> Result<()> {
    let (shape, elem) = (AxisShape::new(m, n), std::mem::size_of::<T>());
    let bytes = m * n * elem;
    let auto_of = |fold| match auto_strategy(Axis::Rows, shape, elem, fold, 1, s.sm_count()).1 {
        AxisStrategy::Rows { lanes, chunks } => Some((lanes, chunks as usize)),
        _ => None,
    };
    let ((lanes, auto_chunks), (_, auto_arg_chunks)) = match (auto_of(AxisFold::Values), auto_of(AxisFold::Args)) {
        (Some(values), Some(args)) => (values, args),
        _ => return Ok(()),
    };
    let lanes_tried: Vec<u32> = match env_list("AXIS_TUNING_LANES") {
        Some(list) => list,
        None if lanes == 32 => vec![32],
        None => return Ok(()),
    };
    let inputs = buffers(rotation(s, bytes), m * n, fill)?;
    let mut outs = Outputs::<T>::new(m)?;
    for &lanes in lanes_tried.iter() {
        for chunks in tried("AXIS_TUNING_CHUNKS", auto_chunks) {
            let strategy = AxisStrategy::Rows { lanes, chunks: chunks.clamp(1, AXIS_MAX_CHUNKS) as u32 };
            for &op in ["sum", "max", "argmax"].iter() {
                let ms = outs.time(s, op, (Axis::Rows, shape), &inputs, strategy)?;
                ROWS_TABLE.row(&[
                    format!("{} × {}", m, n).into(),
                    T::NAME.into(),
                    op.into(),
                    lanes.into(),
                    (chunks as f64).into(),
                    (if op == "argmax" { auto_arg_chunks } else { auto_chunks } as f64).into(),
                    (ms * 1e3).into(),
                    gbps(bytes, ms).into(),
                ]);
            }
        }
    }
    Ok(())
}

/// Sums, max and argmax on `m` × `n` through `ShortRows` and through each op's own `Auto`
/// `Rows`, where `Auto` takes `ShortRows` for argmax.
fn short<T: TypedElement>(s: &GpuStream, m: usize, n: usize, fill: impl Fn(usize) -> T) -> Result<()> {
    let (shape, elem) = (AxisShape::new(m, n), std::mem::size_of::<T>());
    let bytes = m * n * elem;
    let inputs = buffers(rotation(s, bytes), m * n, fill)?;
    let width = column_width(elem, inputs[0].as_device_ptr().as_raw(), shape);
    let rows = |fold| auto_strategy(Axis::Rows, shape, elem, fold, width, s.sm_count()).1;
    if short_rows(T::NAME, elem, AxisFold::Args, shape, width, rows(AxisFold::Args)) != AxisStrategy::ShortRows {
        return Ok(());
    }
    let mut outs = Outputs::<T>::new(m)?;
    for &op in ["sum", "max", "argmax"].iter() {
        let fold = if op == "argmax" { AxisFold::Args } else { AxisFold::Values };
        for &(name, strategy) in [("Rows", rows(fold)), ("ShortRows", AxisStrategy::ShortRows)].iter() {
            let ms = outs.time(s, op, (Axis::Rows, shape), &inputs, strategy)?;
            SHORT_TABLE.row(&[
                format!("{} × {}", m, n).into(),
                T::NAME.into(),
                op.into(),
                format!("{} {:?}", name, strategy).into(),
                (ms * 1e3).into(),
                gbps(bytes, ms).into(),
            ]);
        }
    }
    Ok(())
}

fn columns<T: TypedElement>(s: &GpuStream, m: usize, n: usize, fill: impl Fn(usize) -> T) -> Result<()> {
    let (shape, elem) = (AxisShape::new(m, n), std::mem::size_of::<T>());
    let bytes = m * n * elem;
    let inputs = buffers(rotation(s, bytes), m * n, fill)?;
    let width = column_width(elem, inputs[0].as_device_ptr().as_raw(), shape);
    let auto = auto_strategy(Axis::Columns, shape, elem, AxisFold::Values, width, s.sm_count()).1;
    let (tile, auto_splits) = match auto {
        AxisStrategy::Columns { tile, splits } => (tile, splits as usize),
        _ => return Ok(()),
    };
    // Chunks per column are splits × phases; the fold takes at most AXIS_MAX_CHUNKS.
    let phases = fold_plan(shape, auto).map_or(1, |f| f.chunks / auto_splits);
    let most = AXIS_MAX_CHUNKS / phases;
    let mut outs = Outputs::<T>::new(n)?;
    for splits in tried("AXIS_TUNING_SPLITS", auto_splits) {
        let splits = splits.clamp(1, most);
        let strategy = AxisStrategy::Columns { tile, splits: splits as u32 };
        for &op in ["sum", "argmax"].iter() {
            let ms = outs.time(s, op, (Axis::Columns, shape), &inputs, strategy)?;
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

fn folded<T: TypedElement>(s: &GpuStream, m: usize, n: usize, fill: impl Fn(usize) -> T) -> Result<()> {
    let (shape, elem) = (AxisShape::new(m, n), std::mem::size_of::<T>());
    let bytes = m * n * elem;
    let inputs = buffers(rotation(s, bytes), m * n, fill)?;
    let width = column_width(elem, inputs[0].as_device_ptr().as_raw(), shape);
    let cols = auto_strategy(Axis::Columns, shape, elem, AxisFold::Values, width, s.sm_count()).1;
    let (tile, splits) = match cols {
        AxisStrategy::Columns { tile, splits } if fold_plan(shape, cols).is_some() => (tile, splits),
        _ => return Ok(()),
    };
    let auto = folded_columns(T::NAME, elem, AxisFold::Values, shape, width, s.sm_count(), cols);
    let same = AxisStrategy::FoldedColumns { tile, splits };
    let auto_name =
        if matches!(auto, AxisStrategy::FoldedColumns { .. }) { "folded, Auto" } else { "Auto: cols + fold" };
    let mut tried = vec![("cols + fold", cols), ("folded, cols' tile", same), (auto_name, auto)];
    if std::env::var("AXIS_FOLDED_SWEEP").map_or(false, |v| v == "1") {
        let threads = (n + width as usize - 1) / width as usize;
        let tiles_tried =
            env_list::<u32>("AXIS_SWEEP_TILES").unwrap_or_else(|| vec![tile, tile / 2, tile / 4, tile / 8]);
        for t in tiles_tried.into_iter().filter(|t| (1..=config::AXIS_BLOCK).contains(t)) {
            let (tiles, phases) = ((threads + t as usize - 1) / t as usize, (config::AXIS_BLOCK / t) as usize);
            let most = (m / (phases * 16)).max(1);
            let mut splits_tried: Vec<usize> = (1..=4)
                .flat_map(|per_sm| {
                    let blocks = s.sm_count() as usize * per_sm;
                    [blocks / tiles, (blocks + tiles - 1) / tiles]
                })
                .map(|splits| splits.clamp(1, most))
                .collect();
            splits_tried.dedup();
            for splits in splits_tried {
                tried.push(("sweep", AxisStrategy::FoldedColumns { tile: t, splits: splits as u32 }));
            }
        }
    }
    if let Some(list) = env_list::<u32>("AXIS_TUNING_SPLITS") {
        let sm = s.sm_count();
        let args_cols = auto_strategy(Axis::Columns, shape, elem, AxisFold::Args, width, sm).1;
        let args = folded_columns(T::NAME, elem, AxisFold::Args, shape, width, sm, args_cols);
        for &splits in list.iter() {
            tried.push(("splits", with_splits(auto, splits)));
            tried.push(("arg splits", with_splits(args, splits)));
        }
    }
    let mut outs = Outputs::<T>::new(n)?;
    for &(name, strategy) in tried.iter() {
        let (tile, splits) = match strategy {
            AxisStrategy::Columns { tile, splits } | AxisStrategy::FoldedColumns { tile, splits } => (tile, splits),
            _ => continue,
        };
        let ops: &[&str] = match name {
            "sweep" => &["sum", "argmax"],
            "splits" => &["sum", "max"],
            "arg splits" => &["argmax"],
            _ => &["sum", "max", "argmax"],
        };
        for &op in ops.iter() {
            let ms = outs.time(s, op, (Axis::Columns, shape), &inputs, strategy)?;
            FOLDED_TABLE.row(&[
                format!("{} × {}", m, n).into(),
                T::NAME.into(),
                op.into(),
                name.into(),
                (tile as f64).into(),
                (splits as f64).into(),
                (ms * 1e3).into(),
                gbps(bytes, ms).into(),
            ]);
        }
    }
    Ok(())
}

/// `strategy` (`Columns` or `FoldedColumns`) with `splits` splits; any other as it is.
fn with_splits(strategy: AxisStrategy, splits: u32) -> AxisStrategy {
    match strategy {
        AxisStrategy::Columns { tile, .. } => AxisStrategy::Columns { tile, splits },
        AxisStrategy::FoldedColumns { tile, .. } => AxisStrategy::FoldedColumns { tile, splits },
        other => other,
    }
}
