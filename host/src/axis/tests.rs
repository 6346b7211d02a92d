//! The axis reductions' pure logic: checks, `Auto`'s table, the launches it plans.
use super::plan::{
    auto_strategy, column_word_tracks, FoldPlan, AXIS_MAX_CHUNKS, AXIS_MAX_ROW_PIECES, AXIS_TILE_FOLD_PARTIALS,
    AXIS_TILE_MIN_CHUNKS, AXIS_WORD_COLUMN_MAX_BLOCKS_PER_SM,
};
use super::*;
use crate::gpu::check_overlap;
use kernels::config::{
    AXIS_BLOCK, AXIS_MIN_CHUNK_BYTES, AXIS_SEGMENT_BLOCK, AXIS_TILE_MIN_BYTES, AXIS_WORD_TRACK_MIN_ROWS, WARP_SIZE,
};
use kernels::short_rows::SHORT_ROW_VECTORS;

const H100_SMS: u32 = 132;

fn rows(lanes: u32, chunks: u32) -> AxisStrategy {
    AxisStrategy::Rows { lanes, chunks }
}

#[test]
fn shapes_are_checked_before_anything_runs() {
    assert_eq!(AxisShape::new(3, 5).with_lda(4).check(100), Err(Error::LeadingDimension { lda: 4, n: 5 }));
    let short = AxisShape::new(3, 5).with_lda(7).check(18);
    assert_eq!(short, Err(Error::LengthMismatch { what: "input", expected: 19, actual: 18 }));
    assert_eq!(AxisShape::new(3, 5).with_lda(7).check(19), Ok(()));
    assert!(matches!(AxisShape::new(usize::MAX / 2, 4).with_lda(4).check(usize::MAX), Err(Error::TooLarge { .. })));
    // Nothing to read: any input, even empty.
    assert_eq!(AxisShape::new(0, 5).check(0), Ok(()));
    assert_eq!(AxisShape::new(7, 0).with_lda(3).check(0), Ok(()));
    assert_eq!(Axis::Rows.results(AxisShape::new(7, 3)), 7);
    assert_eq!(Axis::Columns.results(AxisShape::new(7, 3)), 3);
}

#[test]
fn outputs_that_meet_an_input_are_refused() {
    assert_eq!(check_overlap("out", (100, 200), (200, 300), "input"), Ok(()));
    assert_eq!(
        check_overlap("out", (100, 201), (200, 300), "input"),
        Err(Error::Overlap { what: "out", with: "input" })
    );
    assert_eq!(
        check_overlap("out", (250, 260), (200, 300), "offsets"),
        Err(Error::Overlap { what: "out", with: "offsets" })
    );
    assert_eq!(check_overlap("out", (200, 200), (100, 300), "input"), Ok(()), "an empty output meets nothing");
}

/// A vector of columns per thread only when every row starts 16-byte aligned and n fills one.
#[test]
fn column_width_needs_aligned_rows() {
    let shape = |n, lda| AxisShape::new(3, n).with_lda(lda);
    assert_eq!(column_width(4, 256, shape(4096, 4096)), 4);
    assert_eq!(column_width(2, 0, shape(33, 40)), 8, "lda·2 = 80 bytes");
    assert_eq!(column_width(1, 16, shape(16, 16)), 16);
    assert_eq!(column_width(8, 512, shape(3, 4)), 2);
    assert_eq!(column_width(4, 260, shape(4096, 4096)), 1, "the address");
    assert_eq!(column_width(4, 256, shape(1000, 1001)), 1, "lda·4 = 4004 bytes");
    assert_eq!(column_width(2, 256, shape(7, 8)), 1, "n below a vector");
    assert_eq!(column_width(4, 256, shape(5, usize::MAX / 4 + 1)), 4, "lda·4 past usize, a multiple of 16");
}

#[test]
fn lanes_follow_the_row_s_vectors() {
    // One vector: a thread per row. Then a lane per four vectors, from two lanes to a warp.
    let table = [
        (0, 1),
        (4, 1),
        (16, 1),
        (17, 2),
        (64, 2),
        (128, 2),
        (129, 4),
        (256, 4),
        (512, 8),
        (1024, 16),
        (2048, 32),
        (1 << 20, 32),
    ];
    for &(bytes, lanes) in table.iter() {
        assert_eq!(lanes_for(bytes, AxisFold::Values), lanes, "{} bytes", bytes);
    }
    // Arg ops: a lane per sixteen vectors; Auto takes them where the rows fill 16 warps a SM.
    let arg = |m: usize, n: usize| auto_strategy(Axis::Rows, AxisShape::new(m, n), 4, AxisFold::Args, 4, H100_SMS).1;
    assert_eq!(arg(1 << 20, 64), rows(2, 1));
    assert_eq!(arg(65_536, 1024), rows(16, 1));
    assert_eq!(arg(132 * 16 * 16, 64), rows(2, 1));
    assert_eq!(arg(132 * 16 * 16 - 1, 64), rows(4, 1), "too few rows for 16 warps a SM of two lanes each");
    assert_eq!(arg(1000, 1024), rows(32, 1));
    assert_eq!(arg(16, 1 << 22), rows(32, 132), "few long rows split as for values");
    let args = [(16, 1), (17, 2), (512, 2), (513, 4), (1024, 4), (4096, 16), (8192, 32), (1 << 20, 32)];
    for &(bytes, lanes) in args.iter() {
        assert_eq!(lanes_for(bytes, AxisFold::Args), lanes, "{} bytes", bytes);
    }
}

