//! argmin and argmax along an axis on the GPU: every row, column and segment, every type,
//! u32 and u64 indices, m and n in {0, 1, 31, 32, 33, 255, 257}, padded rows (lda > n, and
//! lda a multiple of 16: 16-byte aligned rows, a vector of columns per thread), views
//! 1..15 elements in; each line one of the arg cases (ties at the ends, all equal, integer
//! MIN/MAX, NaN first/middle/last and several, ±0); `Auto` and named (split) strategies; the
//! `words` kernels of halves' columns on long walks;
//! outputs poisoned first; values (bits) and indices compared exactly with a CPU reference;
//! empty lines get (identity, all-ones index); the indices alone (`arg_indices_along`,
//! `segmented_arg_indices`) against the same reference; determinism; the typed errors.
mod common;
use common::arg::{cases, check_along, check_indices, matrix, run_along, ArgRef, AXIS_ARG_OPS as OPS};
use common::axis::{poisoned, short_row_lengths, SHORT_ROW_COUNTS};
use common::{download, gpu, upload, Rng};
use cudakernels::cust::memory::{DeviceCopy, DevicePointer, DeviceSlice};
use cudakernels::{
    bf16, column_word_tracks, f16, ArgOp, Axis, AxisShape, AxisStrategy, Error, AXIS_MAX_ROW_PIECES, AXIS_TILE_TYPES,
};

const SIZES: [usize; 7] = [0, 1, 31, 32, 33, 255, 257];

fn every_shape<T: ArgRef>(test: &str) {
    let handle = match gpu(test) {
        Some(g) => g,
        None => return,
    };
    let s = handle.default_stream();
    let mut rng = Rng::fresh(test);
    for &m in SIZES.iter() {
        for &n in SIZES.iter() {
            for &(pad, offset) in [(0, 0), (3, 1 + rng.below(15)), ((n + 16) / 16 * 16 - n, 0)].iter() {
                let shape = AxisShape::new(m, n).with_lda(n + pad);
                let ctx = format!("seed {} {} {}x{} lda {} offset {}", rng.seed, T::NAME, m, n, n + pad, offset);
                for &axis in [Axis::Rows, Axis::Columns].iter() {
                    let (buffer, lines) = matrix::<T>(&mut rng, shape, offset, axis);
                    let data = (&buffer[..], &lines[..]);
                    if pad == 0 {
                        run_along::<T, u64>(s, data, offset, shape, axis, AxisStrategy::Auto, &ctx);
                    } else {
                        run_along::<T, u32>(s, data, offset, shape, axis, AxisStrategy::Auto, &ctx);
                    }
                }
            }
        }
    }
}

#[test]
fn axis_arg_u8() {
    every_shape::<u8>("axis_arg_u8");
}
#[test]
fn axis_arg_i8() {
    every_shape::<i8>("axis_arg_i8");
}
#[test]
fn axis_arg_u16() {
    every_shape::<u16>("axis_arg_u16");
}
#[test]
fn axis_arg_i16() {
    every_shape::<i16>("axis_arg_i16");
}
#[test]
fn axis_arg_i32() {
    every_shape::<i32>("axis_arg_i32");
}
#[test]
fn axis_arg_u32() {
    every_shape::<u32>("axis_arg_u32");
}
#[test]
fn axis_arg_f32() {
    every_shape::<f32>("axis_arg_f32");
}
#[test]
fn axis_arg_f64() {
    every_shape::<f64>("axis_arg_f64");
}
#[test]
fn axis_arg_f16() {
    every_shape::<f16>("axis_arg_f16");
}
#[test]
fn axis_arg_bf16() {
    every_shape::<bf16>("axis_arg_bf16");
}

