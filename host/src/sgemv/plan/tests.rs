//! The plans cover every output, for every kernel and many shapes and devices.
use super::*;
use crate::sgemv::layout::SgemvBatch;
use kernels::config::{
    sgemv_staged_rows, SGEMV_BLOCK, SGEMV_ROW_UNROLL, SGEMV_SPLIT_BLOCK, SGEMV_STAGED_BLOCK, SGEMV_STAGED_FLOATS,
    SGEMV_T_BLOCK, SGEMV_T_STREAM_BLOCK, SGEMV_WIDE_BLOCK,
};
use kernels::sgemv::Op;

fn shape(op: Op, m: usize, n: usize, lda: usize, a_addr: u64) -> SgemvShape {
    SgemvShape { op, m, n, lda, a_addr, x_addr: 0x2000 }
}

fn plan(kernel: SgemvKernel, shape: &SgemvShape, sm_count: u32, threads_per_sm: u32) -> SgemvPlan {
    SgemvPlan::new(kernel, shape, Occupancy { sm_count, threads_per_sm }).unwrap()
}

/// Every (device, m, n) the coverage tests walk: one SM up to an H100's 132.
fn each_case(mut f: impl FnMut(u32, u32, usize, usize)) {
    let sizes = [0usize, 1, 3, 4, 5, 64, 100, 1000, 4096, 11008, 1 << 20];
    for &(sms, threads) in [(1u32, 1024u32), (132, 2048), (8, 1536)].iter() {
        for &m in sizes.iter() {
            for &n in sizes.iter() {
                f(sms, threads, m, n);
            }
        }
    }
}

#[test]
fn every_kernel_plans_with_the_extra_arguments_of_its_launch_kind() {
    for kernel in SgemvKernel::explicit() {
        let launch = kernel.entry().unwrap().launch;
        let s = shape(launch.op(), 100, 64, 64, 0x1000);
        let p = plan(kernel, &s, 132, 2048);
        let want = match launch {
            SgemvLaunch::SplitK => 1,
            SgemvLaunch::WideRows => 1,
            SgemvLaunch::Transposed | SgemvLaunch::Stripes => 2,
            SgemvLaunch::BatchedRows | SgemvLaunch::BatchedColumns => 6,
            _ => 0,
        };
        assert_eq!(p.extra.values().len(), want, "{:?}: {:?}", kernel, p);
        assert_eq!((p.block, p.name()), (launch.block(), kernel.entry_point()));
        assert_eq!(p.tiles > 0, launch.takes_partials(), "{:?}: {:?}", kernel, p);
    }
    assert!(SgemvPlan::new(
        SgemvKernel::Auto,
        &shape(Op::N, 1, 1, 1, 0),
        Occupancy { sm_count: 1, threads_per_sm: 256 }
    )
    .is_err());
}

#[test]
fn row_tiles_cover_every_row() {
    for &(sms, threads) in [(1u32, SGEMV_BLOCK), (132, 2048)].iter() {
        let resident = crate::launch::resident_blocks(SGEMV_BLOCK, sms, threads);
        for &m in [1usize, 3, 7, 8, 9, 255, 16384, 16387, 1 << 20].iter() {
            let tiled = |k: &SgemvKernel| matches!(k.entry().unwrap().launch, SgemvLaunch::RowTiles(_));
            for k in SgemvKernel::explicit().filter(tiled) {
                let p = plan(k, &shape(Op::N, m, 8, 8, 0x1000), sms, threads);
                let grid = p.grid;
                assert!(p.block >= WARP_SIZE && p.block % WARP_SIZE == 0);
                // Warps stride over tiles, so a capped grid still covers every row.
                let rows_per_block = (p.block / WARP_SIZE) as usize * k.rows_per_warp_tile();
                assert!(grid >= 1 && grid <= resident, "{:?} m = {}: grid {}", k, m, grid);
                assert!(grid == resident || grid as usize * rows_per_block >= m, "{:?} m = {} not covered", k, m);
                assert!((grid as usize - 1) * rows_per_block < m, "{:?} m = {}: a block with no rows", k, m);
            }
            // A block per row, at most the resident blocks (blocks stride over rows).
            let p = plan(SgemvKernel::BlockPerRow, &shape(Op::N, m, 8, 8, 0x1000), sms, threads);
            assert_eq!(p.grid as usize, m.min(resident as usize));
        }
    }
    assert_eq!(SgemvKernel::Vec4Rows(16).rows_per_warp_tile(), 8 * SGEMV_ROW_UNROLL as usize);
    assert_eq!(SgemvKernel::N128.rows_per_warp_tile(), SGEMV_ROW_UNROLL as usize);
}

