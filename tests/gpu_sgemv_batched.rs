//! sgemv with BLAS strides (incx, incy) and strided batches on the GPU, exact against a CPU
//! reference: small-integer data make every summation order exact. y is poisoned where beta = 0
//! (NaN: it must not be read), and the elements between the problems' entries hold a sentinel
//! that must survive.
mod common;
use common::gemv::{same, Call, EDGE_SHAPES, SENTINEL};
use common::{download, gpu, upload, Rng};
use cudakernels::{
    sgemv_batched_entry_point, Error, GpuStream, Op, SgemvBatch, SgemvKernel, SgemvLayout, SgemvOptions, SgemvShape,
};

/// Integers in -3..=3 (products and sums of a few thousand are exact in f32).
fn small_ints(rng: &mut Rng, len: usize) -> Vec<f32> {
    (0..len).map(|_| rng.below(7) as f32 - 3.0).collect()
}

/// Runs `c` with `kernel` on fresh data and compares the whole y buffer exactly. With
/// `nan_inputs`, A and x are all NaN (alpha = 0 must read neither).
fn check(gpu: &GpuStream, rng: &mut Rng, c: &Call, kernel: SgemvKernel, nan_inputs: bool) {
    let (a_span, x_span, _) = c.spans();
    let (a_len, x_len) = (c.offsets.0 + a_span, c.offsets.1 + x_span);
    let (a, x) = if nan_inputs {
        (vec![f32::NAN; a_len], vec![f32::NAN; x_len])
    } else {
        (small_ints(rng, a_len), small_ints(rng, x_len))
    };
    let y0: Vec<f32> = c.initial_y(|| rng.below(7) as f32 - 3.0);
    let want = c.reference(&a, &x, &y0);
    let (da, dx, dy) = (upload(&a), upload(&x), upload(&y0));
    let (a_view, x_view) = (da.index(c.offsets.0..), dx.index(c.offsets.1..));
    let mut y_view = dy.index(c.offsets.2..);
    let what = format!("seed {} {:?} {:?}", rng.seed, kernel, c);
    gpu.sgemv_batched(c.m, c.n, &a_view, &x_view, &mut y_view, c.batch, c.opts(kernel))
        .unwrap_or_else(|e| panic!("{}: {}", what, e));
    let got = download(gpu, &dy);
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        assert!(same(g, w), "{}: y[{}] = {}, want {}", what, i, g, w);
    }
}

/// The kernels that take any layout, by op.
fn batched_kernel(op: Op) -> SgemvKernel {
    if op == Op::N {
        SgemvKernel::BatchedN
    } else {
        SgemvKernel::BatchedT
    }
}

#[test]
fn incx_and_incy_of_1_2_and_3() {
    let handle = match gpu("incx_and_incy_of_1_2_and_3") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_inc");
    let shapes = [(1usize, 1usize), (31, 33), (33, 31), (64, 128), (512, 64), (100, 1000), (1000, 100), (3, 4100)];
    for &op in [Op::N, Op::T].iter() {
        for &(m, n) in shapes.iter() {
            for &(incx, incy) in [(1usize, 1usize), (2, 1), (1, 2), (3, 3), (2, 3)].iter() {
                for &(alpha, beta) in [(1.0f32, 0.0f32), (-2.0, 3.0)].iter() {
                    let c = Call { lda: n + 1, alpha, beta, offsets: (1, 2, 3), ..Call::new(op, m, n, incx, incy) };
                    check(gpu, &mut rng, &c, SgemvKernel::Auto, false);
                    check(gpu, &mut rng, &c, batched_kernel(op), false);
                }
            }
        }
    }
}

#[test]
fn strided_batches_of_1_2_and_1000() {
    let handle = match gpu("strided_batches_of_1_2_and_1000") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_batched");
    for &op in [Op::N, Op::T].iter() {
        for &(m, n, counts) in
            [(17usize, 9usize, &[1usize, 2, 1000][..]), (64, 64, &[1, 2, 1000]), (33, 130, &[2, 7])].iter()
        {
            for &count in counts.iter() {
                for &(incx, incy) in [(1usize, 1usize), (2, 3)].iter() {
                    let mut c = Call { lda: n + 3, beta: 2.0, offsets: (3, 1, 2), ..Call::new(op, m, n, incx, incy) };
                    let (_, _, y_one) = c.spans();
                    // Strides past each problem's span by amounts that are not multiples of 4.
                    c = c.batched(count, (5, 1, 2));
                    check(gpu, &mut rng, &c, SgemvKernel::Auto, false);
                    // A and x shared by every problem (stride 0); y back to back.
                    c.batch = SgemvBatch { count, stride_a: 0, stride_x: 0, stride_y: y_one };
                    check(gpu, &mut rng, &c, SgemvKernel::Auto, false);
                }
            }
        }
    }
}

#[test]
fn attention_decode_batches() {
    let handle = match gpu("attention_decode_batches") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_attention");
    // Heads × (KV length × head size): scores (Op::N, y per KV position) and values (Op::T).
    for &(heads, kv, d) in [(32usize, 512usize, 64usize), (64, 512, 128), (8, 4096, 128)].iter() {
        for &op in [Op::N, Op::T].iter() {
            let (x_len, y_len) = if op == Op::N { (d, kv) } else { (kv, d) };
            let batch = SgemvBatch { count: heads, stride_a: kv * d, stride_x: x_len, stride_y: y_len };
            let c = Call { batch, ..Call::new(op, kv, d, 1, 1) };
            check(gpu, &mut rng, &c, SgemvKernel::Auto, false);
        }
    }
}

