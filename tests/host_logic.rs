//! Tests that run everywhere, GPU or not, of the public API: handles, errors, opening without a
//! GPU, and Auto's choices on the benchmark's shapes. The PTX checks are in `ptx.rs`; the host's
//! pure logic (dispatch, plans, validation, launch arithmetic) is unit-tested beside it.
use cudakernels::{Error, SgemvKernel, SgemvShape};

#[path = "../src/axis_shapes.rs"]
mod axis_shapes;
#[path = "../src/sgemv_shapes.rs"]
mod sgemv_shapes;

#[test]
fn handles_and_streams_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<cudakernels::Gpu>();
    send_sync::<cudakernels::GpuStream>();
}

#[test]
fn arg_ops_name_their_entry_points_for_every_type() {
    use cudakernels::{arg_entry_point, bf16, f16, ArgOp, TypedElement, ARG_OPS, ARG_TYPES};
    let names: Vec<&str> = ArgOp::ALL.iter().map(|op| op.name()).collect();
    assert_eq!(names, ARG_OPS.to_vec());
    assert_eq!(ArgOp::ALL.iter().map(|op| op.results()).collect::<Vec<_>>(), vec![1, 1, 2]);
    assert_eq!(arg_entry_point::<bf16>(ArgOp::ArgMax), "argmax_bf16");
    assert_eq!(arg_entry_point::<u8>(ArgOp::ArgMinMax), "argminmax_u8");
    for t in
        [u8::NAME, i8::NAME, u16::NAME, i16::NAME, i32::NAME, u32::NAME, f32::NAME, f64::NAME, f16::NAME, bf16::NAME]
    {
        assert!(ARG_TYPES.contains(&t), "no arg kernels for {}", t);
    }
    assert_eq!(Error::Empty { op: ArgOp::ArgMax.name() }.to_string(), "argmax of an empty input is undefined");
}

#[test]
fn errors_say_what_is_wrong() {
    let e = Error::LengthMismatch { what: "x", expected: 32, actual: 31 };
    assert_eq!(e.to_string(), "x has length 31, expected 32");
    assert_eq!(Error::LeadingDimension { lda: 3, n: 4 }.to_string(), "lda = 3 is smaller than n = 4");
    assert!(Error::Misaligned { what: "A", required: 16, address: 0x1004 }.to_string().contains("0x1004"));
    assert_eq!(Error::Empty { op: "min" }.to_string(), "min of an empty input is undefined");
    assert_eq!(Error::Overlap { what: "y", with: "A" }.to_string(), "y overlaps A in device memory");
}

#[test]
fn without_a_gpu_open_reports_no_device_or_opens() {
    match cudakernels::open() {
        Ok(gpu) => assert!(!gpu.name().is_empty() && gpu.sm_count() > 0),
        Err(e) => assert!(matches!(e, Error::NoDevice | Error::Cuda { .. }), "unexpected error {:?}", e),
    }
}

/// The (m, n) of data/sgemv_shapes.csv's sets `issue` and `dispatch`: all 16, aligned (lda = n,
/// no offsets).
fn dispatch_shapes() -> Vec<(usize, usize)> {
    let cases: Vec<_> = sgemv_shapes::all().into_iter().filter(|c| c.is_in("issue") || c.is_in("dispatch")).collect();
    assert_eq!(cases.len(), 16, "the dispatch table's shapes");
    assert!(cases.iter().all(|c| c.pad == 0 && c.a_offset == 0 && c.x_offset == 0), "aligned shapes");
    cases.iter().map(|c| (c.m, c.n)).collect()
}

#[test]
fn sgemv_shape_sets_keep_their_sizes() {
    // A row lost or added by an edit of data/sgemv_shapes.csv shows here (the bench's shapes are
    // what earlier runs and the peers' CSV files are compared on).
    let count = |set| sgemv_shapes::in_set(set).len();
    assert_eq!(sgemv_shapes::all().len(), 46);
    let sizes = [("issue", 15), ("dispatch", 1), ("bench", 28), ("views", 19), ("plan-n", 6), ("plan-t", 22)];
    for &(set, size) in sizes.iter() {
        assert_eq!(count(set), size, "set {}", set);
    }
}