#[test]
fn split_k_chunks_cover_every_row() {
    each_case(|sms, threads, m, n| {
        if m == 0 {
            return; // y is empty: nothing is launched
        }
        for &k in [SgemvKernel::SplitKVec4, SgemvKernel::SplitKScalar, SgemvKernel::SplitKShifted].iter() {
            let p = plan(k, &shape(Op::N, m, n, n, 0x1000), sms, threads);
            let chunk = match p.extra {
                SgemvExtra::SplitK { chunk } => chunk,
                other => panic!("{:?}", other),
            };
            assert_eq!((p.block, p.tiles, p.grid as usize), (SGEMV_SPLIT_BLOCK, m, m * p.splits));
            assert!(chunk % 4 == 0 && chunk * p.splits >= n && (p.splits - 1) * chunk < n.max(1), "{:?}", p);
            assert!(p.splits == 1 || chunk >= 4 * (VECTOR_UNROLL * SGEMV_SPLIT_BLOCK) as usize, "{:?}", p);
        }
    });
    // Few wide rows are split over the whole device.
    let resident = crate::launch::resident_blocks(SGEMV_SPLIT_BLOCK, 132, 2048) as usize;
    let p = plan(SgemvKernel::SplitKVec4, &shape(Op::N, 64, 1 << 20, 1 << 20, 0x1000), 132, 2048);
    assert!(p.splits > 1 && p.grid as usize >= resident, "{:?}", p);
}

#[test]
fn wide_rows_tiles_and_groups_cover_the_matrix() {
    each_case(|sms, threads, m, n| {
        if m == 0 {
            return;
        }
        // Column tiles cover n (splits), row groups cover m (tiles).
        let p = plan(SgemvKernel::WideVec4, &shape(Op::N, m, n, n, 0x1000), sms, threads);
        let (rows, tile) = (p.extra.values()[0], 8 * SGEMV_WIDE_BLOCK as usize);
        let tiles = (n.max(1) + tile - 1) / tile;
        let stride = if tiles > 1 { (tiles + 3) / 4 * 4 } else { 1 };
        assert_eq!((p.block, p.splits, p.grid as usize % tiles), (SGEMV_WIDE_BLOCK, stride, 0), "{:?}", p);
        assert!((4..=SGEMV_WIDE_ROWS).contains(&rows) && rows % 4 == 0, "{:?}", p);
        assert_eq!(p.tiles, (m + rows - 1) / rows, "{:?}", p);
        assert_eq!(p.grid as usize, p.tiles * tiles, "{:?}", p);
    });
    // 64 rows of 2^20 take 512 tiles of 2048 columns, in row groups of 16 (three waves of
    // 256-thread blocks at 6 per SM); at 8 per SM, groups of 12; 3 rows, one group of 4.
    let wide = |m, threads| plan(SgemvKernel::WideVec4, &shape(Op::N, m, 1 << 20, 1 << 20, 0x1000), 132, threads);
    let groups = |p: SgemvPlan| (p.splits, p.tiles, p.extra, p.grid);
    assert_eq!(groups(wide(64, 1536)), (512, 4, SgemvExtra::WideRows { rows: 16 }, 2048));
    assert_eq!(groups(wide(64, 2048)), (512, 6, SgemvExtra::WideRows { rows: 12 }, 3072));
    assert_eq!(groups(wide(3, 2048)), (512, 1, SgemvExtra::WideRows { rows: 4 }, 512));
}

