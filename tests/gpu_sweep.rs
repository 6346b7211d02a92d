//! Every kernel once, on small inputs, checked: what the runner's compute-sanitizer stages
//! (memcheck, racecheck, synccheck, initcheck) run. Every ladder step with every finish at one
//! block size, every typed op × type, every arg op × type, every sgemv kernel, every axis kernel
//! (rows, columns, fold, pieces) × op × type, the axis arg kernels likewise, every half-precision gemv kernel.
mod common;
use common::arg::{matrix, run_along, ArgRef, AXIS_ARG_OPS};
use common::axis::{run_case, Case};
use common::typed::Reference;
use common::{download, gpu, upload, Rng, U32};
use cudakernels::{bf16, f16, ArgOp, ValueIndex, ARG_TYPES, AXIS_TILE_TYPES, TYPED_TYPES};
use cudakernels::{
    Axis, AxisShape, AxisStrategy, Finish, GemvVector, GpuStream, HalfWeight, LadderKernel, Op, ReduceStrategy,
    SgemvBatch, SgemvKernel, SgemvOptions, TypedElement, TypedOp,
};

/// Several blocks with a partial last one, for every step at block 256.
const N: usize = 3 * 256 * 8 + 5;
const FINISHES: [Finish; 5] = [Finish::Atomic, Finish::SecondPass, Finish::Host, Finish::LastBlock, Finish::Flagged];

fn ladder(gpu: &GpuStream, rng: &mut Rng) -> usize {
    let host: Vec<i32> = (0..N + 1).map(|_| rng.next_u64() as i32).collect();
    let input = upload(&host);
    let mut runs = 0;
    for &offset in [0usize, 1].iter() {
        let view = input.index(offset..N + offset);
        let want = host[offset..N + offset].iter().fold(0i32, |s, &v| s.wrapping_add(v));
        for &kernel in LadderKernel::ALL.iter() {
            for &finish in FINISHES.iter() {
                let s = ReduceStrategy::Ladder { kernel, finish, block: 256, grain: 2 };
                assert_eq!(gpu.reduce_sum(&view, s).unwrap(), want, "seed {} {:?} offset {}", rng.seed, s, offset);
                let mut out = upload(&[0x5a5a_5a5ai32]);
                if gpu.reduce_sum_into(&view, &mut out, s).unwrap().is_none() {
                    assert_eq!(download(gpu, &out)[0], want, "seed {} {:?} into", rng.seed, s);
                }
                runs += 1;
            }
        }
    }
    runs
}

fn typed<T: TypedElement + PartialOrd>(gpu: &GpuStream, host: &[T], sum_ok: impl Fn(T::Sum, &[T]) -> bool) -> usize {
    let input = upload(host);
    let view = input.index(1..);
    let v = &host[1..];
    let lo = v.iter().copied().fold(v[0], |a, b| if b < a { b } else { a });
    let hi = v.iter().copied().fold(v[0], |a, b| if b > a { b } else { a });
    let got = gpu.minmax(&view).unwrap();
    assert!(got.0 == lo && got.1 == hi, "{} minmax {:?}, want {:?}", T::NAME, got, (lo, hi));
    assert!(gpu.min(&view).unwrap() == lo && gpu.max(&view).unwrap() == hi, "{} min/max", T::NAME);
    assert!(sum_ok(gpu.sum(&view).unwrap(), v), "{} sum", T::NAME);
    let mut out = upload(&[T::default(); 2]);
    gpu.reduce_into(TypedOp::MinMax, &view, &mut out).unwrap();
    let pair = download(gpu, &out);
    assert!(pair[0] == lo && pair[1] == hi, "{} reduce_into minmax", T::NAME);
    4
}