/// `Auto` on the benchmark's shapes (f32, an H100's 132 SMs, aligned rows: float4 columns).
#[test]
fn auto_serves_the_benchmark_shapes() {
    let auto = |axis, m, n| auto_strategy(axis, AxisShape::new(m, n), 4, AxisFold::Values, 4, H100_SMS);
    // Many short rows: several rows per warp, a lane per four float4s (at least two lanes).
    assert_eq!(auto(Axis::Rows, 1 << 20, 16), (AxisShape::new(1 << 20, 16), rows(2, 1)));
    assert_eq!(auto(Axis::Rows, 1 << 20, 64), (AxisShape::new(1 << 20, 64), rows(4, 1)));
    // Enough long rows: a warp per row below AXIS_BLOCK_ROW_MIN_BYTES, a block per row (a warp
    // per piece, folded in the block) from it.
    let bf16 = |m, n| auto_strategy(Axis::Rows, AxisShape::new(m, n), 2, AxisFold::Values, 8, H100_SMS).1;
    assert_eq!(auto(Axis::Rows, 4096, 2048).1, rows(32, 1));
    assert_eq!(bf16(4096, 4096), rows(32, 1));
    assert_eq!(auto(Axis::Rows, 4096, 4096).1, rows(32, 8));
    assert_eq!(auto(Axis::Rows, 8192, 28_672).1, rows(32, 8));
    assert_eq!(bf16(8192, 28_672), rows(32, 8));
    // Arg ops on 2-byte elements keep a warp per row; on f32 they take a block as the values do.
    let arg = |elem, m, n| {
        auto_strategy(Axis::Rows, AxisShape::new(m, n), elem, AxisFold::Args, 16 / elem as u32, H100_SMS).1
    };
    assert_eq!(arg(2, 8192, 28_672), rows(32, 1));
    assert_eq!(arg(2, 4096, 8192), rows(32, 1));
    assert_eq!(arg(4, 4096, 4096), rows(32, 8));
    assert_eq!(arg(4, 8192, 28_672), rows(32, 8));
    assert_eq!(arg(1, 4096, 16_384), rows(32, 8), "bytes: not measured, a block");
    assert_eq!(arg(2, 32, 128_256), bf16(32, 128_256), "split rows alike");
    assert_eq!(fold_plan(AxisShape::new(4096, 4096), rows(32, 8)), None);
    // Few long rows: split, chunks of at least AXIS_MIN_CHUNK_BYTES.
    assert_eq!(auto(Axis::Rows, 32, 128_256).1, rows(32, (128_256 * 4 / AXIS_MIN_CHUNK_BYTES) as u32));
    assert_eq!(auto(Axis::Rows, 16, 1 << 22).1, rows(32, 132));
    assert_eq!(auto(Axis::Rows, 1, 1 << 26).1, rows(32, 132 * 16));
    // A contiguous column is one row.
    assert_eq!(auto(Axis::Columns, 1 << 26, 1), auto(Axis::Rows, 1, 1 << 26));
    // Columns: tiles of a thread per float4 of n (to the block), rows split to fill the device.
    assert_eq!(auto(Axis::Columns, 4096, 4096).1, AxisStrategy::Columns { tile: 256, splits: 64 });
    let bf16_square = auto_strategy(Axis::Columns, AxisShape::new(4096, 4096), 2, AxisFold::Values, 8, H100_SMS).1;
    assert_eq!(bf16_square, AxisStrategy::Columns { tile: 256, splits: 64 });
    assert_eq!(auto(Axis::Columns, 1 << 20, 64).1, AxisStrategy::Columns { tile: 16, splits: 264 });
    assert_eq!(auto(Axis::Columns, 1 << 20, 16).1, AxisStrategy::Columns { tile: 4, splits: 256 });
    // Splits rounded down to at most two blocks per SM: 28 column tiles of f32 take 9 (252
    // blocks), the 14 of bf16 take 18, not the 10 and 19 that leave a few SMs a third block.
    assert_eq!(auto(Axis::Columns, 8192, 28_672).1, AxisStrategy::Columns { tile: 256, splits: 9 });
    let bf16_columns = auto_strategy(Axis::Columns, AxisShape::new(8192, 28_672), 2, AxisFold::Values, 8, H100_SMS).1;
    assert_eq!(bf16_columns, AxisStrategy::Columns { tile: 256, splits: 18 });
    // Few rows: no split below AXIS_VECTOR_MIN_ROWS_PER_THREAD rows per thread.
    assert_eq!(auto(Axis::Columns, 32, 128_256).1, AxisStrategy::Columns { tile: 256, splits: 1 });
    // A column per thread (rows not 16-byte aligned): tiles as wide as n.
    let scalar = |m, n| auto_strategy(Axis::Columns, AxisShape::new(m, n), 4, AxisFold::Values, 1, H100_SMS).1;
    assert_eq!(scalar(4096, 4096), AxisStrategy::Columns { tile: 256, splits: 66 });
    assert_eq!(scalar(1 << 20, 64), AxisStrategy::Columns { tile: 64, splits: 1056 });
    // The columns of one row are rows of one element.
    assert_eq!(auto(Axis::Columns, 1, 1 << 26), auto(Axis::Rows, 1 << 26, 1));
    assert_eq!(auto(Axis::Columns, 1, 1 << 26), (AxisShape::new(1 << 26, 1), rows(1, 1)));
}