fn op_shape(op: cudakernels::Op, m: usize, n: usize, lda: usize, a_addr: u64) -> SgemvShape {
    SgemvShape { op, m, n, lda, a_addr, x_addr: 0x2000 }
}

#[test]
fn sgemv_dispatch_table_for_the_issue_shapes() {
    use cudakernels::config::{SGEMV_T_STRIPES_MIN_N, SGEMV_T_VEC4_BAND, SGEMV_WIDE_MIN_M, SGEMV_WIDE_ROWS_N};
    use cudakernels::sgemv_t_striped;
    use cudakernels::Op;
    let choose = |op, m, n, lda, a| op_shape(op, m, n, lda, a).auto_kernel();
    for (m, n) in dispatch_shapes() {
        let (auto_n, auto_t) = (choose(Op::N, m, n, n, 0x1000), choose(Op::T, m, n, n, 0x1000));
        let want_n = match n {
            16 => SgemvKernel::Vec4Rows(16),
            32 => SgemvKernel::Vec4Rows(32),
            64 => SgemvKernel::Vec4Rows(64),
            128 => SgemvKernel::N128,
            256 => SgemvKernel::WarpRowsVec4,
            3 => SgemvKernel::StagedRows,
            _ if n >= SGEMV_WIDE_ROWS_N && m >= SGEMV_WIDE_MIN_M => SgemvKernel::WideVec4,
            _ => SgemvKernel::SplitKVec4,
        };
        assert_eq!(auto_n, want_n, "Op::N {} x {}", m, n);
        let want_t = match (n >= 1 << 19, n % 4 == 0) {
            (true, true) => SgemvKernel::TStreamVec4,
            (true, false) => SgemvKernel::TStreamScalar,
            _ if sgemv_t_striped(n) => SgemvKernel::TStripes(32),
            (false, true) => SgemvKernel::TVec4,
            (false, false) => SgemvKernel::TScalar,
        };
        assert_eq!(auto_t, want_t, "Op::T {}x{}", m, n);
        // Unaligned views and odd lda fall back to scalar loads, never to the slow general warp kernels.
        for &(lda, a) in [(n + 1, 0x1000u64), (n, 0x1004)].iter() {
            let (k_n, k_t) = (choose(Op::N, m, n, lda, a), choose(Op::T, m, n, lda, a));
            assert!(!k_n.vector_loads() && !k_t.vector_loads(), "{} x {} lda {}: {:?} {:?}", m, n, lda, k_n, k_t);
            assert!(![SgemvKernel::WarpScalar, SgemvKernel::WarpVec4, SgemvKernel::BlockPerRow].contains(&k_n));
            let want = match n {
                _ if n >= 1 << 19 => SgemvKernel::TStreamScalar,
                _ if sgemv_t_striped(n) => SgemvKernel::TStripes(32),
                _ => SgemvKernel::TScalar,
            };
            assert_eq!(k_t, want, "Op::T {} x {} lda {}", m, n, lda);
        }
    }
    assert_eq!(choose(Op::N, 1 << 20, 1000, 1000, 0x1000), SgemvKernel::WarpRowsVec4);
    assert_eq!(choose(Op::N, 1 << 20, 1000, 1001, 0x1000), SgemvKernel::WarpRowsScalar);
    assert_eq!(choose(Op::T, 1 << 20, 16, 16, 0x1004), SgemvKernel::TScalar);
    // Op::T from SGEMV_T_STRIPES_MIN_N on reads stripes, any alignment.
    assert_eq!(choose(Op::T, 9, SGEMV_T_STRIPES_MIN_N - 4, SGEMV_T_STRIPES_MIN_N, 0x1000), SgemvKernel::TVec4);
    assert_eq!(choose(Op::T, 9, SGEMV_T_STRIPES_MIN_N, SGEMV_T_STRIPES_MIN_N + 1, 0x1004), SgemvKernel::TStripes(32));
    // Except the band where TVec4 measured faster (2^20 × 256), and from its end on again.
    let (band, end) = SGEMV_T_VEC4_BAND;
    assert_eq!(choose(Op::T, 1 << 20, band, band, 0x1000), SgemvKernel::TVec4);
    assert_eq!(choose(Op::T, 1 << 20, band - 4, band - 4, 0x1000), SgemvKernel::TStripes(32));
    assert_eq!(choose(Op::T, 1 << 20, end, end, 0x1000), SgemvKernel::TStripes(32));
    assert_eq!(choose(Op::T, 1 << 20, 100, 100, 0x1000), SgemvKernel::TStripes(32));
    // Wide Op::T streams from SGEMV_T_STREAM_N on, whatever m is.
    use cudakernels::config::SGEMV_T_STREAM_N;
    let wide = SGEMV_T_STREAM_N;
    assert_eq!(choose(Op::T, 3, wide, wide, 0x1000), SgemvKernel::TStreamVec4);
    assert_eq!(choose(Op::T, 3, wide - 4, wide - 4, 0x1000), SgemvKernel::TStripes(32));
    assert_eq!(choose(Op::T, 4096, wide, wide, 0x1000), SgemvKernel::TStreamVec4);
    assert_eq!(choose(Op::T, 3, wide + 1, wide + 1, 0x1000), SgemvKernel::TStreamScalar);
    assert_eq!(choose(Op::T, 3, wide, wide + 1, 0x1000), SgemvKernel::TStreamScalar);
    let wide_rows = SGEMV_WIDE_ROWS_N;
    let few = SGEMV_WIDE_MIN_M;
    assert_eq!(choose(Op::N, few, wide_rows, wide_rows, 0x1000), SgemvKernel::WideVec4);
    assert_eq!(choose(Op::N, few - 1, wide_rows, wide_rows, 0x1000), SgemvKernel::SplitKVec4);
    assert_eq!(choose(Op::N, few, wide_rows - 4, wide_rows - 4, 0x1000), SgemvKernel::SplitKVec4);
    assert_eq!(choose(Op::N, few, wide_rows, wide_rows + 1, 0x1000), SgemvKernel::SplitKShifted);
    assert_eq!(choose(Op::N, few, wide_rows + 2, wide_rows + 2, 0x1000), SgemvKernel::SplitKShifted);
    // Op::T reads x one float at a time: x's alignment does not matter.
    assert_eq!(SgemvShape { x_addr: 0x2004, ..op_shape(Op::T, 8, 8, 8, 0x1000) }.auto_kernel(), SgemvKernel::TVec4);
}

