//! Reductions along an axis on the GPU: sum, min, max and minmax of every row, column and
//! segment, every type, under `Auto` and named strategies, at edge shapes (0, 1, 31, 32, 33, a
//! block ±1), padded rows (lda > n, and lda a multiple of 16 for the vector columns kernel),
//! views 1..15 elements into a buffer, with extremes, NaN,
//! ±inf and ±0 placed in rows; outputs poisoned first; compared with a CPU reference (exact for
//! integers and min/max, float sums within the bound of their summation depth).
mod common;
use common::axis::{poisoned, run_case, short_row_lengths, Case, SHORT_ROW_COUNTS};
use common::typed::Reference;
use common::{download, gpu, upload, Rng};
use cudakernels::{Axis, AxisShape, AxisStrategy, AXIS_MAX_ROW_PIECES};

/// (m, n): empty, single, warp ±1, block ±1, one-element rows (a vector of them per load where
/// aligned), split rows, short rows, split columns.
const SHAPES: [(usize, usize); 17] = [
    (0, 5),
    (5, 0),
    (1, 1),
    (1, 31),
    (31, 32),
    (32, 33),
    (33, 1),
    (70_001, 1),
    (3, 255),
    (2, 257),
    (7, 1000),
    (1, 70_000),
    (300, 16),
    (1000, 3),
    (129, 64),
    (5000, 33),
    (2, 100_003),
];

/// Padding that makes lda a multiple of 16 elements above n: every row 16-byte aligned, so the
/// columns kernel reads a vector of columns per thread, the last one partial unless 16 | n.
fn aligned_pad(n: usize) -> usize {
    (n + 16) / 16 * 16 - n
}

fn every_shape<T: Reference>(test: &str, specials: &[T]) {
    let handle = match gpu(test) {
        Some(g) => g,
        None => return,
    };
    let s = handle.default_stream();
    let mut rng = Rng::fresh(test);
    for &(m, n) in SHAPES.iter() {
        for &(pad, offset) in [(0, 0), (3, 1 + rng.below(15)), (aligned_pad(n), 0)].iter() {
            let case = Case::new(&mut rng, m, n, pad, offset, specials);
            let ctx = format!("seed {} {} {}x{} lda {} offset {}", rng.seed, T::NAME, m, n, n + pad, offset);
            run_case(s, &case, Axis::Rows, AxisStrategy::Auto, &ctx);
            run_case(s, &case, Axis::Columns, AxisStrategy::Auto, &ctx);
        }
    }
}

fn int_specials<T: Reference>() -> Vec<T> {
    T::extremes()
}

#[test]
fn axis_u8() {
    every_shape::<u8>("axis_u8", &int_specials::<u8>());
}
#[test]
fn axis_i8() {
    every_shape::<i8>("axis_i8", &int_specials::<i8>());
}
#[test]
fn axis_u16() {
    every_shape::<u16>("axis_u16", &int_specials::<u16>());
}
#[test]
fn axis_i16() {
    every_shape::<i16>("axis_i16", &int_specials::<i16>());
}
#[test]
fn axis_i32() {
    every_shape::<i32>("axis_i32", &int_specials::<i32>());
}
#[test]
fn axis_u32() {
    every_shape::<u32>("axis_u32", &int_specials::<u32>());
}
#[test]
fn axis_f32() {
    every_shape::<f32>("axis_f32", &[]);
    every_shape::<f32>("axis_f32_special", &[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0, -0.0]);
}
#[test]
fn axis_f64() {
    every_shape::<f64>("axis_f64", &[]);
    every_shape::<f64>("axis_f64_special", &[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0, -0.0]);
}

#[test]
fn axis_f16() {
    use cudakernels::f16;
    every_shape::<f16>("axis_f16", &[f16::NAN, f16::INFINITY, f16::NEG_INFINITY, f16::NEG_ZERO, f16::ZERO]);
}
#[test]
fn axis_bf16() {
    use cudakernels::bf16;
    every_shape::<bf16>("axis_bf16", &[bf16::NAN, bf16::INFINITY, bf16::NEG_INFINITY, bf16::NEG_ZERO, bf16::ZERO]);
}