fn typed_all(gpu: &GpuStream, rng: &mut Rng) -> usize {
    let n = 5003;
    let mut ints = || (0..n).map(|_| rng.next_u64()).collect::<Vec<u64>>();
    macro_rules! int {
        ($t:ty, $acc:ty) => {{
            let host: Vec<$t> = ints().iter().map(|&v| v as $t).collect();
            typed(gpu, &host, |got: $acc, v: &[$t]| got == v.iter().fold(0 as $acc, |s, &x| s.wrapping_add(x as $acc)))
        }};
    }
    let mut runs = int!(u8, u64) + int!(i8, i64) + int!(u16, u64) + int!(i16, i64) + int!(i32, i64) + int!(u32, u64);
    let floats: Vec<f64> = (0..n).map(|_| rng.range(-1000.0, 1000.0)).collect();
    let close = |got: f64, v: &[f64]| {
        let (want, abs) = v.iter().fold((0.0, 0.0), |(s, a), &x| (s + x, a + x.abs()));
        // ≤ 5003 / 256 elements per thread in order, then two trees of depth ≤ 10.
        (got - want).abs() <= (n as f64 / 256.0 + 32.0) * U32 * abs
    };
    let f32s: Vec<f32> = floats.iter().map(|&v| v as f32).collect();
    let f32_back: Vec<f64> = f32s.iter().map(|&v| v as f64).collect();
    runs += typed(gpu, &f32s, |got: f32, _| close(got as f64, &f32_back[1..]));
    runs += typed(gpu, &floats, |got: f64, v| close(got, v));
    macro_rules! half {
        ($t:ident) => {{
            let host: Vec<$t> = floats.iter().map(|&v| $t::from_f64(v)).collect();
            let back: Vec<f64> = host.iter().map(|v| v.to_f64()).collect();
            typed(gpu, &host, |got: f32, _| close(got as f64, &back[1..]))
        }};
    }
    runs += half!(f16) + half!(bf16);
    let got = gpu.sum_f32_f64acc(&upload(&f32s)).unwrap();
    assert!(close(got, &f32_back), "sum_f32_f64acc");
    assert_eq!(runs / 4, TYPED_TYPES.len());
    runs + 1
}

/// First (value, index) of the extreme of `v`: finite values only, so `<` is the order.
fn first_extreme<T: TypedElement + PartialOrd>(v: &[T], high: bool) -> ValueIndex<T> {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if (high && x > v[best]) || (!high && x < v[best]) {
            best = i;
        }
    }
    ValueIndex { value: v[best], index: best as u64 }
}

/// Every arg op over a view at offset 1 of several blocks, as value calls and `_into`.
fn arg<T: TypedElement + PartialOrd>(gpu: &GpuStream, host: &[T]) -> usize {
    let input = upload(host);
    let view = input.index(1..);
    let want = (first_extreme(&host[1..], false), first_extreme(&host[1..], true));
    assert_eq!(gpu.argmin(&view).unwrap(), want.0, "{} argmin", T::NAME);
    assert_eq!(gpu.argmax(&view).unwrap(), want.1, "{} argmax", T::NAME);
    assert_eq!(gpu.argminmax(&view).unwrap(), want, "{} argminmax", T::NAME);
    for op in ArgOp::ALL.iter().copied() {
        let (mut values, mut indices) = (upload(&[T::default(); 2]), upload(&[u64::MAX; 2]));
        gpu.arg_into(op, &view, &mut values, &mut indices).unwrap();
        let (v, i) = (download(gpu, &values), download(gpu, &indices));
        let got: Vec<ValueIndex<T>> = (0..op.results()).map(|k| ValueIndex { value: v[k], index: i[k] }).collect();
        let expected = match op {
            ArgOp::ArgMin => vec![want.0],
            ArgOp::ArgMax => vec![want.1],
            ArgOp::ArgMinMax => vec![want.0, want.1],
        };
        assert_eq!(got, expected, "{} {:?}_into", T::NAME, op);
    }
    1
}

fn arg_all(gpu: &GpuStream, rng: &mut Rng) -> usize {
    // Over 16 KiB for every type: several 256-thread blocks of four vectors each.
    let n = 40_003;
    let ints: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
    let floats: Vec<f64> = (0..n).map(|_| rng.range(-1000.0, 1000.0)).collect();
    macro_rules! int {
        ($($t:ty),*) => { 0 $(+ arg(gpu, &ints.iter().map(|&v| v as $t).collect::<Vec<$t>>()))* };
    }
    let runs = int!(u8, i8, u16, i16, i32, u32)
        + arg(gpu, &floats.iter().map(|&v| v as f32).collect::<Vec<f32>>())
        + arg(gpu, &floats)
        + arg(gpu, &floats.iter().map(|&v| f16::from_f64(v)).collect::<Vec<f16>>())
        + arg(gpu, &floats.iter().map(|&v| bf16::from_f64(v)).collect::<Vec<bf16>>());
    assert_eq!(runs, ARG_TYPES.len());
    runs
}