#[test]
fn auto_folds_columns_of_floats_in_their_launch_in_narrower_tiles() {
    let folded = |name: &str, elem: usize, fold: AxisFold, m: usize, n: usize| {
        let width = (16 / elem) as u32;
        let shape = AxisShape::new(m, n);
        let cols = auto_strategy(Axis::Columns, shape, elem, fold, width, H100_SMS).1;
        folded_columns(name, elem, fold, shape, width, H100_SMS, cols)
    };
    let tiles = |tile, splits| AxisStrategy::FoldedColumns { tile, splits };
    // Narrowed until a last block's threads fold at most AXIS_TILE_FOLD_PARTIALS partials:
    // 4096² f32 from 1,024 columns × 64 splits to 256 × 16, the grid as large (256 blocks);
    // halves to 256 columns × 8 splits (64 rows a thread), 8192² f32 to 256 × 8.
    assert_eq!(folded("f32", 4, AxisFold::Values, 4096, 4096), tiles(64, 16));
    assert_eq!(folded("bf16", 2, AxisFold::Values, 4096, 4096), tiles(32, 8));
    assert_eq!(folded("f16", 2, AxisFold::Values, 4096, 4096), tiles(32, 8));
    assert_eq!(folded("f32", 4, AxisFold::Values, 8192, 8192), tiles(64, 8));
    assert_eq!(folded("f32", 4, AxisFold::Values, 1 << 20, 16), tiles(4, 256));
    assert_eq!(folded("f32", 4, AxisFold::Values, 1 << 20, 64), tiles(8, 132));
    // No narrower than AXIS_TILE_MIN_BYTES of a row: eight threads of eight bf16.
    assert_eq!(folded("bf16", 2, AxisFold::Values, 1 << 20, 64), tiles(8, 264));
    assert_eq!(folded("bf16", 2, AxisFold::Values, 1 << 20, 16), tiles(2, 128));
    // No fold launch to save (one chunk a column), or another type: `Columns` as it was.
    let same = |name: &str, elem: usize, fold: AxisFold, m: usize, n: usize| {
        let width = (16 / elem) as u32;
        let cols = auto_strategy(Axis::Columns, AxisShape::new(m, n), elem, fold, width, H100_SMS).1;
        assert!(matches!(cols, AxisStrategy::Columns { .. }));
        assert_eq!(folded(name, elem, fold, m, n), cols, "{} {}x{} {:?}", name, m, n, fold);
    };
    same("f32", 4, AxisFold::Values, 32, 128_256);
    // Fewer than AXIS_TILE_MIN_CHUNKS partials a column: the fold launch stays (9 a column).
    same("f32", 4, AxisFold::Values, 8192, 28_672);
    same("f32", 4, AxisFold::Args, 8192, 28_672);
    same("i32", 4, AxisFold::Args, 4096, 4096);
    assert_eq!(folded("bf16", 2, AxisFold::Values, 8192, 28_672), tiles(64, 4));
    same("f32", 4, AxisFold::Values, 16, 1 << 22);
    same("i32", 4, AxisFold::Values, 4096, 4096);
    same("f64", 8, AxisFold::Values, 4096, 4096);
    // Arg ops too, in `arg_tile`'s tiles (below).
    assert_eq!(folded("f32", 4, AxisFold::Args, 4096, 4096), tiles(8, 2));
    let words = folded("bf16", 2, AxisFold::Args, 1 << 20, 64);
    assert_eq!(words, tiles(4, 66));
    assert!(column_word_tracks("bf16", AxisShape::new(1 << 20, 64), words, 8), "{:?}", words);
    assert_eq!(folded_columns("f32", 4, AxisFold::Values, AxisShape::new(9, 9), 1, 1, rows(1, 1)), rows(1, 1));
    // Every choice is a valid named strategy, its last blocks within the bound where a tile may
    // still narrow.
    for &(m, n) in [(2, 2), (33, 1000), (300, 16), (5000, 33), (1 << 16, 3), (8192, 28_672)].iter() {
        for &(elem, width) in [(4, 1), (4, 4), (2, 1), (2, 8)].iter() {
            let shape = AxisShape::new(m, n);
            let cols = auto_strategy(Axis::Columns, shape, elem, AxisFold::Values, width, H100_SMS).1;
            let name = if elem == 4 { "f32" } else { "bf16" };
            let strategy = folded_columns(name, elem, AxisFold::Values, shape, width, H100_SMS, cols);
            assert_eq!(
                resolve(Axis::Columns, shape, elem, AxisFold::Values, width, 1, strategy),
                Ok((shape, strategy))
            );
            let chunks = fold_plan(shape, cols).map_or(0, |f| f.chunks);
            assert_eq!(matches!(strategy, AxisStrategy::FoldedColumns { .. }), chunks >= AXIS_TILE_MIN_CHUNKS);
            if let AxisStrategy::FoldedColumns { tile, splits } = strategy {
                let partials = (tile * width) as usize * splits as usize;
                let narrowest = (tile / 2) as usize * width as usize * elem < AXIS_TILE_MIN_BYTES || tile == 1;
                assert!(partials <= AXIS_TILE_FOLD_PARTIALS * AXIS_BLOCK as usize || narrowest, "{:?}", strategy);
                assert_eq!(fold_plan(shape, strategy), None, "no fold launch");
            }
        }
    }
}

