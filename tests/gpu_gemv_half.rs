//! Half-precision gemv (`GpuStream::gemv`: A f16 or bf16, x and y each f32 or A's type) on the GPU,
//! exact against a CPU reference: small-integer data make every f32 sum exact, so y is that
//! sum rounded once to y's type (nearest even, as `half`'s `from_f32`). y is poisoned where
//! beta = 0 (NaN), and the elements between the problems' entries hold a sentinel.
mod common;
use common::gemv::{same, Call, El, EDGE_SHAPES};
use common::{download, gpu, upload, Rng};
use cudakernels::{
    bf16, f16, half_gemv_entry_point, Error, GemvVector, GpuStream, HalfWeight, Op, SgemvBatch, SgemvKernel,
    SgemvLayout, SgemvOptions, SgemvShape,
};

/// Runs `c` on fresh data (A and x all NaN with `nan_inputs`) and compares y's buffer exactly.
fn check<A: HalfWeight + El, X: GemvVector<A> + El, Y: GemvVector<A> + El>(
    gpu: &GpuStream,
    rng: &mut Rng,
    c: &Call,
    nan_inputs: bool,
) {
    let (a_span, x_span, _) = c.spans();
    let int = |rng: &mut Rng| if nan_inputs { f32::NAN } else { rng.below(7) as f32 - 3.0 };
    let a: Vec<A> = (0..c.offsets.0 + a_span).map(|_| A::of(int(rng))).collect();
    let x: Vec<X> = (0..c.offsets.1 + x_span).map(|_| X::of(int(rng))).collect();
    let y0: Vec<Y> = c.initial_y(|| rng.below(7) as f32 - 3.0);
    let want = c.reference(&a, &x, &y0);
    let (da, dx, dy) = (upload(&a), upload(&x), upload(&y0));
    let (a_view, x_view, mut y_view) = (da.index(c.offsets.0..), dx.index(c.offsets.1..), dy.index(c.offsets.2..));
    let types = (<A as HalfWeight>::NAME, <X as GemvVector<A>>::NAME, <Y as GemvVector<A>>::NAME);
    let what = format!("seed {} A, x, y {:?} {:?}", rng.seed, types, c);
    let opts = c.opts(SgemvKernel::Auto);
    gpu.gemv(c.m, c.n, &a_view, &x_view, &mut y_view, c.batch, opts).unwrap_or_else(|e| panic!("{}: {}", what, e));
    let got = download(gpu, &dy);
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        assert!(same(g, w), "{}: y[{}] = {:?}, want {:?}", what, i, g, w);
    }
}

/// [`check`] for every type triple: each weight type with x and y each f32 or its own type.
fn each_triple(gpu: &GpuStream, rng: &mut Rng, c: &Call, nan_inputs: bool) {
    check::<f16, f32, f32>(gpu, rng, c, nan_inputs);
    check::<f16, f32, f16>(gpu, rng, c, nan_inputs);
    check::<f16, f16, f32>(gpu, rng, c, nan_inputs);
    check::<f16, f16, f16>(gpu, rng, c, nan_inputs);
    check::<bf16, f32, f32>(gpu, rng, c, nan_inputs);
    check::<bf16, f32, bf16>(gpu, rng, c, nan_inputs);
    check::<bf16, bf16, f32>(gpu, rng, c, nan_inputs);
    check::<bf16, bf16, bf16>(gpu, rng, c, nan_inputs);
}

#[test]
fn every_type_triple_and_op_with_alpha_beta_lda_and_views() {
    let handle = match gpu("every_type_triple_and_op_with_alpha_beta_lda_and_views") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("gemv_half");
    let shapes = [(1usize, 1usize), (31, 33), (33, 31), (64, 128), (512, 64), (100, 1000), (1000, 100), (3, 4100)];
    for &op in [Op::N, Op::T].iter() {
        for &(m, n) in shapes.iter() {
            for &(alpha, beta) in [(1.0f32, 0.0f32), (-2.0, 3.0)].iter() {
                each_triple(gpu, &mut rng, &Call { alpha, beta, ..Call::new(op, m, n, 1, 1) }, false);
                let views = Call { lda: n + 1, alpha, beta, offsets: (1, 3, 5), ..Call::new(op, m, n, 1, 1) };
                each_triple(gpu, &mut rng, &views, false);
            }
        }
    }
}