fn sgemv_all(gpu: &GpuStream, rng: &mut Rng) -> usize {
    let m = 37;
    let mut runs = 0;
    for kernel in SgemvKernel::explicit() {
        let op = kernel.op();
        let mut ran = false;
        for &n in [4usize, 8, 16, 32, 64, 128, 200].iter() {
            let (x_len, y_len) = if op == Op::N { (n, m) } else { (m, n) };
            let a: Vec<f32> = (0..m * n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
            let x: Vec<f32> = (0..x_len).map(|_| rng.range(-1.0, 1.0) as f32).collect();
            let (da, dx) = (upload(&a), upload(&x));
            let mut dy = upload(&vec![f32::NAN; y_len]);
            match gpu.sgemv(m, n, &da, &dx, &mut dy, SgemvOptions { kernel, op, ..SgemvOptions::default() }) {
                Ok(()) => {}
                Err(cudakernels::Error::Unsupported { .. }) => continue,
                Err(e) => panic!("{:?} n {}: {}", kernel, n, e),
            }
            let y = download(gpu, &dy);
            for (i, &got) in y.iter().enumerate() {
                // Op::N: row i of A times x; Op::T: column i of A times x.
                let products: Vec<f64> = match op {
                    Op::N => (0..n).map(|c| a[i * n + c] as f64 * x[c] as f64).collect(),
                    Op::T => (0..m).map(|r| a[r * n + i] as f64 * x[r] as f64).collect(),
                };
                let dot: f64 = products.iter().sum();
                let abs: f64 = products.iter().map(|p| p.abs()).sum();
                let tol = 2.0 * ((products.len() + 31) / 32 + 16) as f64 * U32 * abs;
                assert!((got as f64 - dot).abs() <= tol, "seed {} {:?} n {} output {}", rng.seed, kernel, n, i);
            }
            ran = true;
            runs += 1;
        }
        assert!(ran, "{:?} ran on no shape", kernel);
    }
    runs
}

/// The axis kernels over `T`: rows (whole, split so the fold runs too, and a row per block,
/// folded in it) and columns, every op; columns folded in their launch where `T` has them.
fn axis<T: Reference>(gpu: &GpuStream, rng: &mut Rng) -> usize {
    let case = Case::<T>::new(rng, 40, 70, 3, 1, &[]);
    let ctx = format!("seed {} {}", rng.seed, T::NAME);
    for &chunks in [1, 3, 8].iter() {
        run_case(gpu, &case, Axis::Rows, AxisStrategy::Rows { lanes: 32, chunks }, &ctx);
    }
    run_case(gpu, &case, Axis::Columns, AxisStrategy::Columns { tile: 32, splits: 2 }, &ctx);
    if !AXIS_TILE_TYPES.contains(&T::NAME) {
        return 4 * TypedOp::ALL.len();
    }
    run_case(gpu, &case, Axis::Columns, AxisStrategy::FoldedColumns { tile: 8, splits: 3 }, &ctx);
    5 * TypedOp::ALL.len()
}

fn axis_all(gpu: &GpuStream, rng: &mut Rng) -> usize {
    axis::<u8>(gpu, rng)
        + axis::<i8>(gpu, rng)
        + axis::<u16>(gpu, rng)
        + axis::<i16>(gpu, rng)
        + axis::<i32>(gpu, rng)
        + axis::<u32>(gpu, rng)
        + axis::<f32>(gpu, rng)
        + axis::<f64>(gpu, rng)
        + axis::<cudakernels::f16>(gpu, rng)
        + axis::<cudakernels::bf16>(gpu, rng)
}

/// The axis arg kernels over `T`: rows and columns, both split (so the fold runs), rows also
/// whole and a row per block (folded in it), both ops.
fn axis_arg<T: ArgRef>(gpu: &GpuStream, rng: &mut Rng) -> usize {
    let shape = AxisShape::new(40, 70).with_lda(73);
    let ctx = format!("seed {} {}", rng.seed, T::NAME);
    let (buffer, lines) = matrix::<T>(rng, shape, 1, Axis::Rows);
    for &chunks in [1, 3, 8].iter() {
        let rows = AxisStrategy::Rows { lanes: 32, chunks };
        run_along::<T, u32>(gpu, (&buffer, &lines), 1, shape, Axis::Rows, rows, &ctx);
    }
    let (buffer, lines) = matrix::<T>(rng, shape, 1, Axis::Columns);
    let cols = AxisStrategy::Columns { tile: 32, splits: 2 };
    run_along::<T, u64>(gpu, (&buffer, &lines), 1, shape, Axis::Columns, cols, &ctx);
    4 * AXIS_ARG_OPS.len()
}

fn axis_arg_all(gpu: &GpuStream, rng: &mut Rng) -> usize {
    axis_arg::<u8>(gpu, rng)
        + axis_arg::<i8>(gpu, rng)
        + axis_arg::<u16>(gpu, rng)
        + axis_arg::<i16>(gpu, rng)
        + axis_arg::<i32>(gpu, rng)
        + axis_arg::<u32>(gpu, rng)
        + axis_arg::<f32>(gpu, rng)
        + axis_arg::<f64>(gpu, rng)
        + axis_arg::<f16>(gpu, rng)
        + axis_arg::<bf16>(gpu, rng)
}

/// How a half-precision sweep makes A's, x's and y's elements from f32 and reads y back.
type Conversions<A, X, Y> = (fn(f32) -> A, fn(f32) -> X, fn(f32) -> Y, fn(Y) -> f32);

/// Half-precision gemv of A, x and y of types A, X and Y, 2 problems, each kernel once: the
/// scalar ones (Op::N with incx 2, Op::T with A one element in), the vector ones (whole
/// 16-byte rows; Op::T with incx 2), on small integers (exact in every type): y against the
/// CPU's sums.
fn half_gemv<A: HalfWeight, X: GemvVector<A>, Y: GemvVector<A> + Default>(
    gpu: &GpuStream,
    of: Conversions<A, X, Y>,
) -> usize {
    let (a_of, x_of, y_of, y_f32) = of;
    let types = (<A as HalfWeight>::NAME, <X as GemvVector<A>>::NAME, <Y as GemvVector<A>>::NAME);
    let (m, n) = (37usize, 72usize);
    let a_host: Vec<f32> = (0..2 * m * n + 1).map(|i| (i % 5) as f32 - 2.0).collect();
    let a = upload(&a_host.iter().map(|&v| a_of(v)).collect::<Vec<A>>());
    for &(op, incx, shift) in [(Op::N, 2usize, 0usize), (Op::T, 2, 1), (Op::N, 1, 0), (Op::T, 2, 0)].iter() {
        let (x_len, y_len) = if op == Op::N { (n, m) } else { (m, n) };
        let x_host: Vec<f32> = (0..2 * 2 * x_len).map(|i| (i % 3) as f32 - 1.0).collect();
        let x = upload(&x_host.iter().map(|&v| x_of(v)).collect::<Vec<X>>());
        let mut y = upload(&vec![y_of(f32::NAN); 2 * y_len]);
        let batch = SgemvBatch { count: 2, stride_a: m * n, stride_x: 2 * x_len, stride_y: y_len };
        let opts = SgemvOptions { op, incx, ..SgemvOptions::default() };
        let a_view = a.index(shift..);
        gpu.gemv(m, n, &a_view, &x, &mut y, batch, opts).unwrap_or_else(|e| panic!("{:?} {:?}: {}", types, op, e));
        let got = download(gpu, &y);
        for b in 0..2 {
            for i in 0..y_len {
                let dot: f32 = (0..x_len)
                    .map(|k| {
                        let (r, c) = if op == Op::N { (i, k) } else { (k, i) };
                        a_host[shift + b * m * n + r * n + c] * x_host[b * 2 * x_len + incx * k]
                    })
                    .sum();
                assert_eq!(y_f32(got[b * y_len + i]), dot, "{:?} {:?} problem {} y[{}]", types, op, b, i);
            }
        }
    }
    4
}

/// Every half-precision kernel: each weight type with x and y each f32 or its own type.
fn half_gemv_all(gpu: &GpuStream) -> usize {
    let h: fn(f32) -> f16 = f16::from_f32;
    let b: fn(f32) -> bf16 = bf16::from_f32;
    let hf: fn(f16) -> f32 = f16::to_f32;
    let bf: fn(bf16) -> f32 = bf16::to_f32;
    let same: fn(f32) -> f32 = |v| v;
    half_gemv::<f16, f32, f32>(gpu, (h, same, same, same))
        + half_gemv::<f16, f32, f16>(gpu, (h, same, h, hf))
        + half_gemv::<f16, f16, f32>(gpu, (h, h, same, same))
        + half_gemv::<f16, f16, f16>(gpu, (h, h, h, hf))
        + half_gemv::<bf16, f32, f32>(gpu, (b, same, same, same))
        + half_gemv::<bf16, f32, bf16>(gpu, (b, same, b, bf))
        + half_gemv::<bf16, bf16, f32>(gpu, (b, b, same, same))
        + half_gemv::<bf16, bf16, bf16>(gpu, (b, b, b, bf))
}

#[test]
fn every_kernel_once() {
    let handle = match gpu("every_kernel_once") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sweep");
    let runs = ladder(gpu, &mut rng)
        + typed_all(gpu, &mut rng)
        + arg_all(gpu, &mut rng)
        + sgemv_all(gpu, &mut rng)
        + axis_all(gpu, &mut rng)
        + axis_arg_all(gpu, &mut rng)
        + half_gemv_all(gpu);
    let kernels = cudakernels::SGEMV_KERNELS.len() + cudakernels::GEMV_KERNELS.len();
    assert!(runs >= 2 * LadderKernel::ALL.len() * FINISHES.len() + kernels);
}
