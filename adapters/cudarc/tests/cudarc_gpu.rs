//! Every entry point of the adapter on a GPU against the CPU, the refusals, the stream cache
//! and the event ordering across streams. Without a GPU each test prints a SKIPPED line (with
//! REQUIRE_GPU=1 it fails instead).
use cudakernels_cudarc::{
    cudakernels, ArgOp, Axis, AxisShape, AxisStrategy, Error, Kernels, ReduceStrategy, SgemvBatch, SgemvOptions,
    TypedOp,
};
use cudarc::driver::{CudaContext, CudaStream};
use half::{bf16, f16};
use std::sync::Arc;

/// The library, then cudarc's context of device 0 and a stream; `None` (after a SKIPPED line)
/// without a GPU.
fn setup(test: &str) -> Option<(Arc<CudaContext>, Kernels, Arc<CudaStream>)> {
    let gpu = match cudakernels::open() {
        Ok(gpu) => gpu,
        Err(cudakernels::Error::NoDevice) if std::env::var("REQUIRE_GPU").as_deref() != Ok("1") => {
            println!("SKIPPED {}: no CUDA device", test);
            return None;
        }
        Err(e) => panic!("open: {}", e),
    };
    let ctx = CudaContext::new(0).unwrap();
    let kernels = Kernels::with_gpu(&ctx, gpu).unwrap();
    let stream = ctx.new_stream().unwrap();
    Some((ctx, kernels, stream))
}

/// Values from a 64-bit LCG.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 32) as u32
    }

    /// Integers in -64..64 as f32: every sum below 2^24 is exact in any order.
    fn small(&mut self) -> f32 {
        (self.next() >> 25) as f32 - 64.0
    }
}

fn first_extreme<T: PartialOrd + Copy>(v: &[T], max: bool) -> (T, u64) {
    let mut best = (v[0], 0);
    for (i, &x) in v.iter().enumerate().skip(1) {
        if (max && x > best.0) || (!max && x < best.0) {
            best = (x, i as u64);
        }
    }
    best
}

#[test]
fn typed_and_arg_reductions() {
    let Some((_ctx, k, s)) = setup("typed_and_arg_reductions") else { return };
    let mut rng = Lcg(7);
    let v: Vec<i16> = (0..100_003).map(|_| rng.next() as i16).collect();
    let d = s.clone_htod(&v).unwrap();
    let view = d.slice(3..);
    let w = &v[3..];
    let sum: i64 = w.iter().map(|&x| x as i64).sum();
    assert_eq!(k.sum(&s, &view).unwrap(), sum);
    let (lo, hi) = (*w.iter().min().unwrap(), *w.iter().max().unwrap());
    assert_eq!((k.min(&s, &view).unwrap(), k.max(&s, &view).unwrap()), (lo, hi));
    assert_eq!(k.minmax(&s, &view).unwrap(), (lo, hi));
    let mut pair = s.clone_htod(&[0i16; 2]).unwrap();
    k.reduce_into(&s, TypedOp::MinMax, &view, &mut pair).unwrap();
    assert_eq!(s.clone_dtoh(&pair).unwrap(), vec![lo, hi]);
    let mut total = s.clone_htod(&[0i64]).unwrap();
    k.sum_into(&s, &view, &mut total).unwrap();
    assert_eq!(s.clone_dtoh(&total).unwrap(), vec![sum]);

    let (amin, amax) = (first_extreme(w, false), first_extreme(w, true));
    let got = k.argmin(&s, &view).unwrap();
    assert_eq!((got.value, got.index), amin);
    let got = k.argmax(&s, &view).unwrap();
    assert_eq!((got.value, got.index), amax);
    let (a, b) = k.argminmax(&s, &view).unwrap();
    assert_eq!(((a.value, a.index), (b.value, b.index)), (amin, amax));
    let (mut values, mut indices) = (s.clone_htod(&[0i16; 2]).unwrap(), s.clone_htod(&[u64::MAX; 2]).unwrap());
    k.arg_into(&s, ArgOp::ArgMinMax, &view, &mut values, &mut indices).unwrap();
    assert_eq!(s.clone_dtoh(&values).unwrap(), vec![amin.0, amax.0]);
    assert_eq!(s.clone_dtoh(&indices).unwrap(), vec![amin.1, amax.1]);
    k.argmin_into(&s, &view, &mut values, &mut indices).unwrap();
    assert_eq!((s.clone_dtoh(&values).unwrap()[0], s.clone_dtoh(&indices).unwrap()[0]), amin);
    assert!(matches!(k.min(&s, &d.slice(0..0)), Err(Error::Kernels(cudakernels::Error::Empty { .. }))));

    // f32 accumulated in f64, and halves (half 2's types, the library's bits).
    let f: Vec<f32> = (0..50_001).map(|_| rng.small() / 8.0).collect();
    let df = s.clone_htod(&f).unwrap();
    let want: f64 = f.iter().map(|&x| x as f64).sum();
    assert_eq!(k.sum_f32_f64acc(&s, &df).unwrap(), want);
    let mut out = s.clone_htod(&[f64::NAN]).unwrap();
    k.sum_f32_f64acc_into(&s, &df, &mut out).unwrap();
    assert_eq!(s.clone_dtoh(&out).unwrap(), vec![want]);
    let h: Vec<f16> = f.iter().map(|&x| f16::from_f32(x)).collect();
    let dh = s.clone_htod(&h).unwrap();
    assert_eq!(k.sum(&s, &dh).unwrap() as f64, want, "f16 sums accumulate in f32");
    let (lo, hi) = k.minmax(&s, &dh).unwrap();
    let wl = h.iter().copied().fold(f16::INFINITY, f16::min);
    let wh = h.iter().copied().fold(f16::NEG_INFINITY, f16::max);
    assert_eq!((lo.to_bits(), hi.to_bits()), (wl.to_bits(), wh.to_bits()));
    let b: Vec<bf16> = f.iter().map(|&x| bf16::from_f32(x)).collect();
    let got = k.argmax(&s, &s.clone_htod(&b).unwrap()).unwrap();
    let want = first_extreme(&b, true);
    assert_eq!((got.value.to_bits(), got.index), (want.0.to_bits(), want.1));
}