#[test]
fn auto_gives_short_aligned_rows_of_floats_a_thread_each() {
    let short = |name: &str, elem: usize, fold: AxisFold, m: usize, n: usize, width: u32| {
        let shape = AxisShape::new(m, n);
        let rows = auto_strategy(Axis::Rows, shape, elem, fold, width, H100_SMS).1;
        short_rows(name, elem, fold, shape, width, rows)
    };
    for &fold in [AxisFold::Values, AxisFold::Args].iter() {
        // 2^20 × 16: f32 rows of four vectors, halves of two; two lanes each under `Rows`.
        assert_eq!(short("f32", 4, fold, 1 << 20, 16, 4), AxisStrategy::ShortRows);
        assert_eq!(short("bf16", 2, fold, 1 << 20, 16, 8), AxisStrategy::ShortRows);
        assert_eq!(short("f16", 2, fold, 1 << 20, 32, 8), AxisStrategy::ShortRows);
        // Rows of 20 bytes (aligned: lda 8), one vector and an element.
        assert_eq!(short("f32", 4, fold, 300, 5, 4), AxisStrategy::ShortRows);
        // Rows past SHORT_ARG_ROW_VECTORS vectors, rows of one vector (a thread each already),
        // rows not 16-byte aligned (width 1) and types without `short` entries keep `Rows`.
        let kept = [
            ("f32", 4, 1 << 20, 25, 4),
            ("bf16", 2, 1 << 20, 56, 8),
            ("bf16", 2, 1 << 20, 64, 8),
            ("f32", 4, 1 << 20, 4, 4),
            ("f32", 4, 1 << 20, 16, 1),
            ("i32", 4, 1 << 20, 16, 4),
            ("f64", 8, 1 << 20, 8, 2),
        ];
        for &(name, elem, m, n, width) in kept.iter() {
            let rows = auto_strategy(Axis::Rows, AxisShape::new(m, n), elem, fold, width, H100_SMS).1;
            assert_eq!(short(name, elem, fold, m, n, width), rows, "{} {}x{} width {}", name, m, n, width);
            assert!(matches!(rows, AxisStrategy::Rows { .. }));
        }
    }
    assert_eq!(SHORT_ROW_VECTORS * kernels::config::VECTOR_BYTES, 64, "a thread holds 64 bytes");
    // Rows of five and six vectors: arg ops a thread each, typed ops `Rows`; 17 f32 are 68 bytes.
    for &(name, elem, n, width) in [("f32", 4, 17, 4), ("f32", 4, 20, 4), ("f32", 4, 24, 4), ("bf16", 2, 48, 8)].iter()
    {
        assert_eq!(short(name, elem, AxisFold::Args, 1 << 20, n, width), AxisStrategy::ShortRows, "{} x{}", name, n);
        assert!(matches!(short(name, elem, AxisFold::Values, 1 << 20, n, width), AxisStrategy::Rows { .. }));
    }
    // Columns keep their strategy.
    let cols = AxisStrategy::Columns { tile: 4, splits: 1 };
    assert_eq!(short_rows("f32", 4, AxisFold::Args, AxisShape::new(100, 16), 4, cols), cols);
    // A thread per row, in AXIS_BLOCK-thread blocks, capped: the kernel strides.
    let s = AxisShape::new(1 << 20, 16);
    assert_eq!(first_grid(s, AxisStrategy::ShortRows, 4, false, 1 << 20), Ok(div(1 << 20, AXIS_BLOCK)));
    assert_eq!(first_grid(s, AxisStrategy::ShortRows, 4, false, 100), Ok(100));
    assert_eq!(first_grid(AxisShape::new(0, 16), AxisStrategy::ShortRows, 4, false, 100), Ok(1));
    assert_eq!(fold_plan(s, AxisStrategy::ShortRows), None);
    // Rows aligned: the address and lda·elem multiples of 16 bytes.
    assert!(rows_aligned(4, 256, AxisShape::new(3, 5).with_lda(8)));
    assert!(!rows_aligned(4, 256, AxisShape::new(3, 5).with_lda(6)));
    assert!(!rows_aligned(2, 258, AxisShape::new(3, 8)));
    // Named: rows only.
    assert_eq!(
        resolve(Axis::Rows, s, 4, AxisFold::Args, 4, 1, AxisStrategy::ShortRows),
        Ok((s, AxisStrategy::ShortRows))
    );
    let refused = resolve(Axis::Columns, s, 4, AxisFold::Args, 4, 1, AxisStrategy::ShortRows);
    assert!(matches!(refused, Err(Error::Unsupported { .. })), "{:?}", refused);
}