#[test]
fn transposed_tiles_and_splits_cover_the_matrix() {
    each_case(|sms, threads, m, n| {
        if n == 0 {
            return;
        }
        for &k in [SgemvKernel::TVec4, SgemvKernel::TScalar].iter() {
            let p = plan(k, &shape(Op::T, m, n, n, 0x1000), sms, threads);
            let (lanes, rows) = match p.extra {
                SgemvExtra::Transposed { lanes, rows_per_split } => (lanes, rows_per_split),
                other => panic!("{:?}", other),
            };
            assert!(lanes.is_power_of_two() && lanes <= SGEMV_T_BLOCK as usize / 4, "{:?}", p);
            assert!(
                lanes <= SGEMV_T_MAX_LANES as usize
                    || m * SGEMV_T_MAX_LANES as usize <= SGEMV_T_ROWS_PER_THREAD * SGEMV_T_BLOCK as usize,
                "{:?}",
                p
            );
            assert_eq!((p.block, p.grid as usize), (SGEMV_T_BLOCK, p.tiles * p.splits));
            assert!(p.tiles * 4 * lanes >= n && (p.tiles - 1) * 4 * lanes < n, "{:?}", p);
            assert!(rows >= 1 && rows * p.splits >= m && (p.splits - 1) * rows < m.max(1), "{:?}", p);
        }
    });
    // Tall, narrow: rows split over the device.
    let p = plan(SgemvKernel::TVec4, &shape(Op::T, 1 << 20, 16, 16, 0x1000), 132, 2048);
    assert!(p.tiles == 1 && p.splits > 100, "{:?}", p);
}

#[test]
fn stripes_cover_the_matrix_a_batch_per_warp() {
    each_case(|sms, threads, m, n| {
        if n == 0 {
            return;
        }
        // 32-column tiles cover n, splits cover m, each warp at least one full batch of rows
        // per split when m has them.
        for depth in crate::sgemv::dispatch::stripe_depths() {
            let s = shape(Op::T, m, n, n + 1, 0x1004);
            let p = plan(SgemvKernel::TStripes(depth), &s, sms, threads);
            let rows = p.extra.values()[0];
            assert_eq!((p.block, p.tiles, p.grid as usize), (SGEMV_T_BLOCK, s.stripes_tiles(), p.tiles * p.splits));
            assert!(rows >= 1 && rows * p.splits >= m && (p.splits - 1) * rows < m.max(1), "{:?}", p);
            let batch = depth as usize * (SGEMV_T_BLOCK / 32) as usize;
            assert!(p.splits == 1 || rows >= batch, "{:?}", p);
        }
    });
    let p = plan(SgemvKernel::TStripes(16), &shape(Op::T, 1 << 20, 16, 17, 0x1004), 132, 1024);
    assert!(p.tiles == 1 && p.splits == 264, "{:?}", p);
    // 4096²: 128 tiles, one block per SM holds them all: no split.
    let p = plan(SgemvKernel::TStripes(32), &shape(Op::T, 4096, 4096, 4097, 0x1004), 132, 512);
    assert!(p.tiles == 128 && p.splits == 1 && p.grid == 128, "{:?}", p);
    // Rows equally misaligned: the tiles shift onto aligned lines.
    let p = plan(SgemvKernel::TStripes(32), &shape(Op::T, 64, 4096, 4096, 0x1008), 132, 512);
    assert_eq!((p.tiles, p.splits, p.extra), (129, 1, SgemvExtra::Stripes { rows_per_split: 64, shift: 2 }));
}