#[test]
fn axis_and_segments() {
    let Some((_ctx, k, s)) = setup("axis_and_segments") else { return };
    let mut rng = Lcg(11);
    let (m, n, lda) = (37, 53, 60);
    let a: Vec<f32> = (0..(m - 1) * lda + n).map(|_| rng.small()).collect();
    let d = s.clone_htod(&a).unwrap();
    let shape = AxisShape::new(m, n).with_lda(lda);
    let row = |i: usize| &a[i * lda..i * lda + n];

    let mut sums = s.clone_htod(&vec![f32::NAN; m]).unwrap();
    k.sum_along(&s, Axis::Rows, shape, &d, &mut sums, AxisStrategy::Auto).unwrap();
    let want: Vec<f32> = (0..m).map(|i| row(i).iter().sum()).collect();
    assert_eq!(s.clone_dtoh(&sums).unwrap(), want);

    let mut pairs = s.clone_htod(&vec![f32::NAN; 2 * n]).unwrap();
    k.reduce_along(&s, TypedOp::MinMax, Axis::Columns, shape, &d, &mut pairs, AxisStrategy::Auto).unwrap();
    let col = |j: usize| -> Vec<f32> { (0..m).map(|i| a[i * lda + j]).collect() };
    let want: Vec<f32> = (0..n)
        .flat_map(|j| {
            let c = col(j);
            [c.iter().copied().fold(f32::INFINITY, f32::min), c.iter().copied().fold(f32::NEG_INFINITY, f32::max)]
        })
        .collect();
    assert_eq!(s.clone_dtoh(&pairs).unwrap(), want);

    let (mut values, mut indices) =
        (s.clone_htod(&vec![f32::NAN; m]).unwrap(), s.clone_htod(&vec![u32::MAX; m]).unwrap());
    k.arg_along(&s, ArgOp::ArgMax, Axis::Rows, shape, &d, &mut values, &mut indices, AxisStrategy::Auto).unwrap();
    let want: Vec<(f32, u64)> = (0..m).map(|i| first_extreme(row(i), true)).collect();
    let got: Vec<(f32, u64)> = s
        .clone_dtoh(&values)
        .unwrap()
        .into_iter()
        .zip(s.clone_dtoh(&indices).unwrap())
        .map(|(v, i)| (v, i as u64))
        .collect();
    assert_eq!(got, want);
    let mut alone = s.clone_htod(&vec![u64::MAX - 1; m]).unwrap();
    k.arg_indices_along(&s, ArgOp::ArgMax, Axis::Rows, shape, &d, &mut alone, AxisStrategy::Auto).unwrap();
    assert_eq!(s.clone_dtoh(&alone).unwrap(), want.iter().map(|w| w.1).collect::<Vec<u64>>(), "indices alone");

    let offsets = [0u64, 10, 10, 500, a.len() as u64];
    let d_off = s.clone_htod(&offsets).unwrap();
    let seg = |i: usize| &a[offsets[i] as usize..offsets[i + 1] as usize];
    let mut sums = s.clone_htod(&[f32::NAN; 4]).unwrap();
    k.segmented_sum(&s, &d, &d_off, &mut sums).unwrap();
    assert_eq!(s.clone_dtoh(&sums).unwrap(), (0..4).map(|i| seg(i).iter().sum()).collect::<Vec<f32>>());
    let mut maxes = s.clone_htod(&[f32::NAN; 4]).unwrap();
    k.segmented_reduce(&s, TypedOp::Max, &d, &d_off, &mut maxes).unwrap();
    let want: Vec<f32> = (0..4).map(|i| seg(i).iter().copied().fold(f32::NEG_INFINITY, f32::max)).collect();
    assert_eq!(s.clone_dtoh(&maxes).unwrap(), want, "the empty segment gets -inf");
    let (mut values, mut indices) = (s.clone_htod(&[f32::NAN; 4]).unwrap(), s.clone_htod(&[0u64; 4]).unwrap());
    k.segmented_arg(&s, ArgOp::ArgMin, &d, &d_off, &mut values, &mut indices).unwrap();
    let got_i = s.clone_dtoh(&indices).unwrap();
    assert_eq!(got_i[1], u64::MAX, "the empty segment's index is all ones");
    for i in [0, 2, 3] {
        assert_eq!((s.clone_dtoh(&values).unwrap()[i], got_i[i]), first_extreme(seg(i), false));
    }
}