#[test]
fn incx_incy_and_strided_batches() {
    let handle = match gpu("incx_incy_and_strided_batches") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("gemv_half_batched");
    for &op in [Op::N, Op::T].iter() {
        for &(incx, incy) in [(1usize, 1usize), (2, 1), (1, 2), (3, 3)].iter() {
            let c = Call { lda: 70, beta: 2.0, offsets: (2, 1, 3), ..Call::new(op, 37, 65, incx, incy) };
            for &count in [1usize, 2, 1000].iter() {
                each_triple(gpu, &mut rng, &c.batched(count, (3, 1, 2)), false);
            }
        }
        // Attention decode: 32 heads of 512 × 128, problems back to back.
        let (x_len, y_len) = if op == Op::N { (128, 512) } else { (512, 128) };
        let heads = SgemvBatch { count: 32, stride_a: 512 * 128, stride_x: x_len, stride_y: y_len };
        each_triple(gpu, &mut rng, &Call { batch: heads, ..Call::new(op, 512, 128, 1, 1) }, false);
    }
}

#[test]
fn edge_shapes_and_alpha_zero() {
    let handle = match gpu("edge_shapes_and_alpha_zero") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("gemv_half_edges");
    for &op in [Op::N, Op::T].iter() {
        for &(m, n) in EDGE_SHAPES.iter() {
            let c = Call { lda: n + 2, beta: -1.0, ..Call::new(op, m, n, 2, 3) }.batched(3, (3, 1, 2));
            each_triple(gpu, &mut rng, &c, false);
            // alpha = 0: y = beta·y with A and x all NaN, unread.
            for &beta in [0.0f32, -1.0].iter() {
                each_triple(gpu, &mut rng, &Call { alpha: 0.0, beta, ..c }, true);
            }
        }
    }
}

#[test]
fn bad_input_is_refused_before_any_launch() {
    let handle = match gpu("bad_input_is_refused_before_any_launch") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let (m, n) = (8usize, 4usize);
    let a = upload(&[bf16::from_f32(1.0); 32]);
    let x = upload(&[bf16::from_f32(1.0); 64]);
    let y_host = vec![bf16::from_f32(7.0); 64];
    let y = upload(&y_host);
    let opts = SgemvOptions::default();
    let one = SgemvBatch::ONE;
    assert_eq!(
        gpu.gemv(m, n, &a, &x.index(..5), &mut y.index(..m), one, opts),
        Err(Error::LengthMismatch { what: "x", expected: 4, actual: 5 })
    );
    let zero_inc = SgemvOptions { incy: 0, ..opts };
    assert_eq!(
        gpu.gemv(m, n, &a, &x.index(..4), &mut y.index(..m), one, zero_inc),
        Err(Error::Stride { what: "incy", value: 0 })
    );
    let named = SgemvOptions { kernel: SgemvKernel::BatchedN, ..opts };
    assert!(matches!(gpu.gemv(m, n, &a, &x.index(..4), &mut y.index(..m), one, named), Err(Error::Unsupported { .. })));
    // Two problems' y 7 apart with 8 entries each interleave.
    let ys = SgemvBatch { count: 2, stride_a: 0, stride_x: 0, stride_y: 7 };
    assert_eq!(
        gpu.gemv(m, n, &a, &x.index(..4), &mut y.index(..15), ys, opts),
        Err(Error::Overlap { what: "y", with: "y" })
    );
    // y's 2-byte elements against x's: y starting on x's last element overlaps, one past does not.
    let mut on_x = x.index(3..3 + m);
    assert_eq!(gpu.gemv(m, n, &a, &x.index(..4), &mut on_x, one, opts), Err(Error::Overlap { what: "y", with: "x" }));
    assert_eq!(download(gpu, &x), vec![bf16::from_f32(1.0); 64], "no refused call wrote x");
    let mut past_x = x.index(4..4 + m);
    assert_eq!(gpu.gemv(m, n, &a, &x.index(..4), &mut past_x, one, opts), Ok(()));
    let got = download(gpu, &x);
    assert_eq!(&got[4..4 + m], &vec![bf16::from_f32(4.0); m][..], "each row of ones times four ones");
    assert_eq!(download(gpu, &y), y_host, "no refused call wrote y");
}

/// n rounded up to a whole 16-byte vector of halves.
fn whole_vectors(n: usize) -> usize {
    (n + 7) / 8 * 8
}