/// Columns folded in their launch (`FoldedColumns`), each type with `tiles` kernels: tiles of
/// 1 to 256 threads (the last one partial), one split (the block's phases alone) and several
/// (each tile's last block folds them; the calls in turn reuse the tickets the last blocks
/// leave zero), a column per thread (padded and offset rows) and a vector of them (aligned
/// rows, a partial last vector). Integer types are refused before any launch.
#[test]
fn folded_columns() {
    use cudakernels::{bf16, f16, ArgOp, Error};
    let handle = match gpu("axis_folded_columns") {
        Some(g) => g,
        None => return,
    };
    let s = handle.default_stream();
    let mut rng = Rng::fresh("axis_folded_columns");
    fn each<T: Reference>(s: &cudakernels::GpuStream, rng: &mut Rng, specials: &[T]) {
        let (m, n) = (3001, 1029);
        let cases = [Case::<T>::new(rng, m, n, 5, 3, specials), Case::<T>::new(rng, m, n, aligned_pad(n), 0, specials)];
        for case in cases.iter() {
            let ctx = format!("seed {} {} {}x{} lda {}", rng.seed, T::NAME, m, n, case.shape.lda);
            for &tile in [1, 4, 32, 256].iter() {
                for &splits in [1, 3, 40].iter() {
                    run_case(s, case, Axis::Columns, AxisStrategy::FoldedColumns { tile, splits }, &ctx);
                }
            }
        }
    }
    each::<f32>(s, &mut rng, &[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0]);
    each::<f16>(s, &mut rng, &[f16::NAN, f16::INFINITY, f16::NEG_INFINITY, f16::NEG_ZERO, f16::ZERO]);
    each::<bf16>(s, &mut rng, &[bf16::NAN, bf16::INFINITY, bf16::NEG_INFINITY, bf16::NEG_ZERO, bf16::ZERO]);

    let folded = AxisStrategy::FoldedColumns { tile: 32, splits: 3 };
    let shape = AxisShape::new(64, 64);
    let ints = upload(&vec![7i32; 64 * 64]);
    let sums = poisoned::<i64>(64);
    let refused = s.sum_along(Axis::Columns, shape, &ints, &mut sums.index(..), folded);
    assert!(matches!(refused, Err(Error::Unsupported { .. })), "i32 folded columns: {:?}", refused);
    let (values, indices) = (poisoned::<i32>(64), poisoned::<u32>(64));
    let (v, x) = (&mut values.index(..), &mut indices.index(..));
    let refused = s.arg_along(ArgOp::ArgMax, Axis::Columns, shape, &ints, v, x, folded);
    assert!(matches!(refused, Err(Error::Unsupported { .. })), "i32 argmax folded columns: {:?}", refused);
    // Nothing was written.
    assert!(download(s, &sums).iter().all(|&v| v == i64::from_ne_bytes([0xa5; 8])), "a refused call wrote its output");
    assert!(
        download(s, &indices).iter().all(|&v| v == u32::from_ne_bytes([0xa5; 4])),
        "a refused call wrote its output"
    );
}

/// Rows of a few vectors a thread each (`ShortRows`), each type with `short` kernels: rows of
/// 0 to six vectors and one past (the kernel's whole vectors stop at four), 16-byte aligned
/// rows padded past n, and 2^18 packed rows of four vectors, named and through `Auto`. Rows not
/// 16-byte aligned and integer types are refused before any launch.
#[test]
fn short_rows() {
    use cudakernels::{bf16, f16, Error, SHORT_ROW_TYPES};
    let handle = match gpu("axis_short_rows") {
        Some(g) => g,
        None => return,
    };
    let s = handle.default_stream();
    let mut rng = Rng::fresh("axis_short_rows");
    fn each<T: Reference>(s: &cudakernels::GpuStream, rng: &mut Rng, specials: &[T]) {
        assert!(SHORT_ROW_TYPES.contains(&T::NAME));
        let per = 16 / std::mem::size_of::<T>();
        for &m in SHORT_ROW_COUNTS.iter() {
            for &n in short_row_lengths(per).iter() {
                let case = Case::<T>::new(rng, m, n, aligned_pad(n), 0, specials);
                let ctx = format!("seed {} {} {}x{} lda {}", rng.seed, T::NAME, m, n, case.shape.lda);
                run_case(s, &case, Axis::Rows, AxisStrategy::ShortRows, &ctx);
                run_case(s, &case, Axis::Rows, AxisStrategy::Auto, &ctx);
            }
        }
        // Packed rows of four vectors, many blocks.
        let case = Case::<T>::new(rng, 1 << 18, 4 * per, 0, 0, specials);
        let ctx = format!("seed {} {} 2^18x{} packed", rng.seed, T::NAME, 4 * per);
        run_case(s, &case, Axis::Rows, AxisStrategy::ShortRows, &ctx);
        run_case(s, &case, Axis::Rows, AxisStrategy::Auto, &ctx);
    }
    each::<f32>(s, &mut rng, &[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0]);
    each::<f16>(s, &mut rng, &[f16::NAN, f16::INFINITY, f16::NEG_INFINITY, f16::NEG_ZERO, f16::ZERO]);
    each::<bf16>(s, &mut rng, &[bf16::NAN, bf16::INFINITY, bf16::NEG_INFINITY, bf16::NEG_ZERO, bf16::ZERO]);

    let short = AxisStrategy::ShortRows;
    let shape = AxisShape::new(64, 16);
    let floats = upload(&vec![1.5f32; 64 * 17 + 1]);
    let ints = upload(&vec![7i32; 64 * 16]);
    let (sums, int_sums) = (poisoned::<f32>(64), poisoned::<i64>(64));
    // One element in: every row starts 4 bytes past a 16-byte boundary.
    let refused = s.sum_along(Axis::Rows, shape, &floats.index(1..), &mut sums.index(..), short);
    assert!(matches!(refused, Err(Error::Unsupported { .. })), "misaligned short rows: {:?}", refused);
    // Rows 68 bytes apart.
    let refused = s.sum_along(Axis::Rows, shape.with_lda(17), &floats.index(..), &mut sums.index(..), short);
    assert!(matches!(refused, Err(Error::Unsupported { .. })), "lda 17 short rows: {:?}", refused);
    let refused = s.sum_along(Axis::Rows, shape, &ints, &mut int_sums.index(..), short);
    assert!(matches!(refused, Err(Error::Unsupported { .. })), "i32 short rows: {:?}", refused);
    let refused = s.sum_along(Axis::Columns, shape, &floats.index(..), &mut sums.index(..16), short);
    assert!(matches!(refused, Err(Error::Unsupported { .. })), "short rows of columns: {:?}", refused);
    // Nothing was written.
    assert!(download(s, &sums).iter().all(|&v| v.to_bits() == u32::from_ne_bytes([0xa5; 4])), "a refused call wrote");
    assert!(download(s, &int_sums).iter().all(|&v| v == i64::from_ne_bytes([0xa5; 8])), "a refused call wrote");
}