/// The split paths (rows in chunks, columns in splits, both folded in order) and `Auto`'s
/// splits of few long rows and of many rows of few columns.
fn named<T: ArgRef>(test: &str) {
    let handle = match gpu(test) {
        Some(g) => g,
        None => return,
    };
    let s = handle.default_stream();
    let mut rng = Rng::fresh(test);
    let shape = AxisShape::new(37, 1029).with_lda(1034);
    let ctx = format!("seed {} {} 37x1029", rng.seed, T::NAME);
    let (buffer, lines) = matrix::<T>(&mut rng, shape, 3, Axis::Rows);
    // Eight chunks of a warp each: a row per block, folded in the block; other splits folded
    // by each row's last piece, up to the most it folds, then by the fold launch.
    for &lanes in [1, 4, 32].iter() {
        for &chunks in [1, 3, 8, 64, AXIS_MAX_ROW_PIECES as u32, AXIS_MAX_ROW_PIECES as u32 + 1].iter() {
            let strategy = AxisStrategy::Rows { lanes, chunks };
            run_along::<T, u32>(s, (&buffer, &lines), 3, shape, Axis::Rows, strategy, &ctx);
        }
    }
    let (buffer, lines) = matrix::<T>(&mut rng, shape, 5, Axis::Columns);
    // Rows 16-byte aligned (lda a multiple of 16, no offset): a vector of columns per thread.
    let aligned = AxisShape::new(37, 1029).with_lda(1040);
    let (aligned_buffer, aligned_lines) = matrix::<T>(&mut rng, aligned, 0, Axis::Columns);
    for &tile in [1, 32, 256].iter() {
        for &splits in [1, 5, 40].iter() {
            let strategy = AxisStrategy::Columns { tile, splits };
            run_along::<T, u64>(s, (&buffer, &lines), 5, shape, Axis::Columns, strategy, &ctx);
            let data = (&aligned_buffer[..], &aligned_lines[..]);
            run_along::<T, u64>(s, data, 0, aligned, Axis::Columns, strategy, &ctx);
            // Both index widths: a thread's results go out as 16-byte vectors where aligned.
            run_along::<T, u32>(s, data, 0, aligned, Axis::Columns, strategy, &ctx);
        }
    }
    // Columns folded in their launch, where the type has `tiles` kernels.
    if AXIS_TILE_TYPES.contains(&T::NAME) {
        for &(tile, splits) in [(1, 1), (4, 3), (32, 40), (256, 5)].iter() {
            let strategy = AxisStrategy::FoldedColumns { tile, splits };
            run_along::<T, u64>(s, (&buffer, &lines), 5, shape, Axis::Columns, strategy, &ctx);
            let data = (&aligned_buffer[..], &aligned_lines[..]);
            run_along::<T, u32>(s, data, 0, aligned, Axis::Columns, strategy, &ctx);
        }
    }
    // Enough rows of 16 KiB or more (f32) for `Auto` to give each a block.
    let block_rows = (16 * s.sm_count() as usize + 3, 4103, Axis::Rows);
    // Enough rows for `Auto`'s arg lanes (a lane per sixteen vectors): two lanes a row of 64
    // f32 (four vectors a lane), sixteen a row of 1024.
    let sm = s.sm_count() as usize;
    let arg_lanes = [(16 * 16 * sm, 64, Axis::Rows), (32 * sm, 1024, Axis::Rows)];
    let autos = [(2, 100_003, Axis::Rows), (5000, 33, Axis::Columns), (100_001, 1, Axis::Columns), block_rows];
    let autos = autos.iter().chain(arg_lanes.iter());
    for &(m, n, axis) in autos {
        let shape = AxisShape::new(m, n);
        let (buffer, lines) = matrix::<T>(&mut rng, shape, 1, axis);
        run_along::<T, u64>(
            s,
            (&buffer, &lines),
            1,
            shape,
            axis,
            AxisStrategy::Auto,
            &format!("seed {} {}x{}", rng.seed, m, n),
        );
    }
}