#[test]
fn aligned_batches_take_the_16_byte_kernels() {
    let handle = match gpu("aligned_batches_take_the_16_byte_kernels") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_batched_vector");
    // Rows and every problem's A and x on 16 bytes: widths around the 8-float step and the
    // 8, 16 and 32 lanes of a row (Op::N) or 8-column groups (Op::T: n % 8 == 0 vectorizes),
    // and rows enough for the Op::T splits.
    let widths = [1usize, 4, 8, 9, 31, 32, 33, 64, 100, 128, 129, 256, 1000, 2048, 2056];
    let pad = |span: usize| (4 - span % 4) % 4;
    for &op in [Op::N, Op::T].iter() {
        for &n in widths.iter() {
            let lda = (n + 3) / 4 * 4;
            for &(m, count, beta) in [(1usize, 2usize, 0.0f32), (33, 7, -1.0), (130, 1000, 2.0), (5000, 2, 0.0)].iter()
            {
                if m * lda * count > 1 << 24 {
                    continue;
                }
                let c = Call { lda, beta, ..Call::new(op, m, n, 1, 1) };
                let (a, x, _) = c.spans();
                let c = c.batched(count, (pad(a), pad(x), 1));
                let shape = SgemvShape { op, m, n, lda, a_addr: 0, x_addr: 0 };
                let layout = SgemvLayout { incx: 1, incy: 1, batch: c.batch };
                let vector = op == Op::N || n % 8 == 0;
                let entry = sgemv_batched_entry_point(&shape, &layout);
                assert_eq!(entry.starts_with("gemv_f32_f32_f32_"), vector, "{:?}: {}", c, entry);
                check(gpu, &mut rng, &c, SgemvKernel::Auto, false);
            }
        }
    }
}

#[test]
fn edge_shapes_and_alpha_zero() {
    let handle = match gpu("edge_shapes_and_alpha_zero") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_batched_edges");
    for &op in [Op::N, Op::T].iter() {
        for &(m, n) in EDGE_SHAPES.iter() {
            for &count in [1usize, 3].iter() {
                let c = Call { lda: n + 2, beta: -1.0, ..Call::new(op, m, n, 2, 3) }.batched(count, (1, 3, 1));
                check(gpu, &mut rng, &c, SgemvKernel::Auto, false);
                // alpha = 0: y = beta·y, A and x (all NaN) unread; beta = 0 then writes zeros.
                for &beta in [0.0f32, -1.0].iter() {
                    check(gpu, &mut rng, &Call { alpha: 0.0, beta, ..c }, SgemvKernel::Auto, true);
                }
            }
        }
    }
}

#[test]
fn bad_layouts_are_refused_before_any_launch() {
    let handle = match gpu("bad_layouts_are_refused_before_any_launch") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let (m, n) = (8usize, 4usize);
    let a = upload(&vec![1.0f32; 8 * m * n]);
    let x = upload(&vec![1.0f32; 64]);
    let y_host = vec![SENTINEL; 64];
    let mut y = upload(&y_host);
    let opts = SgemvOptions { incx: 2, incy: 2, ..SgemvOptions::default() };
    let batch = |count, stride_y| SgemvBatch { count, stride_a: m * n, stride_x: 7, stride_y };
    let mut call = |batch: SgemvBatch, opts: SgemvOptions| gpu.sgemv_batched(m, n, &a, &x, &mut y, batch, opts);
    assert_eq!(call(SgemvBatch::ONE, SgemvOptions { incx: 0, ..opts }), Err(Error::Stride { what: "incx", value: 0 }));
    assert_eq!(call(SgemvBatch::ONE, SgemvOptions { incy: 0, ..opts }), Err(Error::Stride { what: "incy", value: 0 }));
    // Per problem A spans 7·4 + 4 = 32 elements, x 1 + 3·2 = 7 and y 1 + 7·2 = 15: 14 apart,
    // two problems' y would interleave.
    assert_eq!(call(batch(2, 14), opts), Err(Error::Overlap { what: "y", with: "y" }));
    // Five problems 15 apart need 4·15 + 15 = 75 elements of y, 64 are there.
    assert_eq!(call(batch(5, 15), opts), Err(Error::LengthMismatch { what: "y", expected: 75, actual: 64 }));
    let short_x = SgemvBatch { stride_x: 20, ..batch(4, 15) };
    assert_eq!(call(short_x, opts), Err(Error::LengthMismatch { what: "x", expected: 67, actual: 64 }));
    let named = SgemvOptions { kernel: SgemvKernel::WarpRowsScalar, ..opts };
    assert!(matches!(call(batch(2, 15), named), Err(Error::Unsupported { .. })));
    // y inside x (a view is Copy, so `&mut` proves nothing).
    let (xs, mut ys) = (upload(&vec![1.0f32; 64]), upload(&[0.0f32]));
    let mut y_on_x = xs.index(..15);
    assert_eq!(
        gpu.sgemv_batched(m, n, &a, &xs, &mut y_on_x, SgemvBatch::ONE, opts),
        Err(Error::Overlap { what: "y", with: "x" })
    );
    // An empty batch is accepted and does nothing.
    assert_eq!(gpu.sgemv_batched(m, n, &a, &x, &mut ys, batch(0, 15), opts), Ok(()));
    assert_eq!(download(gpu, &ys), vec![0.0f32]);
    assert_eq!(download(gpu, &y), y_host, "no refused call wrote y");
}