#[test]
fn vector_kernels_at_every_width_alignment_and_batch() {
    let handle = match gpu("vector_kernels_at_every_width_alignment_and_batch") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("gemv_half_vector");
    // Widths around the 8-element vector and the 8, 16 and 32 lanes per row; lda a whole
    // number of vectors (the vector kernel) or one past it (the scalar one).
    let widths = [1usize, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 4104];
    for &n in widths.iter() {
        for &(m, beta) in [(1usize, 0.0f32), (33, 0.0), (130, -1.0)].iter() {
            for &lda in [whole_vectors(n), whole_vectors(n) + 8, n + 1].iter() {
                each_triple(gpu, &mut rng, &Call { lda, beta, ..Call::new(Op::N, m, n, 1, 1) }, false);
            }
        }
    }
    // Op::T: n a multiple of 8 (the vector kernel; others the scalar one), rows from one to
    // enough for splits, x and y strided too.
    for &n in [8usize, 16, 24, 60, 64, 128, 136, 2048, 2056].iter() {
        for &(m, beta) in [(1usize, 0.0f32), (33, -1.0), (700, 0.0), (5000, 2.0)].iter() {
            for &lda in [whole_vectors(n), whole_vectors(n) + 8, n + 1].iter() {
                each_triple(gpu, &mut rng, &Call { lda, beta, ..Call::new(Op::T, m, n, 1, 1) }, false);
            }
            each_triple(
                gpu,
                &mut rng,
                &Call { lda: n, beta, offsets: (8, 1, 3), ..Call::new(Op::T, m, n, 2, 3) },
                false,
            );
        }
    }
    // A and x views 0..7 elements in (8: whole vectors again), y views anywhere.
    for &n in [64usize, 129, 4104].iter() {
        for shift in 0..=8 {
            let c =
                Call { lda: whole_vectors(n), offsets: (shift, 8 - shift, shift + 1), ..Call::new(Op::N, 40, n, 1, 1) };
            each_triple(gpu, &mut rng, &c, false);
        }
    }
    // Batches whose strides keep every problem on whole vectors, and one that does not.
    for &n in [16usize, 64, 72, 128, 300].iter() {
        let lda = whole_vectors(n);
        for &op in [Op::N, Op::T].iter() {
            let c = Call { lda, beta: 2.0, ..Call::new(op, 37, n, 1, 1) };
            for &count in [1usize, 2, 1000].iter() {
                each_triple(gpu, &mut rng, &c.batched(count, (lda - n, lda - n, 1)), false);
                each_triple(gpu, &mut rng, &c.batched(count, (lda - n + 1, lda - n, 1)), false);
            }
        }
    }
}

#[test]
fn vector_kernels_on_attention_decode() {
    let handle = match gpu("vector_kernels_on_attention_decode") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("gemv_half_attention");
    // Scores (Op::N: K · q) and values (Op::T: Vᵀ · p): one cache (kv × head) per head,
    // problems back to back; the values split their rows across blocks, or at 512 rows take
    // narrower column tiles. From 2^15 rows the scores take the short-row entries: four rows
    // per group (`_ns4`) where eight (`_ns`) would leave each resident warp fewer than two tiles.
    // 70 × 1000, 9 × 8000, 9 × 7999, 48 × 6001 and 21 × 9999 have tiles across problems and a
    // partial last tile, 72 columns a ninth step per row, and 67 columns a tail of 3.
    let caches = [
        (32usize, 512usize, 64usize),
        (64, 512, 128),
        (32, 4096, 64),
        (32, 4096, 128),
        (70, 1000, 64),
        (9, 8000, 72),
        (9, 7999, 67),
        (48, 6001, 64),
        (21, 9999, 67),
    ];
    let mut short_entries = Vec::new();
    for &(heads, kv, head) in caches.iter() {
        for &op in [Op::N, Op::T].iter() {
            let (x_len, y_len) = if op == Op::N { (head, kv) } else { (kv, head) };
            let batch = SgemvBatch { count: heads, stride_a: kv * head, stride_x: x_len, stride_y: y_len };
            each_triple(gpu, &mut rng, &Call { batch, ..Call::new(op, kv, head, 1, 1) }, false);
            let shape = SgemvShape { op, m: kv, n: head, lda: head, a_addr: 0, x_addr: 0 };
            let layout = SgemvLayout { incx: 1, incy: 1, batch };
            short_entries.push(half_gemv_entry_point::<bf16, bf16, f32>(gpu, &shape, &layout).unwrap());
        }
    }
    // An H100's or H200's 132 SMs keep three `_ns` blocks each: 32 × 4096 × 128 and the last
    // two caches walk deep, 64 × 512 and 32 × 4096 × 64 shallow.
    for entry in ["gemv_bf16_bf16_f32_ns", "gemv_bf16_bf16_f32_ns4"].iter() {
        assert!(short_entries.contains(entry), "{} never ran: {:?}", entry, short_entries);
    }
}