/// Every shape of data/axis_shapes.csv plans, along both axes, a launch the device takes: a
/// grid within an H100's, folds within their bound, the ragged case's offsets as the file says.
#[test]
fn axis_shapes_plan_within_the_kernels_limits() {
    use cudakernels::{auto_strategy, first_grid, fold_plan, AXIS_MAX_CHUNKS};
    use cudakernels::{Axis, AxisFold, AxisShape};
    let cases = axis_shapes::all();
    assert_eq!(cases.len(), 9, "data/axis_shapes.csv lost or gained a row");
    for case in cases {
        match case {
            axis_shapes::AxisCase::Dense { m, n } => {
                for &axis in [Axis::Rows, Axis::Columns].iter() {
                    for &(elem, width) in [(4, 1), (4, 4), (2, 8)].iter() {
                        for &fold in [AxisFold::Values, AxisFold::Args].iter() {
                            let (shape, strategy) = auto_strategy(axis, AxisShape::new(m, n), elem, fold, width, 132);
                            let grid = first_grid(shape, strategy, width, false, (1 << 31) - 1);
                            assert!(grid.is_ok(), "{:?} {:?}", case, axis);
                            let chunks = fold_plan(shape, strategy).map_or(1, |f| f.chunks);
                            assert!(chunks <= AXIS_MAX_CHUNKS, "{:?} {:?}: {} chunks", case, axis, chunks);
                        }
                    }
                }
            }
            axis_shapes::AxisCase::Ragged { segments, longest } => {
                let offsets = case.offsets();
                assert_eq!(offsets.len(), segments + 1);
                assert!(offsets.windows(2).all(|w| w[0] <= w[1] && w[1] - w[0] <= longest as u64));
                assert_eq!(offsets[2] - offsets[1], 2_654_435_761 % (longest as u64 + 1));
            }
        }
    }
}
