//! A cudarc application that calls cudakernels through cudakernels-cudarc: its own context,
//! stream, buffers and kernel, and the library's sums, argmaxes and gemvs on its stream, each
//! enqueued right after the copy or kernel that fills its input (no synchronization between),
//! each checked against an f64 CPU reference. Exits 1 with one line where there is no CUDA
//! device, 2 where a result is wrong.
use cudakernels_cudarc::{cudakernels, Error, Kernels, SgemvBatch, SgemvOptions};
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use half::bf16;
use std::sync::Arc;

/// The application's kernel: x[i] *= 2.
const DOUBLE_PTX: &str = include_str!("double.ptx");

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => std::process::exit(2),
        Err(Error::Kernels(cudakernels::Error::NoDevice)) => {
            eprintln!("error: no CUDA device was found (this program needs an NVIDIA GPU and driver)");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("error: {}", e);
            std::process::exit(1);
        }
    }
}

/// A 64-bit linear congruential generator (Knuth's MMIX constants); its high 32 bits.
struct Lcg(u64);

impl Lcg {
    fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 32) as u32
    }

    /// Uniform in [-1, 1), 24 random bits (exact in f32).
    fn uniform(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 / (1 << 23) as f32 - 1.0
    }

    /// k/16 for k uniform in -16..16: values whose f32 sums are exact (see `exact_sum`).
    fn sixteenths(&mut self) -> f32 {
        ((self.next_u32() >> 27) as i32 - 16) as f32 / 16.0
    }
}

/// Prints one check's line; `true` where it passed.
fn check(what: &str, got: impl std::fmt::Display, want: impl std::fmt::Display, ok: bool) -> bool {
    println!("{:<36} gpu {:>22}  cpu {:>22}  {}", what, got, want, if ok { "ok" } else { "WRONG" });
    ok
}

/// The f64 sum of `values`, each a multiple of `quantum` of at most `max_abs`, and the f32
/// tolerance of the GPU's: 0, as every partial sum in any order is a multiple of `quantum` of
/// at most n·max_abs, which f32's 24-bit significand holds exactly while n·max_abs/quantum ≤
/// 2^24 (asserted for this length).
fn exact_sum(values: impl ExactSizeIterator<Item = f64>, max_abs: f64, quantum: f64) -> (f64, f64) {
    let n = values.len() as f64;
    assert!(n * max_abs / quantum <= (1u64 << 24) as f64, "too long for an exact f32 sum");
    (values.sum(), 0.0)
}

/// Rows of `y` within the dot product bound of `a · x`: any order of n products and sums errs
/// at most n·ε·Σ|a_j x_j|.
fn rows_ok(y: &[f32], a: &[f64], x: &[f64], n: usize) -> usize {
    let eps = f32::EPSILON as f64;
    let row_ok = |(r, &got): (usize, &f32)| {
        let products = a[r * n..(r + 1) * n].iter().zip(x).map(|(p, q)| p * q);
        let (want, bound) = products.fold((0.0, 0.0), |(s, b), p| (s + p, b + p.abs()));
        (got as f64 - want).abs() <= n as f64 * eps * bound
    };
    y.iter().enumerate().filter(|&r| row_ok(r)).count()
}

/// The first index of the largest value (ties to the smallest index).
fn first_max<T: PartialOrd + Copy>(v: &[T]) -> (T, usize) {
    let mut best = (v[0], 0);
    for (i, &x) in v.iter().enumerate().skip(1) {
        if x > best.0 {
            best = (x, i);
        }
    }
    best
}

/// Enqueues the application's kernel doubling `x` on `stream`.
fn double(stream: &Arc<CudaStream>, kernel: &CudaFunction, x: &mut CudaSlice<f32>) -> Result<(), Error> {
    let n = x.len() as u64;
    let mut launch = stream.launch_builder(kernel);
    launch.arg(x).arg(&n);
    // SAFETY: `double_f32` takes (x: *mut f32, n: u64) and touches x[..n] only; `x` holds n f32s.
    unsafe { launch.launch(LaunchConfig::for_num_elems(n as u32)) }?;
    Ok(())
}