#[test]
fn gemvs_and_the_ladder() {
    let Some((_ctx, k, s)) = setup("gemvs_and_the_ladder") else { return };
    let mut rng = Lcg(13);
    // Small integers: every product and sum is exact in f32, in any order.
    let (m, n, count) = (20, 33, 3);
    let a: Vec<f32> = (0..m * n * count).map(|_| rng.small()).collect();
    let x: Vec<f32> = (0..n * count).map(|_| rng.small()).collect();
    let (da, dx) = (s.clone_htod(&a).unwrap(), s.clone_htod(&x).unwrap());
    let mut y = s.clone_htod(&vec![f32::NAN; m * count]).unwrap();
    let batch = SgemvBatch { count, stride_a: m * n, stride_x: n, stride_y: m };
    k.sgemv_batched(&s, m, n, &da, &dx, &mut y, batch, SgemvOptions::default()).unwrap();
    let want: Vec<f32> = (0..count * m)
        .map(|r| {
            let (b, i) = (r / m, r % m);
            (0..n).map(|j| a[b * m * n + i * n + j] * x[b * n + j]).sum()
        })
        .collect();
    assert_eq!(s.clone_dtoh(&y).unwrap(), want);

    // f16 everywhere (HSH): products of small integers, sums below 2048 exact in f16.
    let (m, n) = (16, 24);
    let ah: Vec<f16> = (0..m * n).map(|_| f16::from_f32((rng.next() % 5) as f32)).collect();
    let xh: Vec<f16> = (0..n).map(|_| f16::from_f32((rng.next() % 5) as f32)).collect();
    let mut yh = s.clone_htod(&vec![f16::NAN; m]).unwrap();
    let (dah, dxh) = (s.clone_htod(&ah).unwrap(), s.clone_htod(&xh).unwrap());
    k.gemv(&s, m, n, &dah, &dxh, &mut yh, SgemvBatch::ONE, SgemvOptions::default()).unwrap();
    let want: Vec<f32> = (0..m).map(|i| (0..n).map(|j| ah[i * n + j].to_f32() * xh[j].to_f32()).sum()).collect();
    assert_eq!(s.clone_dtoh(&yh).unwrap().iter().map(|v| v.to_f32()).collect::<Vec<_>>(), want);

    let ints: Vec<i32> = (0..300_001).map(|i| i % 1000 - 500).collect();
    let di = s.clone_htod(&ints).unwrap();
    let want = ints.iter().fold(0i32, |t, &v| t.wrapping_add(v));
    assert_eq!(k.reduce_sum(&s, &di, ReduceStrategy::Auto).unwrap(), want);
    let mut out = s.clone_htod(&[0i32]).unwrap();
    assert_eq!(k.reduce_sum_into(&s, &di, &mut out, ReduceStrategy::Auto).unwrap(), None);
    assert_eq!(s.clone_dtoh(&out).unwrap(), vec![want]);
}