/// Columns of halves over walks of `AXIS_WORD_TRACK_MIN_ROWS` rows or more run the `words` kernel
/// (packed extremes, each lane's last moving batch and its elements held), or `word_tiles` folded
/// in the launch: tiles of 4 to 256 threads, one split and several, walks of 375 rows down to 18
/// (whole batches, a batch of four and single rows at the end), a partial last vector, every arg
/// case per column (NaN, ±0, ties, all equal), both index widths.
fn column_words<T: ArgRef>(test: &str) {
    let handle = match gpu(test) {
        Some(g) => g,
        None => return,
    };
    let s = handle.default_stream();
    let mut rng = Rng::fresh(test);
    let shape = AxisShape::new(3001, 1029).with_lda(1040);
    let ctx = format!("seed {} {} 3001x1029 lda 1040", rng.seed, T::NAME);
    let (buffer, lines) = matrix::<T>(&mut rng, shape, 0, Axis::Columns);
    let width = 16 / std::mem::size_of::<T>() as u32;
    let folded = |tile, splits| AxisStrategy::FoldedColumns { tile, splits };
    let cols = |tile, splits| AxisStrategy::Columns { tile, splits };
    // `words`, and `word_tiles` for the same walks folded in their launch.
    for &strategy in [
        cols(32, 1),
        cols(256, 1),
        cols(256, 7),
        cols(64, 3),
        cols(32, 20),
        folded(4, 1),
        folded(4, 2),
        folded(16, 1),
        folded(32, 1),
        folded(64, 3),
        folded(128, 7),
        folded(256, 150),
    ]
    .iter()
    {
        assert!(column_word_tracks(T::NAME, shape, strategy, width), "{}: {:?} takes `cols`", ctx, strategy);
        run_along::<T, u64>(s, (&buffer, &lines), 0, shape, Axis::Columns, strategy, &ctx);
        run_along::<T, u32>(s, (&buffer, &lines), 0, shape, Axis::Columns, strategy, &ctx);
    }
}

/// Columns folded in their launch (`FoldedColumns`): tiles of 4 to 64 threads, one split and
/// several (each tile's last block folds them), a column per thread (padded, offset rows) and a
/// vector of them (a partial last vector), every arg case per column, both index widths.
fn folded_columns<T: ArgRef>(test: &str) {
    let handle = match gpu(test) {
        Some(g) => g,
        None => return,
    };
    let s = handle.default_stream();
    let mut rng = Rng::fresh(test);
    for &(lda, offset) in [(1034, 5), (1040, 0)].iter() {
        let shape = AxisShape::new(3001, 1029).with_lda(lda);
        let ctx = format!("seed {} {} 3001x1029 lda {} offset {}", rng.seed, T::NAME, lda, offset);
        let (buffer, lines) = matrix::<T>(&mut rng, shape, offset, Axis::Columns);
        for &(tile, splits) in [(4, 40), (8, 1), (8, 2), (32, 1), (64, 3)].iter() {
            let strategy = AxisStrategy::FoldedColumns { tile, splits };
            run_along::<T, u64>(s, (&buffer, &lines), offset, shape, Axis::Columns, strategy, &ctx);
            run_along::<T, u32>(s, (&buffer, &lines), offset, shape, Axis::Columns, strategy, &ctx);
        }
    }
}