fn run() -> Result<bool, Error> {
    // The library first: `Error::NoDevice` without a GPU, before cudarc loads libcuda (its loader
    // panics where it cannot).
    let gpu = cudakernels::open()?;
    println!("{} (compute capability {:?}), kernels: {:?}", gpu.name(), gpu.compute_capability(), gpu.image());
    let ctx = CudaContext::new(0)?;
    let kernels = Kernels::with_gpu(&ctx, gpu)?;
    let stream = ctx.new_stream()?;
    let kernel = ctx.load_module(Ptx::from_src(DOUBLE_PTX))?.load_function("double_f32")?;
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    println!("seed {}", seed);
    let mut rng = Lcg(seed);
    let n = 1_000_003;

    // i32 sum: accumulated in i64, exact.
    let ints: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
    let d_ints = stream.clone_htod(&ints)?;
    let got = kernels.sum(&stream, &d_ints)?;
    let want: i64 = ints.iter().map(|&v| v as i64).sum();
    let mut ok = check("sum i32", got, want, got == want);

    // f32 sum of values the application's kernel doubled on the stream just before.
    let x: Vec<f32> = (0..n).map(|_| rng.sixteenths()).collect();
    let mut d_x = stream.clone_htod(&x)?;
    double(&stream, &kernel, &mut d_x)?;
    let got = kernels.sum(&stream, &d_x)?;
    let (want, tol) = exact_sum(x.iter().map(|&v| 2.0 * v as f64), 2.0, 1.0 / 8.0);
    ok &= check("sum f32 after own kernel", got, want, (got as f64 - want).abs() <= tol);

    // The same into a poisoned device word.
    let mut d_sum = stream.clone_htod(&[f32::NAN])?;
    kernels.sum_into(&stream, &d_x, &mut d_sum)?;
    let got = stream.clone_dtoh(&d_sum)?[0];
    ok &= check("sum_into f32", got, want, (got as f64 - want).abs() <= tol);

    // Written on another stream of the application (64 MiB, four kernels still running when the
    // library's call is enqueued): cudarc's write event orders the sum after them. Values
    // {-1, 0, 1}/16, doubled four times.
    let far: Vec<f32> = (0..1 << 24).map(|_| (rng.next_u32() % 3) as f32 / 16.0 - 1.0 / 16.0).collect();
    let (want, tol) = exact_sum(far.iter().map(|&v| 16.0 * v as f64), 1.0, 1.0);
    let other = ctx.new_stream()?;
    let mut d_far = other.clone_htod(&far)?;
    for _ in 0..4 {
        double(&other, &kernel, &mut d_far)?;
    }
    let got = kernels.sum(&stream, &d_far)?;
    ok &= check("sum f32 written on another stream", got, want, (got as f64 - want).abs() <= tol);
    // Into a word the other stream reads back at once: its read waits for the library's write.
    let mut d_far_sum = other.clone_htod(&[f32::NAN])?;
    kernels.sum_into(&stream, &d_far, &mut d_far_sum)?;
    drop(d_far); // freed on `other` after the sum's read event
    let got = other.clone_dtoh(&d_far_sum)?[0];
    ok &= check("sum_into f32 read on another stream", got, want, (got as f64 - want).abs() <= tol);

    // bf16 sum, accumulated in f32.
    let h: Vec<bf16> = (0..n).map(|_| bf16::from_f32(rng.sixteenths())).collect();
    let d_h = stream.clone_htod(&h)?;
    let got = kernels.sum(&stream, &d_h)?;
    let (want, tol) = exact_sum(h.iter().map(|v| v.to_f64()), 1.0, 1.0 / 16.0);
    ok &= check("sum bf16", got, want, (got as f64 - want).abs() <= tol);

    // argmax of f32 from a view five elements in: value and first index, exact.
    let u: Vec<f32> = (0..n).map(|_| rng.uniform()).collect();
    let d_u = stream.clone_htod(&u)?;
    let got = kernels.argmax(&stream, &d_u.slice(5..))?;
    let (value, index) = first_max(&u[5..]);
    let same = got.value.to_bits() == value.to_bits() && got.index == index as u64;
    ok &= check("argmax f32 (view)", format!("{}@{}", got.value, got.index), format!("{}@{}", value, index), same);

    // argmax of bf16 (many ties: the first wins) into poisoned device words.
    let b: Vec<bf16> = (0..n).map(|_| bf16::from_f32(rng.uniform())).collect();
    let d_b = stream.clone_htod(&b)?;
    let (mut d_value, mut d_index) = (stream.clone_htod(&[bf16::NAN])?, stream.clone_htod(&[u64::MAX])?);
    kernels.argmax_into(&stream, &d_b, &mut d_value, &mut d_index)?;
    let (got_value, got_index) = (stream.clone_dtoh(&d_value)?[0], stream.clone_dtoh(&d_index)?[0]);
    let (value, index) = first_max(&b);
    let same = got_value.to_bits() == value.to_bits() && got_index == index as u64;
    ok &= check("argmax_into bf16", format!("{}@{}", got_value, got_index), format!("{}@{}", value, index), same);

    // y = A v, f32, 1000 × 300, y poisoned.
    let (m, k) = (1000, 300);
    let (a, v): (Vec<f32>, Vec<f32>) =
        ((0..m * k).map(|_| rng.uniform()).collect(), (0..k).map(|_| rng.uniform()).collect());
    let (d_a, d_v) = (stream.clone_htod(&a)?, stream.clone_htod(&v)?);
    let mut d_y = stream.clone_htod(&vec![f32::NAN; m])?;
    kernels.sgemv(&stream, m, k, &d_a, &d_v, &mut d_y, SgemvOptions::default())?;
    let y = stream.clone_dtoh(&d_y)?;
    let wide = |s: &[f32]| s.iter().map(|&p| p as f64).collect::<Vec<_>>();
    let good = rows_ok(&y, &wide(&a), &wide(&v), k);
    ok &= check("sgemv f32 1000x300 (rows ok)", good, m, good == m);

    // y = A v with A in bf16, v and y in f32: a decoding step's 512 × 4096, y poisoned.
    let (m, k) = (512, 4096);
    let a: Vec<bf16> = (0..m * k).map(|_| bf16::from_f32(rng.uniform())).collect();
    let v: Vec<f32> = (0..k).map(|_| rng.uniform()).collect();
    let (d_a, d_v) = (stream.clone_htod(&a)?, stream.clone_htod(&v)?);
    let mut d_y = stream.clone_htod(&vec![f32::NAN; m])?;
    kernels.gemv(&stream, m, k, &d_a, &d_v, &mut d_y, SgemvBatch::ONE, SgemvOptions::default())?;
    let y = stream.clone_dtoh(&d_y)?;
    let a: Vec<f64> = a.iter().map(|p| p.to_f64()).collect();
    let good = rows_ok(&y, &a, &wide(&v), k);
    ok &= check("gemv bf16 x f32 512x4096 (rows ok)", good, m, good == m);

    println!("{}", if ok { "all results match the CPU" } else { "SOME RESULTS ARE WRONG" });
    Ok(ok)
}