#[test]
fn every_auto_choice_is_a_valid_named_strategy() {
    for &(m, n) in [(0, 0), (1, 1), (31, 33), (33, 1), (1000, 3), (5, 100_000), (2, 1 << 24), (1 << 20, 16)].iter() {
        for &axis in [Axis::Rows, Axis::Columns].iter() {
            for &(elem, width) in [(1, 1), (1, 16), (2, 8), (4, 1), (4, 4), (8, 2)].iter() {
                for &fold in [AxisFold::Values, AxisFold::Args].iter() {
                    let shape = AxisShape::new(m, n);
                    let (s, strategy) = auto_strategy(axis, shape, elem, fold, width, H100_SMS);
                    assert_eq!(resolve(axis, shape, elem, fold, width, H100_SMS, strategy), Ok((s, strategy)));
                    if let Some(f) = fold_plan(s, strategy) {
                        assert!(f.chunks <= AXIS_MAX_CHUNKS, "{:?}", f);
                        let rows = matches!(strategy, AxisStrategy::Rows { .. });
                        assert_eq!(f.by_last_piece, rows && f.chunks <= AXIS_MAX_ROW_PIECES, "{:?}", f);
                    }
                }
            }
        }
    }
}

#[test]
fn named_strategies_out_of_range_or_of_the_other_axis_are_refused() {
    let shape = AxisShape::new(10, 10);
    for &bad in [rows(3, 1), rows(64, 1), rows(4, 0)].iter() {
        assert!(
            matches!(resolve(Axis::Rows, shape, 4, AxisFold::Values, 1, 1, bad), Err(Error::Unsupported { .. })),
            "{:?}",
            bad
        );
    }
    for &bad in [AxisStrategy::Columns { tile: 3, splits: 1 }, AxisStrategy::Columns { tile: 512, splits: 1 }].iter() {
        assert!(
            matches!(resolve(Axis::Columns, shape, 4, AxisFold::Values, 1, 1, bad), Err(Error::Unsupported { .. })),
            "{:?}",
            bad
        );
    }
    let cols = AxisStrategy::Columns { tile: 32, splits: 2 };
    assert!(matches!(resolve(Axis::Rows, shape, 4, AxisFold::Values, 1, 1, cols), Err(Error::Unsupported { .. })));
    let folded = AxisStrategy::FoldedColumns { tile: 32, splits: 2 };
    assert!(matches!(resolve(Axis::Rows, shape, 4, AxisFold::Values, 1, 1, folded), Err(Error::Unsupported { .. })));
    assert_eq!(resolve(Axis::Columns, shape, 4, AxisFold::Args, 1, 1, folded), Ok((shape, folded)));
    for &bad in
        [AxisStrategy::FoldedColumns { tile: 3, splits: 1 }, AxisStrategy::FoldedColumns { tile: 8, splits: 0 }].iter()
    {
        assert!(
            matches!(resolve(Axis::Columns, shape, 4, AxisFold::Values, 1, 1, bad), Err(Error::Unsupported { .. })),
            "{:?}",
            bad
        );
    }
    assert_eq!(resolve(Axis::Columns, shape, 4, AxisFold::Values, 1, 1, folded), Ok((shape, folded)));
    assert!(matches!(
        resolve(Axis::Columns, shape, 4, AxisFold::Values, 1, 1, rows(32, 1)),
        Err(Error::Unsupported { .. })
    ));
    let column = AxisShape::new(10, 1).with_lda(1);
    assert_eq!(
        resolve(Axis::Columns, column, 4, AxisFold::Values, 1, 1, rows(32, 2)),
        Ok((AxisShape::new(1, 10), rows(32, 2)))
    );
    assert_eq!(resolve(Axis::Columns, shape, 4, AxisFold::Values, 1, 1, cols), Ok((shape, cols)));
}

#[test]
fn splits_plan_a_fold_over_each_result_s_partials_in_order() {
    let shape = AxisShape::new(3, 1000);
    assert_eq!(fold_plan(shape, rows(32, 1)), None);
    // A row per block (a warp per piece) is folded in its block.
    assert_eq!(fold_plan(shape, rows(32, AXIS_BLOCK / 32)), None);
    assert!(fold_plan(shape, rows(16, AXIS_BLOCK / 16)).is_some());
    // Split rows: each row's last piece folds them, up to AXIS_MAX_ROW_PIECES; the fold launch
    // beyond.
    let f = FoldPlan { items: 3, chunks: 5, item_stride: 5, chunk_stride: 1, by_last_piece: true };
    assert_eq!(fold_plan(shape, rows(32, 5)), Some(f));
    let most = AXIS_MAX_ROW_PIECES;
    assert!(fold_plan(shape, rows(32, most as u32)).unwrap().by_last_piece);
    assert!(!fold_plan(shape, rows(32, most as u32 + 1)).unwrap().by_last_piece);
    // Few rows split to fill the device take more pieces (2 rows on 132 SMs: 1056).
    let (s, few) = auto_strategy(Axis::Rows, AxisShape::new(2, 1 << 24), 4, AxisFold::Values, 1, H100_SMS);
    assert_eq!(few, rows(32, 132 * 16 / 2));
    assert!(!fold_plan(s, few).unwrap().by_last_piece);
    // 32 × 128,256 f32 (62 pieces a row) and 16 × 2^22 f32 (132) by the last piece; 8 × 2^22
    // (264) by the launch.
    for &(m, n, by_last_piece) in [(32, 128_256, true), (16, 1 << 22, true), (8, 1 << 22, false)].iter() {
        let (s, split) = auto_strategy(Axis::Rows, AxisShape::new(m, n), 4, AxisFold::Values, 1, H100_SMS);
        assert_eq!(fold_plan(s, split).unwrap().by_last_piece, by_last_piece, "{}x{}", m, n);
    }
    // Columns: every (split, phase) pair is a chunk, even with one split.
    let phases = (AXIS_BLOCK / 64) as usize;
    let f =
        FoldPlan { items: 1000, chunks: 2 * phases, item_stride: 2 * phases, chunk_stride: 1, by_last_piece: false };
    assert_eq!(fold_plan(shape, AxisStrategy::Columns { tile: 64, splits: 2 }), Some(f));
    assert_eq!(fold_plan(shape, AxisStrategy::Columns { tile: AXIS_BLOCK, splits: 1 }), None);
}