/// Rows of a few vectors a thread each (`ShortRows`): rows of 0 to six vectors and one past,
/// 16-byte aligned and padded, every arg case per row, both index widths, named and `Auto`;
/// rows not 16-byte aligned are refused and nothing is written.
fn short_rows<T: ArgRef>(test: &str) {
    let handle = match gpu(test) {
        Some(g) => g,
        None => return,
    };
    let s = handle.default_stream();
    let mut rng = Rng::fresh(test);
    let per = 16 / std::mem::size_of::<T>();
    for &m in SHORT_ROW_COUNTS.iter() {
        for &n in short_row_lengths(per).iter() {
            let shape = AxisShape::new(m, n).with_lda((n + 16) / 16 * 16);
            let ctx = format!("seed {} {} {}x{} lda {}", rng.seed, T::NAME, m, n, shape.lda);
            let (buffer, lines) = matrix::<T>(&mut rng, shape, 0, Axis::Rows);
            for &strategy in [AxisStrategy::ShortRows, AxisStrategy::Auto].iter() {
                run_along::<T, u64>(s, (&buffer, &lines), 0, shape, Axis::Rows, strategy, &ctx);
                run_along::<T, u32>(s, (&buffer, &lines), 0, shape, Axis::Rows, strategy, &ctx);
            }
        }
    }
    let shape = AxisShape::new(64, 4 * per);
    let (buffer, _) = matrix::<T>(&mut rng, shape, 1, Axis::Rows);
    let dev = upload(&buffer);
    let (values, indices) = (poisoned::<T>(64), poisoned::<u32>(64));
    let refused = s.arg_along(
        ArgOp::ArgMax,
        Axis::Rows,
        shape,
        &dev.index(1..),
        &mut values.index(..),
        &mut indices.index(..),
        AxisStrategy::ShortRows,
    );
    assert!(matches!(refused, Err(Error::Unsupported { .. })), "{}: misaligned short rows: {:?}", test, refused);
    assert!(download(s, &indices).iter().all(|&v| v == u32::from_ne_bytes([0xa5; 4])), "a refused call wrote");
}

#[test]
fn short_rows_f32() {
    short_rows::<f32>("axis_arg_short_rows_f32");
}
#[test]
fn short_rows_f16() {
    short_rows::<f16>("axis_arg_short_rows_f16");
}
#[test]
fn short_rows_bf16() {
    short_rows::<bf16>("axis_arg_short_rows_bf16");
}

#[test]
fn folded_columns_f32() {
    folded_columns::<f32>("axis_arg_folded_columns_f32");
}
#[test]
fn folded_columns_f16() {
    folded_columns::<f16>("axis_arg_folded_columns_f16");
}
#[test]
fn folded_columns_bf16() {
    folded_columns::<bf16>("axis_arg_folded_columns_bf16");
}

#[test]
fn column_word_tracks_f16() {
    column_words::<f16>("axis_arg_column_words_f16");
}
#[test]
fn column_word_tracks_bf16() {
    column_words::<bf16>("axis_arg_column_words_bf16");
}

#[test]
fn named_strategies_f32() {
    named::<f32>("axis_arg_named_f32");
}
#[test]
fn named_strategies_bf16() {
    named::<bf16>("axis_arg_named_bf16");
}
#[test]
fn named_strategies_i8() {
    named::<i8>("axis_arg_named_i8");
}

fn segments<T: ArgRef>(test: &str) {
    let handle = match gpu(test) {
        Some(g) => g,
        None => return,
    };
    let s = handle.default_stream();
    let mut rng = Rng::fresh(test);
    // Long segments on average take the `segments` kernel (a warp each), short ones `rows`.
    for &(count, longest) in [(1, 0), (1, 5), (40, 33), (300, 10_000), (2000, 64), (700, 1000)].iter() {
        // Lengths from 0..=longest, one in four empty; each segment one of the arg cases.
        let mut lines = Vec::new();
        for i in 0..count {
            let len = if rng.below(4) == 0 { 0 } else { rng.below(longest + 1) };
            let mut all = cases::<T>(&mut rng, len);
            lines.push(all.swap_remove(i % all.len()).1);
        }
        let offset = rng.below(16);
        let mut padded: Vec<T> = (0..offset).map(|_| T::random(&mut rng)).collect();
        let mut offsets = vec![0u64];
        for line in lines.iter() {
            padded.extend_from_slice(line);
            offsets.push(offsets.last().unwrap() + line.len() as u64);
        }
        padded.push(T::random(&mut rng));
        let (dev, offs) = (upload(&padded), upload(&offsets));
        let view = dev.index(offset..padded.len() - 1);
        for &op in OPS.iter() {
            let ctx = format!("seed {} {} {} segments offset {}", rng.seed, T::NAME, count, offset);
            let (values, indices) = (poisoned::<T>(count), poisoned::<u32>(count));
            s.segmented_arg(op, &view, &offs, &mut values.index(..count), &mut indices.index(..count)).unwrap();
            check_along(op, &lines, &download(s, &values), &download(s, &indices), &ctx);
            let alone = poisoned::<u64>(count);
            s.segmented_arg_indices(op, &view, &offs, &mut alone.index(..count)).unwrap();
            check_indices(op, &lines, &download(s, &alone), &ctx);
        }
    }
}