/// Every named strategy's parameters on shapes they split, pad and offset.
#[test]
fn named_strategies() {
    let handle = match gpu("axis_named_strategies") {
        Some(g) => g,
        None => return,
    };
    let s = handle.default_stream();
    let mut rng = Rng::fresh("axis_named_strategies");
    let case = Case::<f32>::new(&mut rng, 37, 1029, 5, 3, &[f32::NAN, -0.0]);
    let ctx = format!("seed {} f32 37x1029", rng.seed);
    // Chunks of AXIS_BLOCK / lanes with a warp each: a row per block, folded in the block; other
    // splits folded by each row's last piece, up to the most it folds, then by the fold launch.
    for &lanes in [1, 2, 4, 8, 16, 32].iter() {
        for &chunks in [1, 3, 8, 64, AXIS_MAX_ROW_PIECES as u32, AXIS_MAX_ROW_PIECES as u32 + 1].iter() {
            run_case(s, &case, Axis::Rows, AxisStrategy::Rows { lanes, chunks }, &ctx);
        }
    }
    // The same shape with 16-byte aligned rows: a float4 of columns per thread, the last partial.
    let aligned = Case::<f32>::new(&mut rng, 37, 1029, aligned_pad(1029), 0, &[f32::NAN, -0.0]);
    for &tile in [1, 32, 64, 256].iter() {
        for &splits in [1, 5, 40].iter() {
            run_case(s, &case, Axis::Columns, AxisStrategy::Columns { tile, splits }, &ctx);
            run_case(s, &aligned, Axis::Columns, AxisStrategy::Columns { tile, splits }, &ctx);
        }
    }
    // Enough rows of 16 KiB or more for `Auto` to give each a block, padded and offset.
    let m = 16 * s.sm_count() as usize + 3;
    let block_rows = Case::<f32>::new(&mut rng, m, 4103, 3, 1, &[f32::NAN, -0.0]);
    run_case(s, &block_rows, Axis::Rows, AxisStrategy::Auto, &format!("seed {} f32 {}x4103", rng.seed, m));
    // A contiguous column is a row: Auto and named rows kernels take it.
    let column = Case::<i32>::new(&mut rng, 100_001, 1, 0, 2, &[]);
    run_case(s, &column, Axis::Columns, AxisStrategy::Auto, &ctx);
    run_case(s, &column, Axis::Columns, AxisStrategy::Rows { lanes: 32, chunks: 7 }, &ctx);
}

/// Float results are the same bits on every call and stream.
#[test]
fn float_sums_are_deterministic() {
    let handle = match gpu("axis_deterministic") {
        Some(g) => g,
        None => return,
    };
    let mut rng = Rng::fresh("axis_deterministic");
    let (m, n) = (3, (1 << 20) + 7);
    let host: Vec<f32> = (0..m * n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
    let dev = upload(&host);
    let other = handle.new_stream().unwrap();
    let mut first: Option<Vec<u32>> = None;
    for round in 0..4 {
        let s = if round % 2 == 0 { handle.default_stream() } else { &other };
        let mut out = poisoned::<f32>(m);
        s.sum_along(Axis::Rows, AxisShape::new(m, n), &dev, &mut out, AxisStrategy::Auto).unwrap();
        let bits: Vec<u32> = download(s, &out).iter().map(|v| v.to_bits()).collect();
        match &first {
            None => first = Some(bits),
            Some(f) => assert_eq!(&bits, f, "seed {} round {}", rng.seed, round),
        }
    }
}