#[test]
fn one_element_rows_go_by_vectors_where_results_are_elements_and_aligned() {
    use kernels::axis::rows_by_vectors;
    assert!(one_element_rows(AxisShape::new(100, 1)) && !one_element_rows(AxisShape::new(100, 1).with_lda(2)));
    assert!(!one_element_rows(AxisShape::new(100, 2)));
    // (element bytes, accumulator bytes): bf16 max, f32 sum, u8 min go by vectors; bf16 sums
    // (f32) and minmax pairs do not, nor do 16-byte elements or unaligned addresses.
    assert!(rows_by_vectors(2, 2, 256, 512) && rows_by_vectors(4, 4, 0, 16) && rows_by_vectors(1, 1, 16, 32));
    assert!(!rows_by_vectors(2, 4, 256, 512) && !rows_by_vectors(4, 8, 256, 512) && !rows_by_vectors(16, 16, 0, 0));
    assert!(!rows_by_vectors(2, 2, 258, 512) && !rows_by_vectors(2, 2, 256, 520));
}

#[test]
fn first_grids_cover_every_item_or_tile() {
    let per_block = AXIS_BLOCK / 4;
    assert_eq!(first_grid(AxisShape::new(1000, 16), rows(4, 1), 1, false, 1 << 20), Ok(div(1000, per_block)));
    assert_eq!(first_grid(AxisShape::new(3, 1 << 20), rows(32, 100), 1, false, 1 << 20), Ok(div(300, AXIS_BLOCK / 32)));
    // Contiguous one-element rows: ROWS_PER_THREAD rows per thread; padded ones a thread per row.
    let rows_per_block = AXIS_BLOCK as usize * kernels::axis::ROWS_PER_THREAD;
    assert_eq!(
        first_grid(AxisShape::new(1 << 26, 1), rows(1, 1), 1, false, 1 << 30),
        Ok(div(1 << 26, rows_per_block as u32))
    );
    // A 16-byte vector of rows at a time (`width` rows each): that many times fewer blocks.
    assert_eq!(
        first_grid(AxisShape::new(1 << 26, 1), rows(1, 1), 8, false, 1 << 30),
        Ok(div(1 << 26, 8 * rows_per_block as u32))
    );
    let padded = AxisShape::new(1 << 26, 1).with_lda(2);
    assert_eq!(first_grid(padded, rows(1, 1), 1, false, 1 << 30), Ok(div(1 << 26, AXIS_BLOCK)));
    assert_eq!(first_grid(padded, rows(1, 1), 8, false, 1 << 30), Ok(div(1 << 26, AXIS_BLOCK)), "padded: no vectors");
    let capped = first_grid(AxisShape::new(1 << 30, 1), rows(1, 1), 1, false, 65_535);
    assert_eq!(capped, Ok(65_535), "capped: the kernel strides");
    assert_eq!(first_grid(AxisShape::new(0, 5), rows(8, 1), 1, false, 100), Ok(1));
    // Segments: blocks of AXIS_SEGMENT_BLOCK threads, whole warps.
    assert_eq!(first_block(true), AXIS_SEGMENT_BLOCK);
    assert_eq!(first_block(false), AXIS_BLOCK);
    assert_eq!(AXIS_SEGMENT_BLOCK % WARP_SIZE, 0);
    let segments = AxisShape::new(8192, 1 << 20);
    assert_eq!(first_grid(segments, rows(32, 1), 1, true, 1 << 20), Ok(div(8192, AXIS_SEGMENT_BLOCK / 32)));
    let cols = AxisStrategy::Columns { tile: 256, splits: 3 };
    assert_eq!(first_grid(AxisShape::new(10, 1000), cols, 1, false, 100), Ok(12));
    // A thread per float4: a tile covers 1024 columns.
    assert_eq!(first_grid(AxisShape::new(10, 1000), cols, 4, false, 100), Ok(3));
    assert_eq!(first_grid(AxisShape::new(10, 1025), cols, 4, false, 100), Ok(6));
    assert!(matches!(first_grid(AxisShape::new(10, 1 << 30), cols, 1, false, 100), Err(Error::TooLarge { .. })));
}