#[test]
fn segments_every_type() {
    segments::<u8>("axis_arg_segments_u8");
    segments::<i16>("axis_arg_segments_i16");
    segments::<u32>("axis_arg_segments_u32");
    segments::<f32>("axis_arg_segments_f32");
    segments::<f64>("axis_arg_segments_f64");
    segments::<f16>("axis_arg_segments_f16");
    segments::<bf16>("axis_arg_segments_bf16");
}

/// The same values and indices on every call and stream, split rows and columns.
#[test]
fn deterministic() {
    let handle = match gpu("axis_arg_deterministic") {
        Some(g) => g,
        None => return,
    };
    let mut rng = Rng::fresh("axis_arg_deterministic");
    let (m, n) = (3, (1 << 20) + 7);
    // Few distinct values: many ties, which must resolve the same way every time.
    let host: Vec<f32> = (0..m * n).map(|_| rng.below(50) as f32).collect();
    let dev = upload(&host);
    let other = handle.new_stream().unwrap();
    for &(axis, shape) in [(Axis::Rows, AxisShape::new(m, n)), (Axis::Columns, AxisShape::new(n, m))].iter() {
        let lines: Vec<Vec<f32>> = match axis {
            Axis::Rows => (0..m).map(|i| host[i * n..(i + 1) * n].to_vec()).collect(),
            Axis::Columns => (0..m).map(|c| (0..n).map(|r| host[r * m + c]).collect()).collect(),
        };
        let mut first: Option<(Vec<u32>, Vec<u64>)> = None;
        for round in 0..4 {
            let s = if round % 2 == 0 { handle.default_stream() } else { &other };
            let (values, indices) = (poisoned::<f32>(m), poisoned::<u64>(m));
            s.arg_along(
                ArgOp::ArgMax,
                axis,
                shape,
                &dev,
                &mut values.index(..),
                &mut indices.index(..),
                AxisStrategy::Auto,
            )
            .unwrap();
            let got = (download(s, &values), download(s, &indices));
            check_along(ArgOp::ArgMax, &lines, &got.0, &got.1, &format!("seed {} round {}", rng.seed, round));
            let bits = (got.0.iter().map(|v| v.to_bits()).collect(), got.1);
            match &first {
                None => first = Some(bits),
                Some(f) => assert_eq!(&bits, f, "seed {} {:?} round {}", rng.seed, axis, round),
            }
        }
    }
}

/// A view of `len` `B` over the start of `buffer`'s memory (aliasing it on purpose).
fn alias<A: DeviceCopy, B: DeviceCopy>(buffer: &DeviceSlice<A>, len: usize) -> DeviceSlice<B> {
    // SAFETY: a view of memory `buffer` owns, used only for calls refused before any launch.
    unsafe { DeviceSlice::from_raw_parts_mut(DevicePointer::<B>::from_raw(buffer.as_device_ptr().as_raw()), len) }
}