#[test]
fn other_streams_are_ordered_by_cudarcs_events() {
    let Some((ctx, k, s)) = setup("other_streams_are_ordered_by_cudarcs_events") else { return };
    let other = ctx.new_stream().unwrap();
    let n = 1 << 24;
    let x = vec![1.0f32; n];
    // Written on `other`, summed on `s`, the result read back on `other`: no synchronization
    // but cudarc's events (the library's write to `out` must come before `other`'s read).
    let dx = other.clone_htod(&x).unwrap();
    let mut out = other.clone_htod(&[f32::NAN]).unwrap();
    for _ in 0..3 {
        k.sum_into(&s, &dx, &mut out).unwrap();
        assert_eq!(other.clone_dtoh(&out).unwrap(), vec![n as f32]);
        other.memset_zeros(&mut out).unwrap();
    }
    // Dropped at once after an enqueue-only call: freed after the kernel's reads.
    let mut y = s.clone_htod(&[0f32]).unwrap();
    k.sum_into(&s, &other.clone_htod(&x).unwrap(), &mut y).unwrap();
    assert_eq!(s.clone_dtoh(&y).unwrap(), vec![n as f32]);
}

#[test]
fn streams_are_borrowed_once_and_released() {
    let Some((ctx, k, s)) = setup("streams_are_borrowed_once_and_released") else { return };
    let x = s.clone_htod(&[3u8; 1000]).unwrap();
    assert_eq!(k.borrowed_streams(), 0);
    assert_eq!(k.sum(&s, &x).unwrap(), 3000);
    assert_eq!(k.sum(&s, &x).unwrap(), 3000);
    assert_eq!(k.borrowed_streams(), 1);
    let s2 = ctx.new_stream().unwrap();
    assert_eq!(k.sum(&s2, &x).unwrap(), 3000);
    assert_eq!(k.borrowed_streams(), 2);
    drop(s2); // only the cache holds it now: the next new stream's first call drops it
    let s3 = ctx.new_stream().unwrap();
    assert_eq!(k.sum(&s3, &x).unwrap(), 3000);
    assert_eq!(k.borrowed_streams(), 2);
    assert!(k.release(&s3));
    assert!(!k.release(&s3));
    assert_eq!(k.borrowed_streams(), 1);
    assert_eq!(k.sum(&s3, &x).unwrap(), 3000, "a released stream is borrowed again");
    assert_eq!(k.sum(&ctx.default_stream(), &x).unwrap(), 3000, "the legacy default stream");

    // Threads sharing one Kernels, a stream each.
    let k = Arc::new(k);
    let workers: Vec<_> = (0..4u64)
        .map(|t| {
            let (k, ctx) = (k.clone(), ctx.clone());
            std::thread::spawn(move || {
                let s = ctx.new_stream().unwrap();
                let v: Vec<u32> = (0..10_000 + t as u32).collect();
                let d = s.clone_htod(&v).unwrap();
                (0..20).all(|_| k.sum(&s, &d).unwrap() == v.iter().map(|&x| x as u64).sum::<u64>())
            })
        })
        .collect();
    assert!(workers.into_iter().all(|w| w.join().unwrap()));
}

#[test]
fn other_contexts_and_the_per_thread_stream_are_refused() {
    let Some((ctx, k, s)) = setup("other_contexts_and_the_per_thread_stream_are_refused") else { return };
    let x = s.clone_htod(&[1.0f32; 100]).unwrap();
    let per_thread = ctx.per_thread_stream();
    assert!(matches!(k.sum(&per_thread, &x), Err(Error::Kernels(cudakernels::Error::Unsupported { .. }))));

    let own = CudaContext::new_non_primary(0, 0).unwrap();
    assert!(matches!(Kernels::new(&own), Err(Error::Kernels(cudakernels::Error::ForeignContext { .. }))));
    let own_stream = own.new_stream().unwrap();
    let foreign = own_stream.clone_htod(&[1.0f32; 100]).unwrap();
    assert!(matches!(k.sum(&own_stream, &x), Err(Error::Kernels(cudakernels::Error::ForeignStream { .. }))));
    assert!(matches!(k.sum(&s, &foreign), Err(Error::Kernels(cudakernels::Error::ForeignContext { .. }))));
    let mut y = s.clone_htod(&[0f32; 10]).unwrap();
    let refused = k.sgemv(&s, 10, 10, &foreign, &x, &mut y, SgemvOptions::default());
    assert!(matches!(refused, Err(Error::Kernels(cudakernels::Error::ForeignContext { what: "A", .. }))));
    assert_eq!(k.borrowed_streams(), 0, "refused before a stream was borrowed");
    own_stream.synchronize().unwrap();
    assert_eq!(k.sum(&s, &x).unwrap(), 100.0, "the primary context works after");
}