#[test]
fn folds_take_a_thread_per_item_then_a_warp_up_to_four_partials_a_lane() {
    let fold = |items, chunks| FoldPlan { items, chunks, item_stride: chunks, chunk_stride: 1, by_last_piece: false };
    // Up to 32 partials: a thread per item (8192 × 28,672 columns: 9 and 18 splits).
    for &chunks in [1, 2, 3, 9, 18, 32].iter() {
        assert_eq!(kernels::axis::fold_lanes(chunks), 1, "{}", chunks);
    }
    assert_eq!(fold_grid(&fold(28_672, 18), 1 << 31), div(28_672, AXIS_BLOCK));
    // Up to four partials a lane: a warp per item (4096² columns: 66 splits).
    assert_eq!(kernels::axis::fold_lanes(33), 32);
    assert_eq!(fold_grid(&fold(4096, 66), 1 << 31), div(4096, AXIS_BLOCK / 32));
    assert_eq!(kernels::axis::fold_lanes(128), 32);
    // More: a block per item.
    assert_eq!(kernels::axis::fold_lanes(129), AXIS_BLOCK);
    assert_eq!(fold_grid(&fold(16, 8448), 1 << 31), 16);
    assert_eq!(fold_grid(&fold(1 << 30, 2), 65_535), 65_535, "capped: the kernel strides");
    assert_eq!(fold_grid(&fold(0, 2), 100), 1);
}

fn div(a: u32, b: u32) -> u32 {
    (a + b - 1) / b
}

#[test]
fn outputs_are_checked_for_length_then_overlap() {
    let out = |what, addr, len| Output { what, addr, len, elem: 4, per: 1 };
    let read = [("input", (0x1000, 0x2000))];
    let short = check_outputs(&[out("values", 0x3000, 3), out("indices", 0x4000, 4)], 4, &read);
    assert_eq!(short, Err(Error::LengthMismatch { what: "values", expected: 4, actual: 3 }));
    let shared = check_outputs(&[out("values", 0x3000, 4), out("indices", 0x300c, 4)], 4, &read);
    assert_eq!(shared, Err(Error::Overlap { what: "indices", with: "values" }));
    assert_eq!(check_outputs(&[out("values", 0x3000, 4), out("indices", 0x3010, 4)], 4, &read), Ok(()));
    let into_input = check_outputs(&[out("values", 0x1ff0, 4)], 4, &read);
    assert_eq!(into_input, Err(Error::Overlap { what: "values", with: "input" }));
    // Only the results' bytes count: an output longer than needed may run on into the input.
    assert_eq!(check_outputs(&[out("values", 0x0ff0, 8)], 4, &read), Ok(()));
}

#[test]
fn column_arg_of_halves_takes_word_tracks_from_16_rows_a_thread() {
    let auto = |m: usize, n: usize| {
        let shape = AxisShape::new(m, n);
        let (shape, strategy) = auto_strategy(Axis::Columns, shape, 2, AxisFold::Args, 8, H100_SMS);
        (shape, strategy)
    };
    // 8192 × 28,672: 14 tiles of 256 threads, 18 splits of 456 rows, a row a step.
    let (shape, strategy) = auto(8192, 28_672);
    assert_eq!(strategy, AxisStrategy::Columns { tile: 256, splits: 18 });
    assert!(column_word_tracks("bf16", shape, strategy, 8));
    assert!(column_word_tracks("f16", shape, strategy, 8));
    // Not for other types, nor a column per thread; walks of 64 rows (4096²) and 16 rows too.
    assert!(!column_word_tracks("f32", shape, strategy, 4));
    assert!(!column_word_tracks("i16", shape, strategy, 8));
    assert!(!column_word_tracks("bf16", shape, strategy, 1));
    let (shape, strategy) = auto(4096, 4096);
    assert!(column_word_tracks("bf16", shape, strategy, 8));
    let (shape, strategy) = auto(16, 1 << 22);
    assert!(column_word_tracks("bf16", shape, strategy, 8));
    // The bound itself: 16 rows a thread in one split of tiles of 32 threads (8 rows a step).
    let named = |m: usize| (AxisShape::new(m, 1029), AxisStrategy::Columns { tile: 32, splits: 1 });
    let (at, below) = (named(8 * AXIS_WORD_TRACK_MIN_ROWS), named(8 * AXIS_WORD_TRACK_MIN_ROWS - 1));
    assert!(column_word_tracks("bf16", at.0, at.1, 8));
    assert!(!column_word_tracks("bf16", below.0, below.1, 8));
    assert!(!column_word_tracks("bf16", at.0, rows(32, 1), 8));
}