/// Bad input is refused with its typed error and writes nothing.
#[test]
fn bad_input_is_refused() {
    let handle = match gpu("axis_arg_errors") {
        Some(g) => g,
        None => return,
    };
    let s = handle.default_stream();
    let input = upload(&[1.0f32; 64]);
    let shape = AxisShape::new(4, 16);
    let (values, indices) = (poisoned::<f32>(4), poisoned::<u32>(4));
    let (mut v, mut x) = (values.index(..), indices.index(..));
    let auto = AxisStrategy::Auto;
    let err = |e: Result<(), Error>| e.unwrap_err();
    let short = |what| Error::LengthMismatch { what, expected: 4, actual: 3 };
    assert_eq!(
        err(s.arg_along(ArgOp::ArgMax, Axis::Rows, shape, &input, &mut v.index(..3), &mut x, auto)),
        short("values")
    );
    assert_eq!(
        err(s.arg_along(ArgOp::ArgMin, Axis::Rows, shape, &input, &mut v, &mut x.index(..3), auto)),
        short("indices")
    );
    let lda = shape.with_lda(15);
    assert_eq!(
        err(s.arg_along(ArgOp::ArgMax, Axis::Rows, lda, &input, &mut v, &mut x, auto)),
        Error::LeadingDimension { lda: 15, n: 16 }
    );
    let long = AxisShape::new(5, 16);
    let e = err(s.arg_along(ArgOp::ArgMax, Axis::Rows, long, &input, &mut v, &mut x, auto));
    assert_eq!(e, Error::LengthMismatch { what: "input", expected: 80, actual: 64 });
    assert!(matches!(
        err(s.arg_along(ArgOp::ArgMinMax, Axis::Rows, shape, &input, &mut v, &mut x, auto)),
        Error::Unsupported { .. }
    ));
    let cols = AxisStrategy::Columns { tile: 32, splits: 1 };
    assert!(matches!(
        err(s.arg_along(ArgOp::ArgMax, Axis::Rows, shape, &input, &mut v, &mut x, cols)),
        Error::Unsupported { .. }
    ));
    let mut both: DeviceSlice<u32> = alias(&values, 4);
    let e = err(s.arg_along(ArgOp::ArgMax, Axis::Rows, shape, &input, &mut v, &mut both, auto));
    assert_eq!(e, Error::Overlap { what: "indices", with: "values" });
    let mut over: DeviceSlice<f32> = alias(&input, 4);
    let e = err(s.arg_along(ArgOp::ArgMax, Axis::Rows, shape, &input, &mut over, &mut x, auto));
    assert_eq!(e, Error::Overlap { what: "values", with: "input" });
    let offsets = upload(&[0u64, 10, 64]);
    let mut over: DeviceSlice<u32> = alias(&offsets, 2);
    let e = err(s.segmented_arg(ArgOp::ArgMin, &input, &offsets, &mut v, &mut over));
    assert_eq!(e, Error::Overlap { what: "indices", with: "offsets" });
    let one = upload(&[0u64; 1]);
    let none = one.index(..0);
    let e = err(s.segmented_arg(ArgOp::ArgMin, &input, &none, &mut v, &mut x));
    assert_eq!(e, Error::LengthMismatch { what: "offsets", expected: 1, actual: 0 });
    // Indices alone: the same checks, and a line of one element refused before its fill.
    let e = err(s.arg_indices_along(ArgOp::ArgMax, Axis::Rows, shape, &input, &mut x.index(..3), auto));
    assert_eq!(e, short("indices"));
    let ones = AxisShape::new(4, 1).with_lda(16);
    let e = err(s.arg_indices_along(ArgOp::ArgMax, Axis::Rows, ones, &input, &mut x.index(..3), auto));
    assert_eq!(e, short("indices"));
    let mut over: DeviceSlice<u32> = alias(&input, 4);
    let e = err(s.arg_indices_along(ArgOp::ArgMax, Axis::Rows, ones, &input, &mut over, auto));
    assert_eq!(e, Error::Overlap { what: "indices", with: "input" });
    assert!(matches!(
        err(s.arg_indices_along(ArgOp::ArgMinMax, Axis::Columns, shape, &input, &mut x, auto)),
        Error::Unsupported { .. }
    ));
    let e = err(s.segmented_arg_indices(ArgOp::ArgMin, &input, &offsets, &mut over));
    assert_eq!(e, Error::Overlap { what: "indices", with: "input" });
    s.synchronize().unwrap();
    let (vals, idx) = (download(s, &values), download(s, &indices));
    assert!(
        vals.iter().all(|v| v.to_bits() == 0xa5a5_a5a5) && idx.iter().all(|&i| i == 0xa5a5_a5a5),
        "nothing was written"
    );
}