#[test]
fn streams_take_a_block_per_column_tile() {
    each_case(|sms, threads, m, n| {
        if n == 0 {
            return;
        }
        for &k in [SgemvKernel::TStreamVec4, SgemvKernel::TStreamScalar].iter() {
            let p = plan(k, &shape(Op::T, m, n, n, 0x1000), sms, threads);
            let tile = 4 * (SGEMV_T_STREAM_VECS * SGEMV_T_STREAM_BLOCK) as usize;
            let (tiles, resident) = ((n + tile - 1) / tile, (sms * (threads / SGEMV_T_STREAM_BLOCK)) as usize);
            let got = (p.block, p.splits, p.tiles, p.grid as usize, p.extra);
            assert_eq!(got, (SGEMV_T_STREAM_BLOCK, 1, 0, tiles.min(resident), SgemvExtra::None));
        }
    });
}

#[test]
fn staged_rows_fill_the_stage_and_share_tiles_evenly() {
    // The most rows whose span (after up to 3 aligning floats) fits the stage, and as many
    // blocks as give each the same count of tiles, at most the resident ones.
    for &(n, lda) in
        [(16usize, 17usize), (16, 16), (3, 3), (1, 1), (32, 39), (0, 0), (32, 5000), (97, 97), (128, 135)].iter()
    {
        let rows = sgemv_staged_rows(n, lda);
        assert!(rows >= 1 && (rows - 1) * lda + n + 3 <= SGEMV_STAGED_FLOATS, "n {} lda {}", n, lda);
        assert!(lda == 0 || rows * lda + n + 3 > SGEMV_STAGED_FLOATS, "n {} lda {}: room for another row", n, lda);
        for &m in [1usize, 31, 32, 33, 240, 241, 4369 * 240 + 1, 1 << 20].iter() {
            for &(sms, threads) in [(1u32, 1024u32), (132, 1024), (132, 2048)].iter() {
                let p = plan(SgemvKernel::StagedRows, &shape(Op::N, m, n, lda, 0x1004), sms, threads);
                let (tiles, resident) = ((m + rows - 1) / rows, (sms * (threads / SGEMV_STAGED_BLOCK)) as usize);
                let per_block = (tiles + p.grid as usize - 1) / p.grid as usize;
                assert!(p.block == SGEMV_STAGED_BLOCK && p.grid as usize <= resident.min(tiles), "{:?}", p);
                assert_eq!(per_block, (tiles + resident - 1) / resident, "m {} n {}: {:?}", m, n, p);
                assert!((p.grid as usize - 1) * per_block < tiles, "m {} n {}: a block without tiles", m, n);
            }
        }
    }
    assert_eq!(sgemv_staged_rows(16, 17), 240);
}

#[test]
fn batched_grids_cover_every_problem_up_to_the_resident_blocks() {
    let batch =
        |count| SgemvLayout { incx: 2, incy: 3, batch: SgemvBatch { count, stride_a: 9, stride_x: 8, stride_y: 7 } };
    let occupancy = Occupancy { sm_count: 132, threads_per_sm: 2048 };
    for &(op, m, n, count, grid) in [
        // Op::N: 8 warps × 4 rows per block; Op::T: a block per 32-column tile.
        (Op::N, 512, 64, 64, 64 * 512 / 32),
        (Op::N, 31, 64, 1, 1),
        (Op::N, 33, 64, 1, 2),
        (Op::T, 512, 64, 64, 64 * 2),
        (Op::T, 512, 128, 1000, 4000),
        (Op::T, 512, 33, 2, 4),
        (Op::T, 4096, 128, 1, 4),
    ]
    .iter()
    {
        let kernel = if op == Op::N { SgemvKernel::BatchedN } else { SgemvKernel::BatchedT };
        let layout = batch(count);
        let p = SgemvPlan::in_layout(kernel, &shape(op, m, n, n, 0x1000), &layout, occupancy).unwrap();
        let resident = crate::launch::resident_blocks(p.block, 132, 2048) as usize;
        assert_eq!(p.grid as usize, grid.min(resident), "{:?} {} x {} × {}", op, m, n, count);
        assert_eq!(p.extra.values(), vec![2, 3, 9, 8, 7, count]);
        assert_eq!((p.splits, p.tiles), (1, 0));
    }
}