#[test]
fn column_arg_of_f32_takes_the_fewest_splits_at_two_blocks_per_sm() {
    let arg = |m: usize, n: usize| {
        let shape = AxisShape::new(m, n);
        let cols = auto_strategy(Axis::Columns, shape, 4, AxisFold::Args, 4, H100_SMS).1;
        (cols, folded_columns("f32", 4, AxisFold::Args, shape, 4, H100_SMS, cols))
    };
    let tiles = |tile, splits| AxisStrategy::FoldedColumns { tile, splits };
    // 4096²: 128 tiles of 8 threads (128 bytes of a row) × 2 splits, 64 rows a thread, not 16
    // tiles of 64 × 16 splits; 8192²: 256 tiles of 8, no split.
    assert_eq!(arg(4096, 4096).1, tiles(8, 2));
    assert_eq!(arg(8192, 8192).1, tiles(8, 1));
    // Narrower tiles than AXIS_ARG_TILE_MIN_BYTES are not taken: 2^20 × 64 keeps 2 tiles of 8
    // threads × 132 splits; 65,536 × 512 keeps 8 tiles of 16 × 33 (16 tiles of 8 would need 17
    // splits, past two blocks per SM).
    assert_eq!(arg(1 << 20, 64).1, tiles(8, 132));
    assert_eq!(arg(65_536, 512).1, tiles(16, 33));
    // No tile fills two blocks per SM with rows enough, or none is 128 bytes wide: as before
    // (8192 × 28,672 in 28 tiles of 256 × 9 splits, whose 9 partials a column take the fold
    // launch).
    for &(m, n) in [(8192, 28_672), (32, 128_256), (16, 1 << 22), (2048, 4096)].iter() {
        let (cols, folded) = arg(m, n);
        assert_eq!(folded, folded_columns("f32", 4, AxisFold::Values, AxisShape::new(m, n), 4, H100_SMS, cols));
    }
    assert_eq!(arg(8192, 28_672).1, AxisStrategy::Columns { tile: 256, splits: 9 });
    assert_eq!(arg(1 << 20, 16).1, tiles(4, 256));
    // Every choice is a valid named strategy, of one wave where it splits.
    for &(m, n) in [(64, 100_000), (300, 4096), (1000, 1000), (5000, 33), (1 << 16, 3), (1 << 18, 800)].iter() {
        let shape = AxisShape::new(m, n);
        let strategy = arg(m, n).1;
        assert_eq!(resolve(Axis::Columns, shape, 4, AxisFold::Args, 4, 1, strategy), Ok((shape, strategy)));
        if let AxisStrategy::FoldedColumns { tile, splits } = strategy {
            let blocks = div_ceil(div_ceil(n, 4), tile as usize) * splits as usize;
            assert!(splits == 1 || blocks <= 2 * H100_SMS as usize, "{}x{}: {:?}", m, n, strategy);
        }
    }
}

#[test]
fn column_arg_of_halves_takes_the_fewest_splits_that_fill_the_device() {
    let words = |m: usize, n: usize| {
        let shape = AxisShape::new(m, n);
        let cols = auto_strategy(Axis::Columns, shape, 2, AxisFold::Args, 8, H100_SMS).1;
        folded_columns("bf16", 2, AxisFold::Args, shape, 8, H100_SMS, cols)
    };
    let (cols, tiles) = (
        |tile, splits| AxisStrategy::Columns { tile, splits },
        |tile, splits| AxisStrategy::FoldedColumns { tile, splits },
    );
    // No split where tiles alone fill the SMs, a block's rows folded in the launch: 8192 × 28,672
    // in 224 tiles of 16 threads (not 14 of 256 × 9 splits), 4096² in 128 of 4 threads (64 bytes
    // of a row, 64 rows a thread), 2048 × 4096 too (32 rows a thread).
    assert_eq!(words(8192, 28_672), tiles(16, 1));
    assert_eq!(words(4096, 4096), tiles(4, 1));
    assert_eq!(words(2048, 4096), tiles(4, 1));
    assert_eq!(words(8192, 8192), tiles(8, 1));
    // Few columns: the narrowest tile, split to about a block per SM, folded in the launch.
    assert_eq!(words(1 << 20, 64), tiles(4, 66));
    assert_eq!(words(65_536, 512), tiles(4, 8));
    // No tile fills the device in one wave (16 × 2^22: 2,048 tiles of 256 threads at least),
    // none gives its threads AXIS_ARG_TILE_MIN_ROWS rows (32 × 128,256: 126 tiles of 128, 16
    // rows), or none is 64 bytes wide (2^20 × 16: two threads a row): Columns' tile, split as
    // before.
    assert_eq!(words(16, 1 << 22), cols(256, 1));
    assert_eq!(words(32, 128_256), cols(256, 1));
    assert_eq!(words(1 << 20, 16), tiles(2, 128));
    // Every choice is a valid named strategy, of one wave where it splits.
    for &(m, n) in [(64, 100_000), (300, 4096), (1000, 1000), (5000, 33), (1 << 16, 3), (1 << 18, 800)].iter() {
        let shape = AxisShape::new(m, n);
        let strategy = words(m, n);
        assert_eq!(resolve(Axis::Columns, shape, 2, AxisFold::Args, 8, 1, strategy), Ok((shape, strategy)));
        if let AxisStrategy::Columns { tile, splits } | AxisStrategy::FoldedColumns { tile, splits } = strategy {
            let blocks = div_ceil(div_ceil(n, 8), tile as usize) * splits as usize;
            let wave = AXIS_WORD_COLUMN_MAX_BLOCKS_PER_SM * H100_SMS as usize;
            assert!(blocks <= wave || splits == 1, "{}x{} {:?}", m, n, strategy);
        }
    }
}
